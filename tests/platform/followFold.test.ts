/**
 * Folding pending follows into the following rows (platform/followFold.ts): the CSR the daily
 * rebuild makes, and the edges graph-end.arrow is generated from at the end of a run, against a
 * plain fold of the edge list (kept edges in row order, then each row's new follows by followee),
 * with follows unfollowed again, unfollows of old edges, rows left empty, and slices of every size;
 * and the followers' offsets (follower counts) after the fold, from those before; and day after day
 * of rebuilds folding in place into the room the first left (rows moving right, left, both, and a
 * day that outgrows the room).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { foldedEdges, newFollowing } from '../../platform/followFold.ts';
import { foldRoom, pinRows, type Csr } from '../../sim-core/csr.ts';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { sharedArray } from '../../sim-core/table.ts';
import { createPairSet, pairSetAdd, type PairSet } from '../../sim-core/pairSet.ts';
import type { Executor } from '../../sim-core/exec.ts';
import { FollowTable } from '../../platform/tables.ts';
import { hash } from '../../sim-core/rng.ts';

function graph(n: number, seed: number) {
  const rows: number[][] = Array.from({ length: n }, (_, u) => {
    const deg = hash(seed, u) % 7; // 0..6, some rows empty
    const out: number[] = [];
    for (let d = 0; d < deg; d++) {
      const v = hash(seed + 1, u * 8 + d) % n;
      if (v !== u && !out.includes(v)) out.push(v);
    }
    return out;
  });
  const offsets = sharedArray('i32', n + 1);
  rows.forEach((r, u) => (offsets[u + 1] = offsets[u] + r.length));
  const targets = sharedArray('i32', offsets[n]);
  targets.set(rows.flat());
  return { rows, csr: { offsets, targets } };
}

/** CSR offsets of rows of the given lengths. */
const offsetsOf = (lengths: number[]) => {
  const out = [0];
  for (const l of lengths) out.push(out[out.length - 1] + l);
  return out;
};

/** A follow table holding these deltas, bound to `ex`. */
const deltas = (ex: Executor, added: PairSet, removed: PairSet) => Object.assign(new FollowTable(new Int32Array(0)).bind(ex), { added, removed });

const inline = createExecutor(1);
const pool4 = createExecutor(4);
afterAll(async () => {
  await inline.close();
  await pool4.close();
});

describe('folding follows into the following rows', () => {
  for (const n of [300, 60_000]) {
    it(`gives the plain fold, as a CSR (by parts of the rows) and as generated source/target columns in any slices: ${n} rows`, async () => {
      const { rows, csr } = graph(n, 11);
      const added = createPairSet();
      const removed = createPairSet();
      const want = rows.map((r) => [...r]);
      const adds: Array<[number, number]> = [];
      const seen = new Set<string>();
      for (let k = 0; k < 400; k++) {
        const u = hash(21, k) % n;
        const v = hash(22, k) % n;
        if (u === v || rows[u].includes(v) || seen.has(`${u},${v}`)) continue;
        seen.add(`${u},${v}`);
        pairSetAdd(added, u, v);
        adds.push([u, v]);
      }
      // Unfollows: old edges, and some of the new follows (which then do not appear).
      const gone = new Set<string>();
      for (let u = 0; u < n; u += 5) if (rows[u].length > 0) gone.add(`${u},${rows[u][hash(23, u) % rows[u].length]}`);
      for (let k = 0; k < adds.length; k += 9) gone.add(`${adds[k][0]},${adds[k][1]}`);
      for (const g of gone) pairSetAdd(removed, ...(g.split(',').map(Number) as [number, number]));
      adds.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
      for (let u = 0; u < n; u++) want[u] = want[u].filter((v) => !gone.has(`${u},${v}`));
      for (const [a, b] of adds) if (!gone.has(`${a},${b}`)) want[a].push(b);
      const wantSources = want.flatMap((r, u) => r.map(() => u));
      const wantTargets = want.flat();
      // Follower counts before (the in-degrees of the old rows) and after (of the folded ones).
      const inDegreeOffsets = (rs: number[][]) => {
        const deg = new Array<number>(n).fill(0);
        for (const r of rs) for (const v of r) deg[v]++;
        return offsetsOf(deg);
      };
      const before = sharedArray('i32', n + 1);
      before.set(inDegreeOffsets(rows));

      for (const ex of [inline, pool4]) {
        // Each call on its own copy: a fold that can (here, one that drops more than it adds) writes
        // over its input.
        const copy = { offsets: csr.offsets, targets: sharedArray('i32', csr.targets.length) };
        copy.targets.set(csr.targets);
        const { following: g, followerOffsets } = await newFollowing(ex, copy, n, deltas(ex, added, removed), before);
        expect(Array.from(g.targets), `${ex.threads} threads`).toEqual(wantTargets);
        expect(Array.from(g.offsets)).toEqual(offsetsOf(want.map((r) => r.length)));
        expect(Array.from(followerOffsets)).toEqual(inDegreeOffsets(want));
      }

      for (const slice of [1, 3, 64, wantTargets.length]) {
        const e = foldedEdges(csr, added, removed);
        expect(e.rows).toBe(wantTargets.length);
        for (const [col, expected] of [[e.source, wantSources], [e.target, wantTargets]] as const) {
          const got = new Int32Array(e.rows);
          for (let at = 0; at < e.rows; at += slice) col.fill(got.subarray(at, Math.min(e.rows, at + slice)), at);
          expect(Array.from(got), `slices of ${slice}`).toEqual(expected);
        }
      }
    });
  }
});

/** A day's follows and unfollows on `rows` (arrays of followees), as pair sets, and the rows after them. */
function day(rows: number[][], seed: number, o: { adds: (u: number) => number; drops: (u: number) => boolean }) {
  const n = rows.length;
  const added = createPairSet();
  const removed = createPairSet();
  const want = rows.map((r) => [...r]);
  for (let u = 0; u < n; u++) {
    const news: number[] = [];
    for (let k = 0; k < o.adds(u); k++) {
      const v = hash(seed, u * 16 + k) % n;
      if (v === u || rows[u].includes(v) || news.includes(v)) continue;
      news.push(v);
      pairSetAdd(added, u, v);
    }
    // Unfollow some old edges (one, or all of a row) and, now and then, a follow of the same day.
    if (o.drops(u) && rows[u].length > 0) {
      const gone = hash(seed + 1, u) % 3 === 0 ? [...rows[u]] : [rows[u][hash(seed + 2, u) % rows[u].length]];
      for (const v of gone) pairSetAdd(removed, u, v);
      want[u] = want[u].filter((v) => !gone.includes(v));
    }
    if (news.length > 1 && hash(seed + 3, u) % 4 === 0) pairSetAdd(removed, u, news.pop()!);
    want[u].push(...news.sort((x, y) => x - y));
  }
  return { added, removed, want };
}

/** The first index where a and b differ (-1: none), so that a failure does not diff 100k-entry arrays. */
function firstDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return -1;
}

const inDegrees = (rows: number[][]) => {
  const out = sharedArray('i32', rows.length + 1);
  const deg = new Array<number>(rows.length).fill(0);
  for (const r of rows) for (const v of r) deg[v]++;
  out.set(offsetsOf(deg));
  return out;
};

describe('daily rebuilds fold in place into the room the first one left', () => {
  const n = 20_000;
  const days = [
    { what: 'follows only (rows move right)', adds: (u: number) => (u % 3 === 0 ? 2 : 0), drops: () => false, inPlace: true },
    { what: 'unfollows only (rows move left)', adds: () => 0, drops: (u: number) => u % 2 === 0, inPlace: true },
    { what: 'unfollows in the first half, follows in the second', adds: (u: number) => (u >= n / 2 ? 1 : 0), drops: (u: number) => u < n / 2, inPlace: true },
    { what: 'runs moving each way by turns', adds: (u: number) => ((u >> 9) % 2 === 0 ? 3 : 0), drops: (u: number) => (u >> 9) % 2 === 1 || u % 7 === 0, inPlace: true },
    { what: 'more follows than the room holds', adds: () => 8, drops: (u: number) => u % 11 === 0, inPlace: false },
    { what: 'the next day, in the new room', adds: (u: number) => u % 5, drops: (u: number) => u % 3 === 0, inPlace: true },
  ];
  const cases = [
    { ex: inline, pinned: false },
    { ex: pool4, pinned: false },
    { ex: inline, pinned: true },
  ];
  for (const { ex, pinned } of cases) {
    it(`gives the plain fold every day, in place where there is room: ${ex.threads} thread(s), set-up rows ${pinned ? 'pinned on day one' : 'free'}`, async () => {
      const saved = { ...foldRoom };
      foldRoom.fraction = 0.5;
      foldRoom.min = 16;
      try {
        const { rows: rows0, csr } = graph(n, 5);
        let rows = rows0;
        // Set-up's rows at the start of a buffer with room, as the homophilous generator leaves them.
        const roomy = new Int32Array(new SharedArrayBuffer(4 * Math.ceil(1.5 * csr.targets.length)), 0, csr.targets.length);
        roomy.set(csr.targets);
        let G: Csr = { offsets: csr.offsets, targets: roomy };
        let followers: Int32Array | Float64Array = inDegrees(rows);
        const first = { what: 'the first rebuild, on set-up rows', adds: () => 1, drops: () => false, inPlace: !pinned };
        for (const [d, o] of [first, ...days].entries()) {
          const { added, removed, want } = day(rows, 100 + d, o);
          // A background reader (graph.arrow's write) pins the rows: no fold in place meanwhile.
          const unpin = pinned && d === 0 ? pinRows(G.targets) : () => {};
          const next = await newFollowing(ex, G, n, deltas(ex, added, removed), followers);
          unpin();
          expect(next.inPlace, o.what).toBe(o.inPlace);
          if (o.inPlace) expect(next.following.targets.buffer, o.what).toBe(G.targets.buffer);
          else expect(next.following.targets.buffer, o.what).not.toBe(G.targets.buffer);
          expect(firstDifference(next.following.offsets, offsetsOf(want.map((r) => r.length))), o.what).toBe(-1);
          expect(firstDifference(next.following.targets, want.flat()), o.what).toBe(-1);
          expect(firstDifference(next.followerOffsets, inDegrees(want)), o.what).toBe(-1);
          rows = want;
          G = next.following;
          followers = inDegrees(want);
        }
      } finally {
        Object.assign(foldRoom, saved);
      }
    });
  }
});
