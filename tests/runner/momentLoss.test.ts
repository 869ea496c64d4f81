/**
 * The moment loss and its weights on a hand-computed case: two moments, one with a published 95%
 * interval (sigma = width / 3.92), one with a standard error; L = (1/K) sum w (s - t)^2.
 */
import { describe, expect, it } from 'vitest';
import { contributions, formatMomentFits, momentFits, momentLoss, objective } from '../../runner/calibrate/momentLoss.ts';
import { sigmaOf, weightOf, type Moment } from '../../runner/calibrate/momentsFile.ts';

const source = { paper: 'a paper', where: 'Table 1' };
const A: Moment = { id: 'a', kind: 'summary', metric: 'infectious', step: 10, value: 10, interval: [8, 12], source };
const B: Moment = { id: 'b', kind: 'pattern', pattern: 'never_reshared', value: 0.5, se: 0.1, source };

describe('moment weights', () => {
  it('take sigma from the 95% interval as (hi - lo) / (2 x 1.96), or the standard error as given', () => {
    expect(sigmaOf(A)).toBeCloseTo(4 / 3.92, 12);
    expect(weightOf(A)).toBeCloseTo(0.9604, 12);
    expect(sigmaOf(B)).toBe(0.1);
    expect(weightOf(B)).toBeCloseTo(100, 9);
  });
});

describe('moment loss', () => {
  it('is the mean over moments of w (s - t)^2, each moment contributing its share', () => {
    // a: 0.9604 x (11 - 10)^2 / 2 = 0.4802; b: 100 x (0.7 - 0.5)^2 / 2 = 2
    const c = contributions([11, 0.7], [A, B]);
    expect(c[0]).toBeCloseTo(0.4802, 12);
    expect(c[1]).toBeCloseTo(2, 9);
    expect(momentLoss([11, 0.7], [A, B])).toBeCloseTo(2.4802, 9);
    expect(momentLoss([10, 0.5], [A, B])).toBe(0);
  });

  it('is infinite when a moment has no finite simulated value', () => {
    expect(momentLoss([NaN, 0.5], [A, B])).toBe(Infinity);
  });

  it('adds the series NRMSE squared times its weight; a series alone is its NRMSE', () => {
    expect(objective({ moments: 2.4802, nrmse: 0.1, seriesWeight: 2 })).toBeCloseTo(2.5002, 12);
    expect(objective({ moments: 2.4802, seriesWeight: 2 })).toBe(2.4802);
    expect(objective({ nrmse: 0.1, seriesWeight: 2 })).toBe(0.1);
  });

  it('records each moment with its mean and t interval over seeds, target, weight and contribution', () => {
    // a over three seeds: 10, 11, 12 -> mean 11, sd 1, t(0.975, 2) = 4.303 -> 11 +- 4.303 / sqrt(3)
    const [a, b] = momentFits([A, B], [[10, 11, 12], [0.7, 0.7, 0.7]]);
    expect(a.value).toBe(11);
    expect(a.n).toBe(3);
    expect(a.ci[0]).toBeCloseTo(11 - 4.302653 / Math.sqrt(3), 5);
    expect(a.target_ci).toEqual([8, 12]);
    expect(a.contribution).toBeCloseTo(0.4802, 12);
    expect(b.ci[0]).toBeCloseTo(0.7, 12);
    expect(b.ci[1]).toBeCloseTo(0.7, 12);
    expect(b.target_ci[0]).toBeCloseTo(0.5 - 0.196, 12);
    expect(b.weight).toBeCloseTo(100, 9);
    expect(formatMomentFits([a, b])).toMatch(/^moment +kind +simulated.*\na +summary +11 +\[/);
  });
});
