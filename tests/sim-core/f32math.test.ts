/**
 * The float32 exp2, exp, log2, pow, sqrt, cos and normal draw of sim-core/f32math.ts: their accuracy against the exact
 * functions (Math's, in float64), and their special cases. tests/sim-core/gpu/softmath.test.ts
 * checks that the GPU twin gives the same bits.
 */
import { describe, expect, it } from 'vitest';
import { exp2f32, expf32, log2f32, normalPairFromHashes32, powf32, sinCosTurns32, sqrtf32 } from '../../sim-core/f32math.ts';
import { hash } from '../../sim-core/rng.ts';

const f = Math.fround;
/** Largest relative error of fn32 against exact over xs. */
function worst(xs: number[], fn32: (x: number) => number, exact: (x: number) => number): number {
  let w = 0;
  for (const x of xs) {
    const want = exact(x);
    if (want < 2 ** -126) continue;
    w = Math.max(w, Math.abs(fn32(x) - want) / want);
  }
  return w;
}
const spread = (n: number, lo: number, hi: number, seed: number) => Array.from({ length: n }, (_, i) => f(lo + ((hi - lo) * hash(seed, i)) / 2 ** 32));

describe('float32 math', () => {
  it('exp2 and log2 are within 1.5e-7 relative over their ranges; exp within 1.5e-7 + |x| 1.2e-7', () => {
    expect(worst(spread(50_000, -125.9, 127.9, 1), exp2f32, (x) => 2 ** x)).toBeLessThan(1.5e-7);
    expect(worst(spread(50_000, -1, 1, 2), exp2f32, (x) => 2 ** x)).toBeLessThan(1.5e-7);
    const xs = spread(2000, -80, 80, 3);
    for (const x of xs) expect(Math.abs(expf32(x) - Math.exp(x)) / Math.exp(x)).toBeLessThan(1.5e-7 + Math.abs(x) * 1.2e-7);
    // log2 near 1 (absolute error: the value passes 0) and over the whole positive range.
    for (const x of spread(50_000, 0.5, 2, 4)) expect(Math.abs(log2f32(x) - Math.log2(x))).toBeLessThan(1.2e-7 * Math.max(1, Math.abs(Math.log2(x))));
    const wide = Array.from({ length: 50_000 }, (_, i) => f(2 ** ((hash(5, i) / 2 ** 32) * 250 - 125)));
    for (const x of wide) expect(Math.abs(log2f32(x) - Math.log2(x))).toBeLessThan(1.5e-7 * Math.max(1, Math.abs(Math.log2(x))));
  });

  it('pow is exp2(b log2 a): attention decay and post-rate exponents to 1e-6', () => {
    for (const a of spread(2000, 0.01, 48, 6)) for (const b of [0.25, 0.5, 1, 1.3, 2]) expect(Math.abs(powf32(a, b) - Math.pow(f(a), f(b))) / Math.pow(f(a), f(b))).toBeLessThan(2e-6);
  });

  it('special cases', () => {
    expect(exp2f32(0)).toBe(1);
    expect(exp2f32(1)).toBe(2);
    expect(exp2f32(-1)).toBe(0.5);
    expect(exp2f32(10)).toBe(1024);
    expect(exp2f32(128)).toBe(Infinity);
    expect(exp2f32(127.5)).toBeGreaterThan(2 ** 127);
    expect(exp2f32(127.5)).toBeLessThan(Infinity);
    expect(exp2f32(-126.5)).toBe(0);
    expect(exp2f32(-126)).toBe(2 ** -126);
    expect(expf32(0)).toBe(1);
    expect(log2f32(1)).toBe(0);
    expect(log2f32(8)).toBe(3);
    expect(log2f32(0.25)).toBe(-2);
    expect(log2f32(0)).toBe(-Infinity);
    expect(log2f32(Infinity)).toBe(Infinity);
    expect(log2f32(2 ** -149)).toBe(-149);
    expect(log2f32(-1)).toBeNaN();
    expect(powf32(0, 2)).toBe(0);
    expect(powf32(0, 0)).toBe(1);
    expect(powf32(5, 0)).toBe(1);
    expect(powf32(0, -1)).toBe(Infinity);
  });

  it('sqrt is within 1.2e-7 relative over the normal range, keeps signed zeros and infinity; sin and cos of a turn within 2.5e-7', () => {
    for (const x of [...spread(50_000, 0, 50, 7), ...spread(20_000, 1e-30, 1e-20, 8), f(2 ** -126), f(3e38)]) {
      if (x === 0) continue;
      expect(Math.abs(sqrtf32(x) - Math.sqrt(x)) / Math.sqrt(x), `sqrt ${x}`).toBeLessThan(1.2e-7);
    }
    expect(Object.is(sqrtf32(-0), -0)).toBe(true);
    expect(sqrtf32(0)).toBe(0);
    expect(sqrtf32(Infinity)).toBe(Infinity);
    expect(sqrtf32(-1)).toBeNaN();
    expect(sqrtf32(4)).toBe(2);
    let w = 0;
    const cs = new Float32Array(2);
    for (let i = 0; i < 200_000; i++) {
      const h = i < 16 ? [0, 1, 2 ** 29, 2 ** 29 + 1, 2 ** 30, 2 ** 31, 3 * 2 ** 30, 2 ** 32 - 1, 2 ** 30 - 1, 2 ** 29 - 1, 5 * 2 ** 29, 7 * 2 ** 29, 2 ** 31 - 1, 2 ** 31 + 1, 2 ** 28, 2 ** 32 - 2 ** 28][i] : hash(9, i);
      sinCosTurns32(h, cs, 0);
      const t = (2 * Math.PI * h) / 2 ** 32;
      w = Math.max(w, Math.abs(cs[0] - Math.cos(t)), Math.abs(cs[1] - Math.sin(t)));
    }
    expect(w).toBeLessThan(2.5e-7);
  });

  it('normal pairs from hash pairs: each value has mean 0, variance 1 and normal tails, and the two are uncorrelated', () => {
    const n = 200_000;
    const z = new Float32Array(2);
    const m = [0, 0];
    const v = [0, 0];
    let tail = 0;
    let cross = 0;
    for (let i = 0; i < n; i++) {
      normalPairFromHashes32(hash(10, i), hash(10, i, 1), z, 0);
      for (const j of [0, 1]) {
        m[j] += z[j];
        v[j] += z[j] * z[j];
        if (Math.abs(z[j]) > 1.96) tail++;
      }
      cross += z[0] * z[1];
    }
    for (const j of [0, 1]) {
      expect(Math.abs(m[j] / n)).toBeLessThan(0.012);
      expect(Math.abs(v[j] / n - 1)).toBeLessThan(0.012);
    }
    expect(Math.abs(cross / n)).toBeLessThan(0.012);
    // P(|Z| > 1.96) = 0.05.
    expect(Math.abs(tail / (2 * n) - 0.05)).toBeLessThan(0.002);
    // The extremes: h1 = 0 gives u1 = 1, so 0; the largest h1 gives the largest |z| (about 6.7).
    normalPairFromHashes32(0, 123, z, 0);
    expect([Math.abs(z[0]), Math.abs(z[1])]).toEqual([0, 0]);
    normalPairFromHashes32(2 ** 32 - 1, 0, z, 0);
    expect(Math.abs(z[0] - Math.sqrt(-2 * Math.log(2 ** -32)))).toBeLessThan(1e-5);
  });
});
