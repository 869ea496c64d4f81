/**
 * Folding pending follows into the following rows (platform/followFold.ts): the CSR the daily
 * rebuild makes, and the edges graph-end.arrow is generated from at the end of a run, against a
 * plain fold of the edge list (kept edges in row order, then each row's new follows by followee),
 * with follows unfollowed again, unfollows of old edges, rows left empty, and slices of every size;
 * and the followers' offsets (follower counts) after the fold, from those before.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { foldedEdges, newFollowing } from '../../platform/followFold.ts';
import { createExecutor } from '../../sim-core/exec.ts';
import { sharedArray } from '../../sim-core/table.ts';
import { createPairSet, pairSetAdd } from '../../sim-core/pairSet.ts';
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
        const { following: g, followerOffsets } = await newFollowing(ex, csr, n, added, removed, before);
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
