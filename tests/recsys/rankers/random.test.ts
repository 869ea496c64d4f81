/** The random ranker: a keyed hash per (user, post), candidates from the whole window. */
import { describe, expect, it } from 'vitest';
import { random, randomListScore, randomScore } from '../../../recsys/rankers/random.ts';
import { expectDeclared } from './shape.ts';

const cols = { rank: [0.5], step: [0], author: [0], likes: [3], dislikes: [0], likes_left: [0], dislikes_left: [0], treat_vote: [0] };
const o = { ranker: 1, step: 0, stepSeconds: 3600, tauHours: 6, recency: 0, followers: new Int32Array(1) };

describe('random', () => {
  it('is declared with a WGSL base score and list key, a hash feed term and window candidates', () => {
    expectDeclared(random, { base: true, listKey: true });
    expect(random.feed).toBe('hash');
    expect(random.outOfNetwork).toBe('window');
  });

  it('is a keyed hash in [1, 2^32], per user and per key; it has no base score', () => {
    const a = randomScore(7, 0, 5);
    expect(a).toBe(randomScore(7, 0, 5));
    expect(a).toBeGreaterThanOrEqual(1);
    expect(a).toBeLessThanOrEqual(2 ** 32);
    expect(randomScore(7, 1, 5)).not.toBe(a);
    expect(randomScore(8, 0, 5)).not.toBe(a);
    expect(randomListScore(7, 5)).toBe(randomListScore(7, 5));
    expect(randomListScore(7, 5)).not.toBe(randomListScore(8, 5));
    // The record holds the multiplier alone (recommender.ts rankedBase multiplies this 1 by it).
    expect(random.baseScore(cols, 0, 0, o)).toBe(1);
    expect(random.listScore(123, 5, 1, 3, 7)).toBe(randomListScore(7, 5));
    expect(random.listScore(123, 5, 0.5, 3, 7)).toBe(randomListScore(7, 5) * 0.5);
  });
});
