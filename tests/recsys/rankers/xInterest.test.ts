/** The x-interest ranker: recency x follower factor x interest cosine; lists by base x (1 + likes). */
import { describe, expect, it } from 'vitest';
import { MAX_DOT, RECENCY_CODE, followerFactor, recencyFactor, xInterest, xInterestBase, xInterestListScore, xInterestScore } from '../../../recsys/rankers/xInterest.ts';
import { TOPIC_SCALE } from '../../../recsys/recommender.ts';
import { expectDeclared } from './shape.ts';

const EXP = RECENCY_CODE.exp;
const OASIS = RECENCY_CODE.oasis;

describe('x-interest', () => {
  it('is declared with a WGSL base score and list key and the interest feed term', () => {
    expectDeclared(xInterest, { base: true, listKey: true });
    expect(xInterest.feed).toBe('interest');
  });

  it('recency: exp(-age/tau), or ln((271.8 - age)/100) clipped at 0 and never NaN', () => {
    expect(recencyFactor(0, EXP, 6)).toBe(1);
    expect(recencyFactor(6, EXP, 6)).toBeCloseTo(Math.exp(-1), 12);
    expect(recencyFactor(12, EXP, 6)).toBeCloseTo(0.1353352832, 10);
    expect(recencyFactor(0, OASIS, 6)).toBeCloseTo(0.9998963157, 10); // ln 2.718
    expect(recencyFactor(100, OASIS, 6)).toBeCloseTo(0.5411608236, 10); // ln 1.718
    expect(recencyFactor(171.8, OASIS, 6)).toBeCloseTo(0, 12);
    expect(recencyFactor(200, OASIS, 6)).toBe(0);
    expect(recencyFactor(300, OASIS, 6)).toBe(0);
  });

  it('follower factor: max(1, log_1000(followers + 1))', () => {
    expect(followerFactor(0)).toBe(1);
    expect(followerFactor(30)).toBe(1);
    expect(followerFactor(999)).toBeCloseTo(1, 12);
    expect(followerFactor(999_999)).toBeCloseTo(2, 12);
    expect(followerFactor(999_999_999)).toBeCloseTo(3, 12);
  });

  it('score: R x F x cosine; the candidate lists multiply the base by 1 + likes', () => {
    expect(xInterestBase(6, 999_999, EXP, 6)).toBeCloseTo(2 * Math.exp(-1), 12);
    expect(xInterestBase(0, 0, OASIS, 6)).toBeCloseTo(0.9998963157, 10);
    // The feed's score: base x the int8 dot product (TOPIC_SCALE^2 x the cosine), rounded once to float32.
    expect(xInterestScore(2, 0.5)).toBe(1);
    expect(xInterestScore(0.1, 3)).toBe(Math.fround(0.1 * 3));
    expect(xInterestScore(0.1, 3)).not.toBe(0.1 * 3);
    expect(MAX_DOT).toBe(TOPIC_SCALE * TOPIC_SCALE);
    expect(xInterestListScore(2, 0)).toBe(2);
    expect(xInterestListScore(2, 3)).toBe(8);
    expect(xInterest.listScore(2, 0, 1, 3, 9)).toBe(8);
  });

  it('a row scores R(age at the current step) x F(its author), with R memoised per creation step', () => {
    const cols = { rank: [1, 1], step: [4, 4], author: [0, 1], likes: [0, 0], dislikes: [0, 0], likes_left: [0, 0], dislikes_left: [0, 0], treat_vote: [0, 0] };
    const memo = { step: NaN, value: 0 };
    const o = { ranker: 3, step: 10, stepSeconds: 3600, tauHours: 6, recency: EXP, followers: Int32Array.of(0, 999_999), recencyMemo: memo };
    expect(xInterest.baseScore(cols, 0, 0, o)).toBe(recencyFactor(6, EXP, 6));
    expect(memo).toEqual({ step: 4, value: recencyFactor(6, EXP, 6) });
    expect(xInterest.baseScore(cols, 1, 1, o)).toBe(recencyFactor(6, EXP, 6) * followerFactor(999_999));
  });
});
