/**
 * The users' nearest topic clusters (recsys/kernels.ts nearestClusters, computed once at set-up)
 * against a plain reading of their definition: the `probe` prototypes of largest dot product with
 * the interest (products of float32 values summed in doubles, in dimension order), ties to the
 * lower cluster; for any number of users, topics and chunks.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { sharedArray } from '../../sim-core/table.ts';
import { keyOf, uniform } from '../../sim-core/rng.ts';
import { kernels as K } from '../../recsys/kernels.ts';

const inline = createExecutor(1);
const pool = createExecutor(2);
afterAll(async () => {
  await inline.close();
  await pool.close();
});

function plain(interest: Float32Array, prototypes: Float32Array, n: number, T: number, D: number, probe: number): number[] {
  const out: number[] = [];
  for (let u = 0; u < n; u++) {
    const dots = Array.from({ length: T }, (_, t) => {
      let s = 0;
      for (let d = 0; d < D; d++) s += interest[u * D + d] * prototypes[t * D + d];
      return { t, s };
    });
    dots.sort((a, b) => b.s - a.s || a.t - b.t);
    // Fewer topics than probes: the rest repeat the nearest.
    for (let p = 0; p < probe; p++) out.push(dots[p < T ? p : 0].t);
  }
  return out;
}

describe('nearestClusters', () => {
  it('gives each user the probe prototypes nearest its interest, ties to the lower cluster', async () => {
    const key = keyOf(11, 3, 0);
    for (const [n, T, D, probe] of [
      [1001, 64, 16, 3],
      [257, 7, 5, 2],
      [3, 2, 3, 3],
    ] as const) {
      // Coarse values, so that dot products tie; prototype 1 a copy of prototype 0 (a tie at every user).
      const coarse = (length: number, draw: number) => {
        const a = sharedArray('f32', length);
        for (let i = 0; i < length; i++) a[i] = Math.round(uniform(key, i, draw) * 8 - 4) / 4;
        return a;
      };
      const interest = coarse(n * D, 0);
      const prototypes = coarse(T * D, 1);
      prototypes.copyWithin(D, 0, D);
      const want = plain(interest, prototypes, n, T, D, probe);
      for (const [ex, chunkRows] of [[inline, undefined], [pool, 1], [pool, 3], [pool, 64]] as const) {
        const out = sharedArray('u8', n * probe).fill(255);
        await ex.run(K.nearestClusters, { interest, prototypes, topics: T, dim: D, probe, out }, n, chunkRows ? { chunkRows } : {});
        expect(Array.from(out), `${n} users, ${T} topics, chunks of ${chunkRows ?? 'default'}`).toEqual(want);
      }
    }
  });
});
