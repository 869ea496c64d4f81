import { afterAll, describe, expect, it } from 'vitest';
import { chunkRanges, compact, createExecutor } from '../../sim-core/exec.ts';
import { sharedArray } from '../../sim-core/table.ts';
import { buildGraph } from '../../sim-core/csr.ts';
import { keyOf } from '../../sim-core/rng.ts';
import { kernels as K } from '../../sim-core/kernels.ts';

const pool = createExecutor(2);
const inline = createExecutor(1);
afterAll(async () => {
  await pool.close();
  await inline.close();
});

describe('chunkRanges', () => {
  it('depends only on rows and options, covers every row once', () => {
    const r = chunkRanges(200_000);
    expect(r[0]).toEqual([0, 65536]);
    expect(r[r.length - 1][1]).toBe(200_000);
    for (let i = 1; i < r.length; i++) expect(r[i][0]).toBe(r[i - 1][1]);
    expect(chunkRanges(10, { parts: 4 })).toEqual([[0, 2], [2, 5], [5, 7], [7, 10]]);
    expect(chunkRanges(0)).toEqual([]);
    expect(chunkRanges(3, { parts: 8 }).length).toBe(3);
  });
});

describe('executor', () => {
  it('pool and inline give identical results for every kind of kernel', async () => {
    const n = 300_001;
    const x = sharedArray('f32', n);
    for (let i = 0; i < n; i++) x[i] = Math.sin(i) * 0.9;
    const src = sharedArray('i32', 4 * n);
    const dst = sharedArray('i32', 4 * n);
    for (let e = 0; e < src.length; e++) {
      src[e] = e % n;
      dst[e] = (e * 7919 + 13) % n;
    }
    const results: unknown[][] = [];
    for (const ex of [inline, pool]) {
      const g = await buildGraph(ex, n, src, dst, true);
      const out = sharedArray('f32', n);
      const partner = sharedArray('i32', n);
      await ex.run(K.segmentMean, { offsets: g.following.offsets, targets: g.following.targets, x, out, selfWeight: 1 }, n);
      await ex.run(K.sampleNeighbor, { offsets: g.followers.offsets, targets: g.followers.targets, out: partner, key: keyOf(1, 2, 3) }, n);
      const mom = await ex.reduce(K.moments, { x: out }, n);
      const hist = await ex.reduce(K.histogram, { x, bins: 10, lo: -1, hi: 1 }, n);
      const bytes = (a: { buffer: ArrayBufferLike }) => Buffer.from(new Uint8Array(a.buffer));
      results.push([bytes(g.following.targets), bytes(g.following.offsets), bytes(g.followers.targets), bytes(out), bytes(partner), mom, hist]);
    }
    const [a, b] = results;
    for (let i = 0; i < a.length; i++) {
      if (Buffer.isBuffer(a[i])) expect((a[i] as Buffer).equals(b[i] as Buffer), `result ${i}`).toBe(true);
      else expect(b[i]).toEqual(a[i]);
    }
    expect((a[6] as number[]).reduce((s, v) => s + v, 0)).toBe(n);
  });

  it('reductions combine chunk partials in chunk order (float sums are reproducible)', async () => {
    const n = 500_000;
    const x = sharedArray('f64', n);
    for (let i = 0; i < n; i++) x[i] = 1 / (i + 1);
    const a = await inline.reduce(K.moments, { x }, n);
    const b = await pool.reduce(K.moments, { x }, n);
    expect(b).toEqual(a);
  });

  it('refuses non-shared arrays on the pool with a clear message', async () => {
    await expect(pool.run(K.fill, { out: new Float32Array(10), value: 1 }, 10)).rejects.toThrow(/SharedArrayBuffer/);
  });

  it('arrays a worker has not seen go with the task, so a call on new arrays never has its worker ask for them', async () => {
    const p = pool as unknown as { pool: { run(task: unknown): Promise<{ missing?: number[]; chunks?: number[] }> } };
    const run = p.pool.run;
    const answers: Array<{ missing?: number[]; chunks?: number[] }> = [];
    p.pool.run = async (task) => {
      const out = await run.call(p.pool, task);
      answers.push(out);
      return out;
    };
    try {
      for (let r = 0; r < 3; r++) {
        const out = sharedArray('f32', 1 << 20); // new every call, as set-up arrays are
        await pool.run(K.fill, { out, value: r }, out.length, { parts: 64 });
        expect([...new Set(out)]).toEqual([r]);
      }
    } finally {
      p.pool.run = run;
    }
    expect(answers.length).toBeGreaterThanOrEqual(3);
    expect(answers.filter((a) => a.missing)).toEqual([]);
  });

  it('compaction is stable and complete', async () => {
    const n = 200_000;
    const mask = sharedArray('u8', n);
    for (let i = 0; i < n; i++) mask[i] = i % 3 === 0 || i === n - 1 ? 1 : 0;
    const want = Array.from({ length: n }, (_, i) => i).filter((i) => mask[i]);
    for (const ex of [inline, pool]) expect(Array.from(await compact(ex, mask, n))).toEqual(want);
  });
});
