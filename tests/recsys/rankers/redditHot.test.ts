/** The reddit-hot ranker: the hot score of the displayed vote balance and the creation time. */
import { describe, expect, it } from 'vitest';
import { hotScore, redditHot } from '../../../recsys/rankers/redditHot.ts';
import { expectDeclared } from './shape.ts';

const o = { ranker: 2, step: 30, stepSeconds: 3600, tauHours: 6, recency: 0, followers: new Int32Array(1) };

describe('reddit-hot', () => {
  it('is declared with a WGSL list key but no WGSL base score (a base-10 logarithm)', () => expectDeclared(redditHot, { base: false, listKey: true }));

  it('sign(s) log10(max(|s|, 1)) + t / 45000 with s = likes - dislikes', () => {
    expect(hotScore(100, 0, 0)).toBeCloseTo(2, 12);
    expect(hotScore(0, 10, 36000)).toBeCloseTo(-1 + 0.8, 12);
    expect(hotScore(1, 1, 45000)).toBe(1);
    expect(hotScore(3, 2, 0)).toBe(0);
    // A tenfold vote lead is worth 45000 s = 12.5 h.
    expect(hotScore(1000, 0, 0) - hotScore(100, 0, 0)).toBeCloseTo(1, 12);
    expect(hotScore(1000, 0, 0)).toBeCloseTo(hotScore(100, 0, 12.5 * 3600), 12);
  });

  it("a treatment's artificial vote counts as one more up- or down-vote; lists use the base", () => {
    const cols = (tv: number) => ({ rank: [1], step: [10], author: [0], likes: [9], dislikes: [0], likes_left: [0], dislikes_left: [0], treat_vote: [tv] });
    expect(redditHot.baseScore(cols(0), 0, 0, o)).toBe(hotScore(9, 0, 36000));
    expect(redditHot.baseScore(cols(1), 0, 0, o)).toBe(hotScore(10, 0, 36000));
    expect(redditHot.baseScore(cols(-1), 0, 0, o)).toBe(hotScore(9, 1, 36000));
    expect(redditHot.listScore(1.5, 3, 1, 7, 9)).toBe(1.5);
  });
});
