/**
 * The fold of the day's follows into the following rows (followFold.ts) as a kernel: the daily
 * rebuild writes the new rows by parts of the rows side by side. A part starts where a pass in
 * order would be at its first row (that row's first old edge, its first new follow, the first
 * dropped edge from there: found by search) and writes its rows to their place in the new targets.
 */
import { kernel, kernelList } from '../sim-core/kernel.ts';
import type { TypedArray } from '../sim-core/table.ts';

/** Where a fold is: row u, its old edge j, the next new follow ai and dropped edge di. */
export interface FoldAt {
  u: number;
  j: number;
  ai: number;
  di: number;
}

/**
 * Writes the folded edges' sources (rows) or targets to out[from .. to), continuing from `at`
 * (which it advances): each row's old edges not dropped, then its new follows. `dropped` ends with
 * Infinity.
 */
export function foldFill(
  offsets: ArrayLike<number>,
  targets: Int32Array,
  addA: Int32Array,
  addB: Int32Array,
  dropped: ArrayLike<number>,
  at: FoldAt,
  out: TypedArray,
  from: number,
  to: number,
  sources: boolean,
): void {
  let { u, j, ai, di } = at;
  for (let i = from; i < to; ) {
    const end = offsets[u + 1];
    if (j < end) {
      // The run of kept edges up to the row's end, the next dropped edge or the slice's end, in
      // one tight loop (a test per edge of all three made the daily rebuild ~8% slower).
      const stop = Math.min(end, dropped[di], j + to - i);
      if (sources) for (; j < stop; j++) out[i++] = u;
      else for (; j < stop; j++) out[i++] = targets[j];
      if (j === dropped[di]) {
        di++;
        j++;
      }
    } else if (ai < addA.length && addA[ai] === u) {
      out[i++] = sources ? u : addB[ai];
      ai++;
    } else u++;
  }
  at.u = u;
  at.j = j;
  at.ai = ai;
  at.di = di;
}

/** The first index i with sorted[i] >= x (sorted.length when none is). */
function firstAtLeast(sorted: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Parts p of the rows [bounds[p], bounds[p + 1]): their new rows' targets, to out[newOffsets[..]]. */
const foldRows = kernel(
  {
    reads: { offsets: 'offsets', targets: 'i32', addA: 'i32', addB: 'i32', dropped: 'f64', bounds: 'f64', newOffsets: 'offsets' },
    writes: { out: 'i32' },
    params: [],
  },
  (a, start, end): void => {
    for (let p = start; p < end; p++) {
      const h = a.bounds[p];
      const from = a.newOffsets[h];
      const to = a.newOffsets[a.bounds[p + 1]];
      if (from >= to) continue;
      const at = { u: h, j: a.offsets[h], ai: firstAtLeast(a.addA, h), di: firstAtLeast(a.dropped, a.offsets[h]) };
      foldFill(a.offsets, a.targets, a.addA, a.addB, a.dropped, at, a.out, from, to, false);
    }
  },
);

export const kernels = kernelList(import.meta.url, { foldRows });
