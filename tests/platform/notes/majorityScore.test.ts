import { describe, expect, it } from 'vitest';
import { majorityScore } from '../../../platform/notes/majorityScore.ts';
import { STATUS } from '../../../platform/notes/noteStatus.ts';
import { columns, twoSides } from './ratings.ts';

describe('majorityScore', () => {
  it('shows a note whose mean rating reaches the threshold, with at least 5 ratings', () => {
    const r = columns([
      ...[1, 1, 1, 0.5, 0].map((v, u): [number, number, number] => [u, 0, v]), // mean 0.7: shown
      ...[1, 1, 0.5, 0.5, 0].map((v, u): [number, number, number] => [u, 1, v]), // mean 0.6: needs more
      ...[0, 0, 0.5, 0, 1].map((v, u): [number, number, number] => [u, 2, v]), // mean 0.3: not helpful
      ...[1, 1, 1, 1].map((v, u): [number, number, number] => [u, 3, v]), // 4 ratings: needs more
    ]);
    const res = majorityScore(r, 5);
    expect(Array.from(res.status)).toEqual([STATUS.helpful, STATUS.needsMoreRatings, STATUS.notHelpful, STATUS.needsMoreRatings, STATUS.needsMoreRatings]);
    expect(res.share[0]).toBeCloseTo(0.7, 6);
    expect(res.share[4]).toBeNaN();
    expect(majorityScore(r, 5, 0.6).status[1]).toBe(STATUS.helpful);
  });

  it('shows the note one side likes, which the bridging score does not', () => {
    expect(majorityScore(twoSides(), 11).status[8]).toBe(STATUS.helpful);
  });

  it('refuses a threshold at or below one half', () => {
    expect(() => majorityScore(twoSides(), 11, 0.5)).toThrow(/majority threshold 0.5/);
  });
});
