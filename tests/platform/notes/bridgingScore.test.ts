import { describe, expect, it } from 'vitest';
import { BRIDGING, bridgingScore, noteStatuses } from '../../../platform/notes/bridgingScore.ts';
import { STATUS } from '../../../platform/notes/noteStatus.ts';
import { normal, uniform } from '../../../sim-core/rng.ts';
import { columns, twoSides } from './ratings.ts';

describe('bridgingScore', () => {
  it('shows a note rated helpful by both sides, not one rated helpful by one side; one rated unhelpful by both is Not Helpful', () => {
    const res = bridgingScore(twoSides(), 24, 11);
    expect(res.converged).toBe(true);
    expect(res.status[8]).toBe(STATUS.needsMoreRatings);
    expect(Math.abs(res.noteFactor[8])).toBeGreaterThan(BRIDGING.factorBound);
    expect(res.status[9]).toBe(STATUS.helpful);
    expect(res.noteIntercept[9]).toBeGreaterThanOrEqual(0.4);
    expect(Math.abs(res.noteFactor[9])).toBeLessThan(0.05);
    expect(res.status[10]).toBe(STATUS.notHelpful);
  });

  it('leaves a note with fewer than 5 ratings, and raters with fewer than 10, out', () => {
    const r = twoSides();
    const list: Array<[number, number, number]> = [];
    for (let k = 0; k < r.count; k++) list.push([r.rater[k], r.note[k], r.value[k]]);
    for (let u = 0; u < 4; u++) list.push([u, 11, 1], [u + 16, 11, 1]);
    list.push([24, 9, 0]);
    const res = bridgingScore(columns(list), 25, 12);
    expect(res.ratings[11]).toBe(8);
    expect(res.status[11]).toBe(STATUS.helpful);
    const four = bridgingScore(columns(list.filter(([u, n]) => n !== 11 || u < 2 || (u >= 16 && u < 18))), 25, 12);
    expect(four.ratings[11]).toBe(4);
    expect(four.status[11]).toBe(STATUS.needsMoreRatings);
    expect(four.noteIntercept[11]).toBe(0);
    // Rater 24 has one rating: it is not in the fit.
    expect(res.fitted).toBe(r.count + 8);
    expect(res.raterIntercept[24]).toBe(0);
  });

  it('recovers planted intercepts and factors', () => {
    const R = 400;
    const N = 200;
    const key = 99;
    const fu = Float64Array.from({ length: R }, (_, u) => (u % 2 ? 1 : -1) * (0.5 + 0.5 * uniform(key, u, 1)));
    const iu = Float64Array.from({ length: R }, (_, u) => 0.05 * normal(key, u, 2));
    const fn = Float64Array.from({ length: N }, (_, n) => 0.5 * normal(key, R + n, 3));
    const inn = Float64Array.from({ length: N }, (_, n) => 0.3 * normal(key, R + n, 4));
    const list: Array<[number, number, number]> = [];
    for (let n = 0; n < N; n++) {
      for (let u = 0; u < R; u++) {
        if (uniform(key, n * R + u, 5) >= 0.25) continue;
        list.push([u, n, 0.5 + iu[u] + inn[n] + fu[u] * fn[n] + 0.05 * normal(key, n * R + u, 6)]);
      }
    }
    // Planted values are not clipped to [0, 1] here: the model, not the rating scale, is under test.
    const r = columns(list);
    const res = bridgingScore(r.value.every((v) => v >= 0 && v <= 1) ? r : { ...r, value: r.value.map((v) => Math.min(1, Math.max(0, v))) }, R, N, { tolerance: 1e-6 });
    const corr = (a: Float64Array, b: Float64Array) => {
      let ab = 0, aa = 0, bb = 0;
      for (let k = 0; k < a.length; k++) (ab += a[k] * b[k]), (aa += a[k] * a[k]), (bb += b[k] * b[k]);
      return ab / Math.sqrt(aa * bb);
    };
    expect(res.converged).toBe(true);
    expect(corr(res.noteIntercept, inn)).toBeGreaterThan(0.9);
    expect(Math.abs(corr(res.noteFactor, fn))).toBeGreaterThan(0.9);
    expect(Math.abs(corr(res.raterFactor, fu))).toBeGreaterThan(0.9);
    expect(res.mu).toBeCloseTo(0.5, 1);
  });

  it('gives the same bytes twice, and other bytes under another key only within the tolerance', () => {
    const a = bridgingScore(twoSides(), 24, 11, { key: 7 });
    const b = bridgingScore(twoSides(), 24, 11, { key: 7 });
    for (const k of ['noteIntercept', 'noteFactor', 'raterIntercept', 'raterFactor'] as const) {
      expect(Buffer.from(a[k].buffer).equals(Buffer.from(b[k].buffer))).toBe(true);
    }
    expect(a.mu).toBe(b.mu);
    const c = bridgingScore(twoSides(), 24, 11, { key: 8 });
    expect(Array.from(c.status)).toEqual(Array.from(a.status));
  });

  it('reaches the same minimum from any key on sparse ratings', () => {
    // 4,000 raters on two sides, 2,000 notes with 25 ratings each: about 12 ratings a rater.
    const R = 4000;
    const list: Array<[number, number, number]> = [];
    for (let n = 0; n < 2000; n++) {
      for (let j = 0; j < 25; j++) {
        const u = Math.floor(uniform(5, n * 25 + j, 0) * R);
        const y = 0.5 + 0.3 * normal(5, n, 1) + ((u & 1) * 2 - 1) * 0.3 * normal(5, n, 2) + 0.2 * normal(5, n * 25 + j, 3);
        list.push([u, n, y > 0.75 ? 1 : y > 0.25 ? 0.5 : 0]);
      }
    }
    const fits = [1, 2, 3].map((key) => bridgingScore(columns(list), R, 2000, { key }));
    for (const f of fits.slice(1)) {
      expect(f.loss).toBeCloseTo(fits[0].loss, 3);
      expect(Array.from(f.status)).toEqual(Array.from(fits[0].status));
    }
  });

  it('applies the published status rule, with the Helpful inertia', () => {
    const ratings = Int32Array.of(5, 5, 5, 5, 5, 4);
    const i = Float64Array.of(0.4, 0.45, 0.395, -0.06, -0.3, 0.9);
    const f = Float64Array.of(0.1, 0.5, 0, 0, 0.3, 0);
    expect(Array.from(noteStatuses(i, f, ratings))).toEqual([STATUS.helpful, STATUS.needsMoreRatings, STATUS.needsMoreRatings, STATUS.notHelpful, STATUS.notHelpful, STATUS.needsMoreRatings]);
    // -0.3 < -0.05 - 0.8 x 0.3 = -0.29; a note that was Helpful keeps it down to 0.39.
    const previous = Uint8Array.of(0, 0, STATUS.helpful, 0, 0, 0);
    expect(noteStatuses(i, f, ratings, { previous })[2]).toBe(STATUS.helpful);
  });
});
