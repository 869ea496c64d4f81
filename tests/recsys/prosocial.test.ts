/** The feed kernel's prosocial terms (recsys/prosocial.ts) on hand-computed cases. */
import { describe, expect, it } from 'vitest';
import { markDominant, outPartisan, scaleScore } from '../../recsys/prosocial.ts';
import { socialConfig } from '../../platform/state.ts';

describe('prosocial feed terms', () => {
  it('scaleScore raises a score for m above 1 and lowers it below 1, whatever its sign, rounded to float32', () => {
    expect(scaleScore(3, 2)).toBe(6);
    expect(scaleScore(-3, 2)).toBe(-1.5);
    expect(scaleScore(3, 0.5)).toBe(1.5);
    expect(scaleScore(-3, 0.5)).toBe(-6);
    expect(scaleScore(0.1, 3)).toBe(Math.fround(0.1 * 3));
    expect(scaleScore(5, 0)).toBe(0);
    expect(scaleScore(-5, 0)).toBe(-Infinity);
  });

  it('a post is out-partisan when its stance and the reader\'s opinion are on different sides of 0', () => {
    expect(outPartisan(-0.2, 0.3)).toBe(true);
    expect(outPartisan(0.2, -0.3)).toBe(true);
    expect(outPartisan(0.2, 0.3)).toBe(false);
    expect(outPartisan(-0.2, -0.3)).toBe(false);
    // 0 (and -0) count with the right side.
    expect(outPartisan(0, 0.3)).toBe(false);
    expect(outPartisan(-0, -0.3)).toBe(true);
  });

  it('markDominant takes ceil(share x n) accounts by follower count, ties to the lower id', () => {
    const followers = Int32Array.of(5, 9, 0, 9, 7, 7, 7, 1, 0, 3);
    const mask = new Uint8Array(10).fill(9);
    // Top 10%: one account; of the two with 9, the lower id.
    expect(markDominant(followers, 0.1, mask)).toBe(1);
    expect([...mask]).toEqual([0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
    // Top 30%: both 9s and the first 7.
    expect(markDominant(followers, 0.3, mask)).toBe(3);
    expect([...mask]).toEqual([0, 1, 0, 1, 1, 0, 0, 0, 0, 0]);
    // 0.25 of 10 is 2.5: three accounts.
    expect(markDominant(followers, 0.25, mask)).toBe(3);
    // Everyone, zeros included.
    expect(markDominant(followers, 1, mask)).toBe(10);
    expect(mask.every((x) => x === 1)).toBe(true);
    expect(markDominant(new Int32Array(4), 0.5, mask.subarray(0, 4))).toBe(2);
    expect([...mask.subarray(0, 4)]).toEqual([1, 1, 0, 0]);
  });

  it('the options are off by default and refuse values out of range, naming the field', () => {
    const c = socialConfig.parse({});
    expect([c.counts, c.outPartisan, c.dominant]).toEqual(['shown', 1, { share: 0.1, factor: 1 }]);
    const bad = (p: object) => socialConfig.safeParse(p).error?.issues.map((i) => i.path.join('.'));
    expect(bad({ counts: 'off' })).toEqual(['counts']);
    expect(bad({ outPartisan: 0 })).toEqual(['outPartisan']);
    expect(bad({ dominant: { factor: 1.5 } })).toEqual(['dominant.factor']);
    expect(bad({ dominant: { share: 0 } })).toEqual(['dominant.share']);
    expect(bad({ dominant: { top: 3 } })).toEqual(['dominant']);
  });
});
