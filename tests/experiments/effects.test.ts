/** The experiment statistics on cases computed by hand (see the comments for the arithmetic). */
import { describe, expect, it } from 'vitest';
import { pairedInterval, tCritical, tInterval, welchInterval } from '../../runner/experiment/effects.ts';

describe('experiment statistics', () => {
  it('t interval of 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.302653, half-width 4.302653 / sqrt(3) = 2.48414', () => {
    expect(tCritical(2)).toBeCloseTo(4.302653, 6);
    const r = tInterval([1, 2, 3]);
    expect(r.n).toBe(3);
    expect(r.mean).toBe(2);
    expect(r.low).toBeCloseTo(2 - 2.48414, 4);
    expect(r.high).toBeCloseTo(2 + 2.48414, 4);
  });

  it('leaves out values that are not finite, and has no interval below two values', () => {
    const r = tInterval([1, NaN, 2, Infinity, 3]);
    expect([r.n, r.mean]).toEqual([3, 2]);
    expect(r.high).toBeCloseTo(4.48414, 4);
    const one = tInterval([5, NaN]);
    expect(one.n).toBe(1);
    expect(one.mean).toBe(5);
    expect(one.low).toBeNaN();
    expect(tInterval([]).mean).toBeNaN();
    // No spread: the interval is the point (not NaN).
    expect(tInterval([4, 4, 4])).toEqual({ n: 3, mean: 4, low: 4, high: 4 });
  });

  // Reference b = 1, 5, 9 and arm a = 2, 6.2, 9.8 over seeds 1..3: the seeds differ a lot, the arm
  // adds about 1 to each. Paired differences 1, 1.2, 0.8: mean 1, s = 0.2, se = 0.2 / sqrt(3) =
  // 0.115470, half-width 4.302653 x 0.115470 = 0.496828. Unpaired: var(a) = (16 + 0.04 + 14.44) / 2
  // = 15.24, var(b) = 32 / 2 = 16; se^2 = 15.24/3 + 16/3 = 10.413333, se = 3.226970; Welch df =
  // 10.413333^2 / ((5.08^2 + 5.333333^2) / 2) = 108.437511 / 27.125444 = 3.997629, t = 2.776862
  // (between t(4) = 2.776445 and t(3) = 3.182446), half-width 8.960...
  const a = new Map([[1, 2], [2, 6.2], [3, 9.8]]);
  const b = new Map([[1, 1], [2, 5], [3, 9]]);

  it('paired difference: the t interval of per-seed differences', () => {
    const p = pairedInterval(a, b);
    expect(p.n).toBe(3);
    expect(p.mean).toBeCloseTo(1, 12);
    expect(p.low).toBeCloseTo(1 - 0.496828, 5);
    expect(p.high).toBeCloseTo(1 + 0.496828, 5);
  });

  it('Welch interval of the same difference is far wider (what common random numbers save)', () => {
    const w = welchInterval([...a.values()], [...b.values()]);
    expect(w.mean).toBeCloseTo(1, 12);
    const half = (w.high - w.low) / 2;
    expect(tCritical(3.997629)).toBeGreaterThan(2.776445);
    expect(tCritical(3.997629)).toBeLessThan(3.182446);
    expect(half).toBeCloseTo(tCritical(3.997629) * 3.226970, 4);
    expect(half).toBeGreaterThan(8.95);
    expect(half).toBeLessThan(8.97);
    const p = pairedInterval(a, b);
    expect(half / ((p.high - p.low) / 2)).toBeGreaterThan(15);
  });

  it('pairs only seeds present in both with finite values', () => {
    const p = pairedInterval(new Map([[1, 2], [2, NaN], [3, 9.8], [4, 7]]), new Map([[1, 1], [2, 5], [3, 9]]));
    // Seeds 1 and 3: differences 1 and 0.8 -> mean 0.9, s = 0.141421, se = 0.1, t(0.975, 1) = 12.7062.
    expect(p.n).toBe(2);
    expect(p.mean).toBeCloseTo(0.9, 12);
    expect(p.high - p.mean).toBeCloseTo(1.270620, 5);
  });
});
