import { describe, expect, it } from 'vitest';
import { below, hash, keyOf, mix32, normal, rowDraw, rowHash, rowSeed, splitKey, streamOf, uniform } from '../../sim-core/rng.ts';

describe('rng', () => {
  it('the hot-loop forms give hash exactly: rowHash on a split key, rowDraw on a row seed', () => {
    // Keys with high bits (every real key has them) and rows up to 2^31 - 1.
    for (const key of [0, 1, keyOf(7, streamOf('a'), 0), keyOf(2 ** 40 + 3, streamOf('b'), 9), 2 ** 53 - 1]) {
      const [lo, hi] = splitKey(key);
      for (const row of [0, 1, 2, 1000, 65535, 2 ** 24 + 1, 2 ** 31 - 1]) {
        expect(rowHash(lo, hi, row)).toBe(hash(key, row));
        const seed = rowSeed(key, row);
        for (const d of [0, 1, 7, 8, 200]) expect(rowDraw(seed, d)).toBe(hash(key, row, d));
      }
    }
  });

  it('mix32 is a bijection on a sample (no collisions among 2^20 consecutive inputs)', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 1 << 20; i++) seen.add(mix32(i));
    expect(seen.size).toBe(1 << 20);
  });

  it('draws are pure functions of (seed, stream, step, row, draw)', () => {
    const k = keyOf(42, streamOf('x'), 3);
    expect(uniform(k, 10, 2)).toBe(uniform(keyOf(42, streamOf('x'), 3), 10, 2));
    expect(uniform(k, 10, 2)).not.toBe(uniform(k, 10, 3));
    expect(uniform(k, 10)).not.toBe(uniform(k, 11));
    expect(keyOf(42, streamOf('x'), 3)).not.toBe(keyOf(42, streamOf('x'), 4));
    expect(keyOf(42, streamOf('x'), 3)).not.toBe(keyOf(43, streamOf('x'), 3));
    expect(keyOf(42, streamOf('x'), 3)).not.toBe(keyOf(42, streamOf('y'), 3));
    // Seeds above 2^32 use their high bits.
    expect(keyOf(2 ** 40 + 5, 1, 0)).not.toBe(keyOf(5, 1, 0));
  });

  it('keys of distinct (seed, stream, step) do not collide (53-bit keys, not 32)', () => {
    // 400k triples: with 32-bit keys about 19 pairs would share a key (birthday bound); with 53 bits
    // the expected number is 1e-5.
    const seen = new Set<number>();
    const streams = [streamOf('act'), streamOf('recommend')];
    for (let seed = 1; seed <= 50; seed++) for (const st of streams) for (let step = 0; step < 4000; step++) seen.add(keyOf(seed, st, step));
    expect(seen.size).toBe(50 * 2 * 4000);
    for (const k of seen) if (!(Number.isInteger(k) && k >= 0 && k < 2 ** 53)) throw new Error(`key ${k} out of range`);
    // Steps past 2^32 stay distinct from their low bits.
    expect(keyOf(1, 2, 2 ** 33 + 7)).not.toBe(keyOf(1, 2, 7));
  });

  it('the high bits of a key change every draw', () => {
    const lo = 12345;
    const k1 = lo;
    const k2 = 2 ** 40 + lo;
    let same = 0;
    for (let i = 0; i < 1000; i++) if (uniform(k1, i) === uniform(k2, i)) same++;
    expect(same).toBe(0);
  });

  it('uniform passes a chi-square test on 64 bins for several keys', () => {
    for (const seed of [1, 2, 3, 99]) {
      const k = keyOf(seed, streamOf('chi'), 0);
      const bins = new Array(64).fill(0);
      const n = 640_000;
      for (let i = 0; i < n; i++) bins[Math.floor(uniform(k, i) * 64)]++;
      const e = n / 64;
      const chi = bins.reduce((s, o) => s + (o - e) ** 2 / e, 0);
      // 63 degrees of freedom: mean 63, sd ~11.2; 130 is beyond the 0.9999 quantile.
      expect(chi).toBeLessThan(130);
      expect(chi).toBeGreaterThan(20);
    }
  });

  it('neighbouring rows are uncorrelated and draws within a row are uncorrelated', () => {
    const k = keyOf(7, streamOf('corr'), 1);
    const n = 200_000;
    let sxy = 0;
    let sxz = 0;
    for (let i = 0; i < n; i++) {
      const x = uniform(k, i) - 0.5;
      sxy += x * (uniform(k, i + 1) - 0.5);
      sxz += x * (uniform(k, i, 1) - 0.5);
    }
    // Var of a product of two centred uniforms is 1/144; the mean's SE is 1/(12 sqrt(n)).
    const se = 1 / (12 * Math.sqrt(n));
    expect(Math.abs(sxy / n)).toBeLessThan(5 * se);
    expect(Math.abs(sxz / n)).toBeLessThan(5 * se);
  });

  it('below, normal and hash stay in range with the right moments', () => {
    const k = keyOf(3, 5, 7);
    const n = 100_000;
    let s = 0;
    let s2 = 0;
    let bad = 0;
    for (let i = 0; i < n; i++) {
      const b = below(k, i, 10);
      if (!(b >= 0 && b < 10 && Number.isInteger(b))) bad++;
      const h = hash(k, i);
      if (!(h >= 0 && h < 2 ** 32 && Number.isInteger(h))) bad++;
      const z = normal(k, i);
      s += z;
      s2 += z * z;
    }
    expect(bad).toBe(0);
    expect(Math.abs(s / n)).toBeLessThan(4 / Math.sqrt(n));
    expect(Math.abs(s2 / n - 1)).toBeLessThan(4 * Math.sqrt(2 / n));
  });
});
