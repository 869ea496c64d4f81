/**
 * CSR construction (csr.ts) as a counting sort that keeps its random writes in cache: rows are
 * grouped into buckets of 2^shift consecutive rows, sized so that a bucket's slice of the targets
 * (~128k entries) fits in a core's cache.
 *
 * 1. bucketCounts: each of `parts` equal ranges of the edges counts its edges per bucket.
 * 2. bucketScatter: each range writes its edges, in edge order, into its share of each bucket's
 *    slice of `targets` (a few thousand sequential write streams instead of one random write per
 *    edge), with the key's offset within the bucket beside it in `low` (2 bytes per edge).
 * 3. bucketRows: each bucket counts its rows, writes their offsets, and reorders its slice by row,
 *    stably, in cache.
 * Each row lists its neighbours in edge order (ranges in order, edges in order within a range, a
 * stable pass per bucket), so the result does not depend on the part or thread count. On a large
 * graph passes 2 and 3 run once per group of buckets [b0, b1) (csr.ts `csrScratch`): each pass
 * over the edges writes only that group's, and `low` holds only them (from targets index lowBase).
 *
 * The edges are (keys, values), then (keys2, values2) when given, as one sequence; or, for a
 * transpose (csr.ts `withFollowers`), the entries of a CSR, whose keys are its targets and whose
 * values are their rows, found from `rowOffsets`. Edge sources given as blocks (csr.ts
 * `BlockSources`, as values: keys = the targets) use the same walk over `rowOffsets`, with `back`
 * marking the edges whose source is the previous edge's target instead.
 */
import { kernel, kernelList } from './kernel.ts';

/** The last index i in [lo, hi] with sorted[i] <= x (lo when none is). */
export function lastAtMost(sorted: ArrayLike<number>, x: number, lo: number, hi: number): number {
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (sorted[mid] <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Edge range p of `parts` equal ranges of the `m` edges. */
function partRange(a: { m: number; parts: number }, p: number): [number, number] {
  return [Math.floor((a.m * p) / a.parts), Math.floor((a.m * (p + 1)) / a.parts)];
}

/** Whether bit e of `back` is set: edge e's source is edge e - 1's target (csr.ts BlockSources). */
const isBack = (back: Int32Array | undefined, e: number): boolean => back !== undefined && ((back[e >>> 5] >>> (e & 31)) & 1) === 1;

/** Pass 1: counts[p * buckets + b] = the edges of range p whose key is in bucket b. */
const bucketCounts = kernel({ reads: { keys: 'i32', keys2: 'i32?' }, writes: { counts: 'f64' }, params: ['parts', 'buckets', 'shift', 'm'] }, (a, start, end): void => {
  const { counts: C, shift } = a;
  const K = a.keys;
  const m1 = K.length;
  for (let p = start; p < end; p++) {
    const [lo, hi] = partRange(a, p);
    const local = new Int32Array(a.buckets);
    for (let e = lo, e1 = Math.min(hi, m1); e < e1; e++) local[K[e] >>> shift]++;
    const K2 = a.keys2;
    if (K2) for (let e = Math.max(lo, m1) - m1, e1 = hi - m1; e < e1; e++) local[K2[e] >>> shift]++;
    for (let b = 0; b < a.buckets; b++) C[p * a.buckets + b] = local[b];
  }
});

/**
 * Pass 2: cursor[p * buckets + b] starts where range p's edges of bucket b go (after the bucket's
 * earlier ranges); each edge's value goes to targets and its key's offset in the bucket to low.
 */
const bucketScatter = kernel(
  {
    reads: { keys: 'i32', values: 'i32?', keys2: 'i32?', values2: 'i32?', rowOffsets: 'offsets?', back: 'i32?' },
    writes: { cursor: 'f64', targets: 'i32', low: 'u16' },
    params: ['parts', 'buckets', 'shift', 'm', 'nodes', 'b0', 'b1', 'lowBase'],
  },
  (a, start, end): void => {
    const { cursor: Cur, targets: T, low: L, shift, b0, b1, lowBase } = a;
    const mask = (1 << shift) - 1;
    for (let p = start; p < end; p++) {
      const [lo, hi] = partRange(a, p);
      if (lo >= hi) continue;
      const base = p * a.buckets;
      const cur = Float64Array.from(Cur.subarray(base, base + a.buckets));
      const K = a.keys;
      const O = a.rowOffsets;
      const B = a.back;
      if (O) {
        // The row of edge lo; then walk the rows with the edges. Values are the rows (or, marked
        // in back, the previous edge's key).
        let u = lastAtMost(O, lo, 0, a.nodes - 1);
        let next = O[u + 1];
        for (let e = lo; e < hi; e++) {
          while (e >= next) next = O[++u + 1];
          const k = K[e];
          const b = k >>> shift;
          if (b < b0 || b >= b1) continue;
          const at = cur[b]++;
          T[at] = isBack(B, e) ? K[e - 1] : u;
          L[at - lowBase] = k & mask;
        }
      } else {
        const V = a.values!;
        const m1 = K.length;
        for (let e = lo, e1 = Math.min(hi, m1); e < e1; e++) {
          const k = K[e];
          const b = k >>> shift;
          if (b < b0 || b >= b1) continue;
          const at = cur[b]++;
          T[at] = V[e];
          L[at - lowBase] = k & mask;
        }
        const K2 = a.keys2;
        const V2 = a.values2;
        if (K2 && V2) {
          for (let e = Math.max(lo, m1) - m1, e1 = hi - m1; e < e1; e++) {
            const k = K2[e];
            const b = k >>> shift;
            if (b < b0 || b >= b1) continue;
            const at = cur[b]++;
            T[at] = V2[e];
            L[at - lowBase] = k & mask;
          }
        }
      }
    }
  },
);

// Worker-local scratch for pass 3: a bucket's row cursors and its slice's values.
let rowCur = new Float64Array(0);
let slice = new Int32Array(0);

/**
 * Pass 3, over buckets: bucket b's slice targets[starts[b] .. starts[b + 1]) holds its edges in
 * edge order; its rows' offsets are written and the slice reordered by row (stable).
 */
const bucketRows = kernel(
  { reads: { starts: 'f64', low: 'u16' }, writes: { offsets: 'offsets', targets: 'i32' }, params: ['shift', 'nodes', 'b0', 'lowBase'] },
  (a, start, end): void => {
    // low holds the entries of this group of buckets (b0 on), from targets index lowBase on.
    const { starts: S, low: L, offsets: O, targets: T, shift, nodes, lowBase } = a;
    const width = 1 << shift;
    if (rowCur.length < width) rowCur = new Float64Array(width);
    for (let b = a.b0 + start; b < a.b0 + end; b++) {
      const lo = S[b];
      const hi = S[b + 1];
      const r0 = b << shift;
      const rows = Math.min(width, nodes - r0);
      rowCur.fill(0, 0, rows);
      for (let i = lo - lowBase; i < hi - lowBase; i++) rowCur[L[i]]++;
      let acc = lo;
      for (let j = 0; j < rows; j++) {
        O[r0 + j] = acc;
        const c = rowCur[j];
        rowCur[j] = acc;
        acc += c;
      }
      const n = hi - lo;
      if (slice.length < n) slice = new Int32Array(Math.max(n, 2 * slice.length));
      slice.set(T.subarray(lo, hi));
      for (let i = 0, l = lo - lowBase; i < n; i++) T[rowCur[L[l + i]]++] = slice[i];
    }
  },
);

export const kernels = kernelList(import.meta.url, { bucketCounts, bucketScatter, bucketRows });
