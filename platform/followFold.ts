/**
 * Folding the follows and unfollows a run has collected into the following rows: row u becomes its
 * kept edges (those not unfollowed), in order, then its new follows by followee id (those not
 * unfollowed again). `newFollowing` builds the new rows as a CSR (the daily rebuild, by parts of
 * the rows on the threads: foldKernels.ts);
 * `foldedEdges` generates the same edges as graph-end.arrow's columns while the file is written,
 * so the end of a run needs no second copy of the rows (4 bytes an edge: 2 GB at 495M edges).
 */
import type { Csr } from '../sim-core/csr.ts';
import { lastAtMost } from '../sim-core/csrKernels.ts';
import type { Executor } from '../sim-core/exec.ts';
import type { GeneratedValues } from '../sim-core/io/arrowFile.ts';
import { pairSetHas, type PairSet } from '../sim-core/pairSet.ts';
import { sharedArray, type TypedArray } from '../sim-core/table.ts';
import { foldFill, kernels as FK, type FoldAt } from './foldKernels.ts';

interface Fold {
  /** New follows (follower addA[i], followee addB[i]), by follower then followee, without those unfollowed again. */
  addA: Int32Array;
  addB: Int32Array;
  /** CSR positions of unfollowed edges (few), ascending, then Infinity. */
  dropped: Float64Array;
  /** Edges after the fold. */
  edges: number;
}

function foldOf(G: Csr, added: PairSet, removed: PairSet): Fold {
  const n = G.offsets.length - 1;
  const RA = removed.keysA;
  const RB = removed.keysB;
  // Each follow as one number, u n + v (exact below 2^53), sorted natively.
  const keys = new Float64Array(added.size);
  let k = 0;
  for (let i = 0; i < added.keysA.length; i++) {
    const u = added.keysA[i];
    if (u === -1) continue;
    const v = added.keysB[i];
    if (removed.size > 0 && pairSetHas(RA, RB, u, v)) continue;
    keys[k++] = u * n + v;
  }
  const sorted = keys.subarray(0, k).sort();
  const addA = sharedArray('i32', k);
  const addB = sharedArray('i32', k);
  for (let i = 0; i < k; i++) {
    const u = Math.floor(sorted[i] / n);
    addA[i] = u;
    addB[i] = sorted[i] - u * n;
  }
  // Positions instead of a set lookup per edge (many).
  const dropped: number[] = [];
  for (let i = 0; i < RA.length; i++) {
    const u = RA[i];
    if (u === -1) continue;
    for (let j = G.offsets[u]; j < G.offsets[u + 1]; j++) if (G.targets[j] === RB[i]) dropped.push(j);
  }
  dropped.sort((x, y) => x - y);
  const edges = G.targets.length - dropped.length + k;
  dropped.push(Infinity);
  const droppedAt = sharedArray('f64', dropped.length);
  droppedAt.set(dropped);
  return { addA, addB, dropped: droppedAt, edges };
}

/**
 * The folded edges in order, a slice at a time: `fill(out, sources)` writes the next out.length
 * edges' sources (rows) or targets. Slices continue where the last one ended.
 */
class FoldCursor {
  private readonly at: FoldAt = { u: 0, j: 0, ai: 0, di: 0 };
  constructor(
    private readonly G: Csr,
    private readonly fold: Fold,
  ) {}

  fill(out: TypedArray, sources: boolean): void {
    const { addA, addB, dropped } = this.fold;
    foldFill(this.G.offsets, this.G.targets, addA, addB, dropped, this.at, out, 0, out.length, sources);
  }
}

/**
 * The following rows after the follows and unfollows, as a new CSR, and the followers' offsets
 * after them (each user's follower count), from their offsets before: O(users + changes), where
 * counting them from the new rows reads every edge (3.6 s a day at 10M users and 495M edges).
 */
export async function newFollowing(
  exec: Executor,
  G: Csr,
  n: number,
  added: PairSet,
  removed: PairSet,
  followerOffsets: Int32Array | Float64Array,
): Promise<{ following: Csr; followerOffsets: Int32Array | Float64Array }> {
  const fold = foldOf(G, added, removed);
  const { addA, addB, dropped, edges } = fold;
  const offsets = edges < 2 ** 31 ? sharedArray('i32', n + 1) : sharedArray('f64', n + 1);
  let k = 0;
  let ai = 0;
  let di = 0;
  for (let u = 0; u < n; u++) {
    offsets[u] = k;
    const hi = G.offsets[u + 1];
    let dropHere = 0;
    while (dropped[di] < hi) {
      di++;
      dropHere++;
    }
    let addHere = 0;
    while (ai < addA.length && addA[ai] === u) {
      ai++;
      addHere++;
    }
    k += hi - G.offsets[u] - dropHere + addHere;
  }
  offsets[n] = k;
  // The rows by parts of about equal edges, side by side (each part also takes its share of the
  // new array's first-touch page faults).
  const targets = sharedArray('i32', edges);
  const parts = Math.max(1, Math.min(exec.threads, 4, Math.ceil(edges / 2 ** 16)));
  const bounds = sharedArray('f64', parts + 1);
  for (let p = 1; p < parts; p++) bounds[p] = lastAtMost(offsets, Math.floor((edges * p) / parts), 0, n);
  bounds[parts] = n;
  await exec.run(FK.foldRows, { offsets: G.offsets, targets: G.targets, addA, addB, dropped, bounds, newOffsets: offsets, out: targets }, parts, { parts });
  // Follower counts: each new follow adds one to its followee, each dropped edge takes one away.
  const delta = new Int32Array(n);
  for (let i = 0; i < addB.length; i++) delta[addB[i]]++;
  for (let d = 0; d < dropped.length - 1; d++) delta[G.targets[dropped[d]]]--;
  const F = edges < 2 ** 31 ? sharedArray('i32', n + 1) : sharedArray('f64', n + 1);
  let acc = 0;
  for (let v = 0; v < n; v++) {
    F[v] = acc;
    acc += followerOffsets[v + 1] - followerOffsets[v] + delta[v];
  }
  F[n] = acc;
  if (acc !== edges) throw new Error(`newFollowing: the follower counts add up to ${acc}, the rows to ${edges} edges`);
  return { following: { offsets, targets }, followerOffsets: F };
}

/** The folded edges as graph-end.arrow's columns, generated while the file is written. */
export function foldedEdges(G: Csr, added: PairSet, removed: PairSet): { rows: number; source: GeneratedValues; target: GeneratedValues } {
  const fold = foldOf(G, added, removed);
  const column = (sources: boolean): GeneratedValues => {
    const cursor = new FoldCursor(G, fold);
    return { length: fold.edges, fill: (out) => cursor.fill(out, sources) };
  };
  return { rows: fold.edges, source: column(true), target: column(false) };
}
