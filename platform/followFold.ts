/**
 * Folding the follows and unfollows a run has collected into the following rows: row u becomes its
 * kept edges (those not unfollowed), in order, then its new follows by followee id (those not
 * unfollowed again). `newFollowing` builds the new rows as a CSR (the daily rebuild: in place where
 * the rows have room after them, else by parts of the rows on the threads: foldKernels.ts);
 * `foldedEdges` generates the same edges as graph-end.arrow's columns while the file is written,
 * so the end of a run needs no second copy of the rows (4 bytes an edge: 2 GB at 495M edges).
 */
import { foldRoom, rowsPinned, type Csr } from '../sim-core/csr.ts';
import { lastAtMost } from '../sim-core/csrKernels.ts';
import type { Executor } from '../sim-core/exec.ts';
import type { GeneratedValues } from '../sim-core/io/arrowFile.ts';
import { pairSetHas, type PairSet } from '../sim-core/pairSet.ts';
import { sharedArray, type TypedArray } from '../sim-core/table.ts';
import { foldFill, kernels as FK, type FoldAt } from './foldKernels.ts';
import type { FollowTable } from './tables.ts';

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
  private readonly G: Csr;
  private readonly fold: Fold;
  private readonly at: FoldAt = { u: 0, j: 0, ai: 0, di: 0 };
  constructor(G: Csr, fold: Fold) {
    this.G = G;
    this.fold = fold;
  }

  fill(out: TypedArray, sources: boolean): void {
    const { addA, addB, dropped } = this.fold;
    foldFill(this.G.offsets, this.G.targets, addA, addB, dropped, this.at, out, 0, out.length, sources);
  }
}

/**
 * Whether newFollowing folds G's rows in place when they come to `edges` (at most G's edges plus
 * the pending follows): they lie at the start of a buffer with room for them (rows a checkpoint
 * restored have none), and no background reader holds it (pinRows: set-up's rows while graph.arrow
 * is written).
 */
export function foldsInPlace(G: Csr, edges: number): boolean {
  const T = G.targets;
  return T.byteOffset === 0 && T.buffer.byteLength >= 4 * Math.max(edges, T.length) && !rowsPinned(T);
}

/**
 * The following rows after the follows and unfollows, as a new CSR, and the followers' offsets
 * after them (each user's follower count), from their offsets before: O(users + changes), where
 * counting them from the new rows reads every edge (3.6 s a day at 10M users and 495M edges).
 *
 * If G's rows can be folded in place (foldsInPlace) they are (foldInPlace) and G's rows are gone;
 * else the new rows are written by parts on the threads into a new buffer with room (foldRoom). In
 * place, a day's rebuild moves the rows once (10M agents: ~0.8 s on one thread) where a new array
 * cost its 2 GB at the run's peak and ~5 s of first-touch page faults.
 */
export async function newFollowing(
  exec: Executor,
  G: Csr,
  n: number,
  follows: FollowTable,
  followerOffsets: Int32Array | Float64Array,
): Promise<{ following: Csr; followerOffsets: Int32Array | Float64Array; inPlace: boolean }> {
  const fold = foldOf(G, follows.added, follows.removed);
  const { addA, addB, dropped, edges } = fold;
  const offsets = edges < 2 ** 31 ? sharedArray('i32', n + 1) : sharedArray('f64', n + 1);
  // Rows with follows or unfollows, and where their follows and dropped edges start.
  const changed: number[] = [];
  const changedAdd: number[] = [];
  const changedDrop: number[] = [];
  let k = 0;
  let ai = 0;
  let di = 0;
  for (let u = 0; u < n; u++) {
    offsets[u] = k;
    const hi = G.offsets[u + 1];
    const a0 = ai;
    const d0 = di;
    while (dropped[di] < hi) di++;
    while (ai < addA.length && addA[ai] === u) ai++;
    if (ai > a0 || di > d0) {
      changed.push(u);
      changedAdd.push(a0);
      changedDrop.push(d0);
    }
    k += hi - G.offsets[u] - (di - d0) + (ai - a0);
  }
  offsets[n] = k;
  // Follower counts: each new follow adds one to its followee, each dropped edge takes one away
  // (read before the rows change).
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

  const old = G.targets;
  // For an executor that keeps a device copy of the rows: which parts of the new rows are old
  // edges, taken before the fold overwrites them in place.
  const moved = follows.onDevice ? foldPieces(G.offsets, offsets, fold, changed, changedDrop) : undefined;
  const inPlace = foldsInPlace(G, edges);
  let targets: Int32Array;
  if (inPlace) {
    const work = new Int32Array(old.buffer, 0, Math.max(edges, old.length));
    foldInPlace(G.offsets, offsets, work, fold, changed, changedAdd, changedDrop);
    targets = new Int32Array(old.buffer, 0, edges);
  } else {
    const room = Math.max(foldRoom.min, Math.ceil(edges * foldRoom.fraction));
    const buffer = new SharedArrayBuffer(4 * (edges + room));
    targets = new Int32Array(buffer, 0, edges);
    // The rows by parts of about equal edges, side by side (each part also takes its share of the
    // new array's first-touch page faults).
    const parts = Math.max(1, Math.min(exec.threads, 4, Math.ceil(edges / 2 ** 16)));
    const bounds = sharedArray('f64', parts + 1);
    for (let p = 1; p < parts; p++) bounds[p] = lastAtMost(offsets, Math.floor((edges * p) / parts), 0, n);
    bounds[parts] = n;
    await exec.run(FK.foldRows, { offsets: G.offsets, targets: old, addA, addB, dropped, bounds, newOffsets: offsets, out: targets }, parts, { parts });
  }
  if (moved) {
    follows.rearranged(targets, old, moved.pieces);
    follows.wroteAt(targets, moved.added, moved.added.length);
  }
  return { following: { offsets, targets }, followerOffsets: F, inPlace };
}

/**
 * The new rows (offsets N) as pieces of the old (offsets O): triples (new position, old position,
 * edges) for the old edges kept, a piece per stretch of unchanged rows and per part of a changed
 * row between its dropped edges (neighbours merged), and the positions of the new follows (the
 * rest). O(changed rows + dropped edges + follows): at 10M users a day brings ~1.7M follows, and a
 * copy on the device of the ~495M edges from these (~20 MB up) replaces sending up the 2 GB of rows.
 */
function foldPieces(O: ArrayLike<number>, N: ArrayLike<number>, fold: Fold, changed: number[], changedDrop: number[]): { pieces: number[]; added: Int32Array } {
  const { dropped, addA } = fold;
  const n = O.length - 1;
  const pieces: number[] = [];
  const piece = (d: number, s: number, len: number): void => {
    if (len <= 0) return;
    const k = pieces.length;
    if (k > 0 && pieces[k - 3] + pieces[k - 1] === d && pieces[k - 2] + pieces[k - 1] === s) pieces[k - 1] += len;
    else pieces.push(d, s, len);
  };
  const added = new Int32Array(addA.length);
  let a = 0;
  let x = 0;
  for (let i = 0; i < changed.length; i++) {
    const u = changed[i];
    piece(N[x], O[x], O[u] - O[x]);
    let w = N[u];
    let j = O[u];
    for (let di = changedDrop[i]; dropped[di] < O[u + 1]; di++) {
      piece(w, j, dropped[di] - j);
      w += dropped[di] - j;
      j = dropped[di] + 1;
    }
    piece(w, j, O[u + 1] - j);
    w += O[u + 1] - j;
    while (w < N[u + 1]) added[a++] = w++;
    x = u + 1;
  }
  piece(N[x], O[x], O[n] - O[x]);
  if (a !== added.length) throw new Error(`foldPieces: ${a} new follows placed, ${added.length} expected`);
  return { pieces, added };
}

/**
 * The fold written over the old rows: T holds the rows at old offsets O and is long enough for
 * them and the new ones (offsets N). A row's shift is N[u] - O[u]. Between two changed rows (with
 * follows or dropped edges) the rows keep one shift and move as one stretch (one copyWithin); a
 * changed row is read whole before it is written (into scratch when it drops edges; its follows go
 * after its kept edges). Units (stretches and changed rows) that move right go first, from the
 * last down, then those that move left or stay, from the first up. Why nothing is overwritten
 * before it is read: take a maximal run of consecutive right-moving units [b, c). Unit c moves left
 * or is past the end, so N[c] <= O[c], and N[b] > O[b]: the run writes inside its own old span
 * [O[b], O[c]), from the top down, each unit below the units already moved. A left-moving unit
 * writes [N[u], N[u + 1]) from its own old start or below it (N[u] <= O[u]); it reaches past its
 * old end only when the next unit moves right, which has moved already, and no further than that
 * unit's new start. The left-moving units, from the first up, each read their rows before any later
 * one writes (each writes below its next's old start, or into moved room).
 */
function foldInPlace(
  O: ArrayLike<number>,
  N: ArrayLike<number>,
  T: Int32Array,
  fold: Fold,
  changed: number[],
  changedAdd: number[],
  changedDrop: number[],
): void {
  const { addA, addB, dropped } = fold;
  const n = O.length - 1;
  let scratch = new Int32Array(64);
  const row = (i: number): void => {
    const u = changed[i];
    const o0 = O[u];
    const o1 = O[u + 1];
    let w = N[u];
    let di = changedDrop[i];
    if (dropped[di] >= o1) {
      if (w !== o0) T.copyWithin(w, o0, o1);
      w += o1 - o0;
    } else {
      if (scratch.length < o1 - o0) scratch = new Int32Array(o1 - o0);
      let kept = 0;
      for (let j = o0; j < o1; j++) {
        if (j === dropped[di]) di++;
        else scratch[kept++] = T[j];
      }
      T.set(scratch.subarray(0, kept), w);
      w += kept;
    }
    for (let ai = changedAdd[i]; ai < addA.length && addA[ai] === u; ai++) T[w++] = addB[ai];
  };
  /** The unchanged rows after changed row i, as one stretch: [from, to) and their shift. */
  const stretch = (i: number): [number, number, number] => {
    const x = changed[i] + 1;
    const y = i + 1 < changed.length ? changed[i + 1] : n;
    return [O[x], O[y], N[x] - O[x]];
  };
  for (let i = changed.length - 1; i >= 0; i--) {
    const [from, to, shift] = stretch(i);
    if (shift > 0 && to > from) T.copyWithin(from + shift, from, to);
    const u = changed[i];
    if (N[u] > O[u]) row(i);
  }
  for (let i = 0; i < changed.length; i++) {
    const u = changed[i];
    if (N[u] <= O[u]) row(i);
    const [from, to, shift] = stretch(i);
    if (shift < 0 && to > from) T.copyWithin(from + shift, from, to);
  }
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
