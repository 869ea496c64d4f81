import { describe, expect, it } from 'vitest';
import { maxRowNorm, nearestPrototype, nearestPrototypeExact } from '../../platform/topicDots.ts';

/** A deterministic stream of uniforms in [0, 1). */
function uniforms(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

function unit(v: Float32Array, at: number, dim: number): void {
  let n = 0;
  for (let d = 0; d < dim; d++) n += v[at + d] * v[at + d];
  for (let d = 0; d < dim; d++) v[at + d] = Math.fround(v[at + d] / Math.sqrt(n));
}

describe('nearestPrototype', () => {
  it('picks the prototype the float32 sums pick, near ties and exact ties included', () => {
    const T = 64;
    const D = 16;
    const rnd = uniforms(7);
    const protos = new Float32Array(T * D).map(() => rnd() * 2 - 1);
    for (let t = 0; t < T; t++) unit(protos, t * D, D);
    // Prototype 9 a copy of prototype 3 (an exact tie: the lower index wins), 20 a hair from 11.
    protos.copyWithin(9 * D, 3 * D, 4 * D);
    for (let d = 0; d < D; d++) protos[20 * D + d] = Math.fround(protos[11 * D + d] * (1 + 3e-7 * ((d % 3) - 1)));
    const maxNorm = maxRowNorm(protos, T, D);
    const n = 20_000;
    const v = new Float32Array(n * D);
    for (let i = 0; i < n; i++) {
      const kind = i % 4;
      for (let d = 0; d < D; d++) {
        const a = protos[3 * D + d];
        const b = protos[(kind === 2 ? 11 : 5) * D + d];
        // Random directions, points halfway between two prototypes (near ties of their sums), and
        // points near the tied pairs.
        v[i * D + d] = kind === 0 ? rnd() * 2 - 1 : kind === 3 ? a + (rnd() - 0.5) * 1e-3 : (a + b) / 2 + (rnd() - 0.5) * 1e-6;
      }
      unit(v, i * D, D);
    }
    let differ = 0;
    const won = new Set<number>();
    for (let i = 0; i < n; i++) {
      const exact = nearestPrototypeExact(protos, T, D, v, i * D);
      won.add(exact);
      if (nearestPrototype(protos, T, D, v, i * D, maxNorm) !== exact) differ++;
      if (nearestPrototype(protos, T, D, v, i * D) !== exact) differ++;
    }
    expect(differ).toBe(0);
    // The near-tie points do reach both sides, and the copy never wins over its original.
    expect(won.has(3) && won.has(5) && won.has(11)).toBe(true);
    expect(won.has(9)).toBe(false);
  });

  it('a vector with a NaN component gets what the float32 sums give', () => {
    const protos = Float32Array.from([1, 0, 0, 1, -1, 0, 0, -1]);
    const v = Float32Array.from([NaN, 0.5]);
    expect(nearestPrototype(protos, 4, 2, v, 0)).toBe(nearestPrototypeExact(protos, 4, 2, v, 0));
  });
});
