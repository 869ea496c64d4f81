/** The bridging ranker: the smaller side's smoothed approval x recency, on hand-computed posts. */
import { describe, expect, it } from 'vitest';
import { bridging, bridgingApproval, sideApproval } from '../../../recsys/rankers/bridging.ts';
import { recencyFactor, RECENCY_CODE } from '../../../recsys/rankers/xInterest.ts';
import { expectDeclared } from './shape.ts';

const EXP = RECENCY_CODE.exp;

describe('bridging', () => {
  it('is declared with a WGSL list key and a CPU base score that reads the per-side counts', () => {
    expectDeclared(bridging, { base: false, listKey: true });
    expect(bridging.bySide).toBe(true);
    expect(bridging.feed).toBe('interest');
  });

  it("a side's approval is (likes + 1) / (likes + dislikes + 2); the post's, the smaller side's", () => {
    expect(sideApproval(0, 0)).toBe(0.5);
    expect(sideApproval(3, 1)).toBe(4 / 6);
    // 4 likes from the left, 2 from the right, one dislike from the right: min(5/6, 3/5).
    expect(bridgingApproval(6, 1, 4, 0)).toBe(3 / 5);
    expect(bridgingApproval(6, 1, 2, 1)).toBe(3 / 5);
  });

  it('orders a post liked by both sides above one liked more, by one side only', () => {
    // Row 0: 2 likes from each side. Row 1: 10 likes, all from the left. Row 2: no votes.
    // Row 3: like row 0, an hour older. Row 4: 2 likes from the left, 1 dislike from the right.
    const cols = {
      rank: [1, 1, 1, 1, 1],
      step: [10, 10, 10, 9, 10],
      author: [0, 0, 0, 0, 0],
      likes: [4, 10, 0, 4, 2],
      dislikes: [0, 0, 0, 0, 1],
      likes_left: [2, 10, 0, 2, 2],
      dislikes_left: [0, 0, 0, 0, 0],
      treat_vote: [0, 0, 0, 0, 0],
    };
    const o = { ranker: 4, step: 12, stepSeconds: 3600, tauHours: 6, recency: EXP, followers: new Int32Array(1), recencyMemo: { step: NaN, value: 0 } };
    const scores = [0, 1, 2, 3, 4].map((r) => bridging.baseScore(cols, r, r, o));
    const r2 = recencyFactor(2, EXP, 6);
    // Both sides 3/4; the left-only post's right side has not voted: 1/2 (and 11/12 on the left).
    expect(scores[0]).toBe(r2 * 0.75);
    expect(scores[1]).toBe(r2 * 0.5);
    expect(scores[2]).toBe(r2 * 0.5);
    expect(scores[3]).toBe(recencyFactor(3, EXP, 6) * 0.75);
    // The right side's one dislike: 1/3.
    expect(scores[4]).toBe(r2 * (1 / 3));
    const order = [0, 1, 2, 3, 4].sort((a, b) => scores[b] - scores[a] || b - a);
    expect(order).toEqual([0, 3, 2, 1, 4]);
    // The list score is the base score (the rank multiplier is already in it).
    expect(bridging.listScore(0.3, 0, 1, 9, 7)).toBe(0.3);
  });
});
