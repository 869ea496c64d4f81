/** The chronological ranker: the id is the score, in the records and in the lists (multiplier applied). */
import { describe, expect, it } from 'vitest';
import { chronological, chronologicalScore } from '../../../recsys/rankers/chronological.ts';
import { expectDeclared } from './shape.ts';

const cols = { rank: [1], step: [0], author: [0], likes: [0], dislikes: [0], likes_left: [0], dislikes_left: [0], treat_vote: [0] };
const o = { ranker: 0, step: 0, stepSeconds: 3600, tauHours: 6, recency: 0, followers: new Int32Array(1) };

describe('chronological', () => {
  it('is declared with a WGSL base score and list key', () => expectDeclared(chronological, { base: true, listKey: true }));

  it('scores a post by its id; its list score is the exact id times the multiplier', () => {
    expect(chronologicalScore(123)).toBe(123);
    expect(chronological.baseScore(cols, 123, 0, o)).toBe(123);
    // Above 2^24 the float32 copy in a record ties neighbours; the list score keeps them apart.
    expect(chronological.listScore(Math.fround(2 ** 24 + 1), 2 ** 24 + 1, 1, 0, 9)).toBe(2 ** 24 + 1);
    expect(chronological.listScore(0, 40, 0.25, 0, 9)).toBe(10);
  });
});
