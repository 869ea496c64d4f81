import { afterAll, describe, expect, it } from 'vitest';
import { buildGraph, csrScratch, degree, graphBytes, sourceArray, withFollowers, withLazyFollowers, type Graph } from '../../sim-core/csr.ts';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { sharedArray } from '../../sim-core/table.ts';

const inline = createExecutor(1);
const pool = createExecutor(2);
const pool4 = createExecutor(4);
afterAll(async () => {
  await inline.close();
  await pool.close();
  await pool4.close();
});

/** A deterministic stream of 32-bit values (a linear congruential generator), for random graphs. */
function lcg(seed: number): () => number {
  let x = seed;
  return () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
}

/** m seeded random edges over n nodes; `fixed(k, end)` may pin edge k's source (end 0) or target (1). */
function randomEdges(n: number, m: number, seed: number, fixed: (k: number, end: 0 | 1) => number | undefined = () => undefined) {
  const src = sharedArray('i32', m);
  const dst = sharedArray('i32', m);
  const next = lcg(seed);
  for (let k = 0; k < m; k++) {
    src[k] = fixed(k, 0) ?? next() % n;
    dst[k] = fixed(k, 1) ?? next() % n;
  }
  return { src, dst };
}

/** Byte equality of two typed arrays. */
const eq = (p: ArrayBufferView, q: ArrayBufferView) =>
  Buffer.from(p.buffer, p.byteOffset, p.byteLength).equals(Buffer.from(q.buffer, q.byteOffset, q.byteLength));

function edges(pairs: Array<[number, number]>) {
  const src = sharedArray('i32', pairs.length);
  const dst = sharedArray('i32', pairs.length);
  pairs.forEach(([u, v], k) => {
    src[k] = u;
    dst[k] = v;
  });
  return { src, dst };
}

const row = (c: { offsets: ArrayLike<number>; targets: Int32Array }, v: number) =>
  Array.from(c.targets.subarray(c.offsets[v], c.offsets[v + 1]));

describe('buildGraph', () => {
  // 0 follows 1 and 2; 1 follows 2; 3 follows 0; 4 follows 0 and 2; 5 follows nobody.
  const pairs: Array<[number, number]> = [[0, 1], [3, 0], [0, 2], [1, 2], [4, 2], [4, 0]];

  it('builds both directions of a hand-built 6-node graph, rows in edge-list order', async () => {
    for (const ex of [inline, pool]) {
      const { src, dst } = edges(pairs);
      const g = await buildGraph(ex, 6, src, dst, true);
      expect(g.edges).toBe(6);
      expect(Array.from(g.following.offsets)).toEqual([0, 2, 3, 3, 4, 6, 6]);
      expect(row(g.following, 0)).toEqual([1, 2]);
      expect(row(g.following, 4)).toEqual([2, 0]);
      expect(row(g.followers, 2)).toEqual([0, 1, 4]);
      expect(row(g.followers, 0)).toEqual([3, 4]);
      expect(degree(g.followers, 5)).toBe(0);
      expect(g.following.offsets).toBeInstanceOf(Int32Array);
      expect(graphBytes(g)).toBe(2 * (7 * 4 + 6 * 4));
    }
  });

  it('stores undirected graphs once, in both directions', async () => {
    const { src, dst } = edges([[0, 1], [1, 2], [2, 0], [3, 1]]);
    const g = await buildGraph(inline, 4, src, dst, false);
    expect(g.following).toBe(g.followers);
    expect(g.edges).toBe(8);
    expect(row(g.following, 1)).toEqual([2, 0, 3]);
    expect(row(g.following, 3)).toEqual([1]);
  });

  it('gives identical arrays for 1 and 2 threads on a larger random graph', async () => {
    const n = 100_000;
    const m = 1_000_000;
    const { src, dst } = randomEdges(n, m, 12345);
    const a = await buildGraph(inline, n, src, dst, true);
    const b = await buildGraph(pool, n, src, dst, true);
    expect(eq(a.following.offsets, b.following.offsets)).toBe(true);
    expect(eq(a.following.targets, b.following.targets)).toBe(true);
    expect(eq(a.followers.targets, b.followers.targets)).toBe(true);
    // Against a plain one-pass counting sort: rows in edge-list order.
    const naive = (keys: Int32Array, values: Int32Array) => {
      const off = new Int32Array(n + 1);
      for (const k of keys) off[k + 1]++;
      for (let v = 0; v < n; v++) off[v + 1] += off[v];
      const cur = off.slice(0, n);
      const t = new Int32Array(m);
      for (let k = 0; k < m; k++) t[cur[keys[k]]++] = values[k];
      return { off, t };
    };
    for (const [csr, ref] of [
      [a.following, naive(src, dst)],
      [a.followers, naive(dst, src)],
    ] as const) {
      expect(eq(csr.offsets, ref.off)).toBe(true);
      expect(eq(csr.targets, ref.t)).toBe(true);
    }
    // Every edge appears exactly once in each direction.
    let sum = 0;
    for (let v = 0; v < n; v++) sum += degree(a.following, v);
    expect(sum).toBe(m);
  });

  it('withFollowers transposes a following CSR into the followers buildGraph makes of its rows (empty rows included)', async () => {
    const n = 50_000;
    const m = 600_000;
    // Edges in row order, sources skipping rows (empty rows), targets random.
    const src = sharedArray('i32', m);
    const dst = sharedArray('i32', m);
    const next = lcg(777);
    for (let k = 0; k < m; k++) {
      src[k] = Math.floor((k * n) / m / 2) * 2;
      dst[k] = next() % n;
    }
    for (const ex of [inline, pool]) {
      const a = await buildGraph(ex, n, src, dst, true);
      const b = await withFollowers(ex, n, a.following);
      expect(b.edges).toBe(m);
      expect(eq(a.followers.offsets, b.followers.offsets)).toBe(true);
      expect(eq(a.followers.targets, b.followers.targets)).toBe(true);
      // The same followers: the offsets at once, the rows built on first read, then kept.
      const lazy = await withLazyFollowers(ex, n, a.following);
      expect([lazy.edges, lazy.directed, lazy.following]).toEqual([m, true, a.following]);
      expect(eq(lazy.followers.offsets, a.followers.offsets)).toBe(true);
      const t = lazy.followers.targets;
      expect(lazy.followers.targets).toBe(t);
      expect(eq(t, a.followers.targets)).toBe(true);
      // And as buildGraph gives them when asked for lazy followers, from edge arrays or block sources.
      const viaBuild = await buildGraph(ex, n, src, dst, true, true);
      expect(eq(viaBuild.following.targets, a.following.targets)).toBe(true);
      expect(eq(viaBuild.followers.offsets, a.followers.offsets)).toBe(true);
      expect(eq(viaBuild.followers.targets, a.followers.targets)).toBe(true);
    }
    const t = edges([[0, 2], [2, 0], [2, 1]]);
    const tiny = await withFollowers(pool, 3, (await buildGraph(pool, 3, t.src, t.dst, true)).following);
    expect(Array.from(tiny.followers.offsets)).toEqual([0, 1, 2, 3]);
    expect(Array.from(tiny.followers.targets)).toEqual([2, 2, 0]);
  });

  it('builds from block sources (follow-backs marked in back) the graph of the same edges as arrays', async () => {
    const n = 60_000;
    const next = lcg(4242);
    // Blocks of 0..40 edges (some empty, row 0's too), about one edge in four a follow-back.
    const starts = sharedArray('f64', n + 1);
    for (let v = 1; v <= n; v++) starts[v] = starts[v - 1] + (v === 1 ? 0 : next() % 41);
    const m = starts[n];
    const dst = sharedArray('i32', m);
    // Room past the last edge, as the generator's arrays have.
    const back = sharedArray('i32', ((m + 31) >>> 5) + 2);
    for (let v = 0; v < n; v++) {
      for (let e = starts[v]; e < starts[v + 1]; e++) {
        // Earlier users only, as the generator follows them (a follow-back's source precedes its block).
        dst[e] = next() % v;
        // A follow-back answers the edge before it in the block: its target follows the owner.
        if (e > starts[v] && !((back[(e - 1) >>> 5] >>> ((e - 1) & 31)) & 1) && (next() >>> 16) % 4 === 0) {
          back[e >>> 5] |= 1 << (e & 31);
          dst[e] = v;
        }
      }
    }
    const src = sourceArray({ starts, back }, dst);
    for (let v = 0; v < n; v++) if (starts[v + 1] > starts[v]) expect(src[starts[v]]).toBe(v);
    let backs = 0;
    for (let e = 1; e < m; e++) if ((back[e >>> 5] >>> (e & 31)) & 1) expect(src[e]).toBe(dst[e - 1]), backs++;
    expect(backs).toBeGreaterThan(m / 10);
    // Bits past the last edge are not edges (a generator round drawn again can leave some there).
    expect(m % 32).not.toBe(0);
    for (let e = m; e < back.length * 32; e += 3) back[e >>> 5] |= 1 << (e & 31);
    const copy = (x: Int32Array) => {
      const c = sharedArray('i32', x.length);
      c.set(x);
      return c;
    };
    for (const ex of [inline, pool, pool4]) {
      const a = await buildGraph(ex, n, src, dst, true);
      // Block sources: the targets array becomes the following CSR's targets.
      const d = copy(dst);
      const b = await buildGraph(ex, n, { starts, back }, d, true);
      expect(b.following.targets).toBe(d);
      for (const [x, y] of [[a.following, b.following], [a.followers, b.followers]] as const) {
        expect(eq(x.offsets, y.offsets)).toBe(true);
        expect(eq(x.targets, y.targets)).toBe(true);
      }
      // Lazy followers: the same following rows; the followers their transpose (rows in the
      // following rows' order, not the edges').
      const l = await buildGraph(ex, n, { starts, back }, copy(dst), true, true);
      expect(eq(l.following.offsets, b.following.offsets) && eq(l.following.targets, b.following.targets)).toBe(true);
      const t = await withFollowers(ex, n, b.following);
      expect(eq(l.followers.offsets, t.followers.offsets) && eq(l.followers.targets, t.followers.targets)).toBe(true);
    }
    const bad = sharedArray('i32', m).fill(1);
    bad[5] = n;
    await expect(buildGraph(pool, n, { starts, back }, bad, true)).rejects.toThrow(/edge 5: target 60000 is outside/);
    // A follow-back whose source does not precede its block's owner is refused, the targets untouched.
    const late = copy(dst);
    const e = Array.from({ length: m }, (_, i) => i).find((i) => (back[i >>> 5] >>> (i & 31)) & 1)!;
    let owner = 0;
    while (starts[owner + 1] <= e) owner++;
    late[e - 1] = owner;
    const before = copy(late);
    await expect(buildGraph(pool, n, { starts, back }, late, true)).rejects.toThrow(`the follow-back at edge ${e} has source ${owner}, not before its block's owner ${owner}`);
    expect(eq(late, before)).toBe(true);
  });

  it('places block rows in parts, also when rows move past the next part\'s first edges', async () => {
    // Users before n/2 follow the previous user; each later user follows 10 of them, each followed
    // back. Half the later edges are follow-backs of earlier sources, so at a quarter of the edges
    // the rows have moved right by more than a quarter of the edges: a part's rows land past the
    // start of the next part's edges, which it has to read before they are overwritten.
    const n = 40_000;
    const half = n / 2;
    const next = lcg(77);
    const starts = sharedArray('f64', n + 1);
    for (let v = 0; v < n; v++) starts[v + 1] = starts[v] + (v === 0 ? 0 : v < half ? 1 : 20);
    const m = starts[n];
    const dst = sharedArray('i32', m);
    const back = sharedArray('i32', (m + 31) >>> 5);
    for (let v = 1; v < n; v++) {
      if (v < half) dst[starts[v]] = v - 1;
      else
        for (let e = starts[v]; e < starts[v + 1]; e += 2) {
          dst[e] = next() % half;
          dst[e + 1] = v;
          back[(e + 1) >>> 5] |= 1 << ((e + 1) & 31);
        }
    }
    const src = sourceArray({ starts, back }, dst);
    const want = await buildGraph(inline, n, src, dst, true);
    let h = 0;
    while (starts[h] < m / 4) h++;
    expect(want.following.offsets[h] - starts[h]).toBeGreaterThan(m / 4);
    for (const ex of [inline, pool, pool4]) {
      const d = sharedArray('i32', m);
      d.set(dst);
      const got = await buildGraph(ex, n, { starts, back }, d, true);
      expect(eq(got.following.offsets, want.following.offsets), `${ex.threads} threads`).toBe(true);
      expect(eq(got.following.targets, want.following.targets), `${ex.threads} threads`).toBe(true);
      expect(eq(got.followers.targets, want.followers.targets), `${ex.threads} threads`).toBe(true);
    }
  });

  it('scatters in several passes when the scratch is small, with the same result', async () => {
    const n = 30_000;
    const m = 400_000;
    // A hub (row 7 and target 7) whose bucket alone outgrows the smallest scratch below.
    const { src, dst } = randomEdges(n, m, 99, (k, end) => (k % 10 === end ? 7 : undefined));
    const build = async (): Promise<Graph[]> => [
      await buildGraph(pool, n, src, dst, true),
      await buildGraph(pool, n, src, dst, false),
      await withFollowers(inline, n, (await buildGraph(inline, n, src, dst, true)).following),
    ];
    const want = await build();
    const saved = csrScratch.lowEntries;
    try {
      for (const cap of [30_000, 1000]) {
        csrScratch.lowEntries = cap;
        const got = await build();
        got.forEach((g, i) => {
          for (const [x, y] of [[g.following, want[i].following], [g.followers, want[i].followers]] as const) {
            expect(eq(x.offsets, y.offsets), `cap ${cap} graph ${i}`).toBe(true);
            expect(eq(x.targets, y.targets), `cap ${cap} graph ${i}`).toBe(true);
          }
        });
      }
    } finally {
      csrScratch.lowEntries = saved;
    }
  });

  it('refuses edges whose ids are outside 0..nodes-1, naming the first bad edge and the agent count', async () => {
    for (const ex of [inline, pool]) {
      const { src, dst } = edges([[0, 1], [1, 2], [2, 7], [9, 0]]);
      await expect(buildGraph(ex, 3, src, dst, true)).rejects.toThrow(/edge 2: target 7 is outside 0\.\.2 \(3 agents\)/);
      const neg = edges([[0, 1], [-1, 2]]);
      await expect(buildGraph(ex, 3, neg.src, neg.dst, false)).rejects.toThrow(/edge 1: source -1 is outside 0\.\.2 \(3 agents\)/);
    }
  });
});
