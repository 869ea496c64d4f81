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

/**
 * The follow-backs of edges with block sources (csr.ts rowsFromBlocks), per part p of the rows
 * [bounds[p], bounds[p + 1]) and their blocks' edges. With scatter 0 it counts: counts[p * nodes +
 * v] += each of the part's follow-backs whose source is v, inBlock[u] += each in u's block. With
 * scatter 1, counts holding cursors, each follow-back's target (its block's owner) goes to
 * backTargets[counts[p * nodes + v]++]: parts in row order, edges in order, as one pass would.
 */
const blockBacks = kernel(
  { reads: { starts: 'f64', back: 'i32', dst: 'i32', bounds: 'f64' }, writes: { counts: 'offsets', inBlock: 'i32', backTargets: 'i32' }, params: ['nodes', 'scatter'] },
  (a, start, end): void => {
    const { starts, back, dst, counts: C, inBlock, backTargets: BT, nodes, scatter } = a;
    for (let p = start; p < end; p++) {
      let u = a.bounds[p];
      const lo = starts[u];
      const hi = starts[a.bounds[p + 1]];
      if (lo >= hi) continue;
      const base = p * nodes;
      for (let w = Math.floor(lo / 32), w1 = Math.floor((hi - 1) / 32); w <= w1; w++) {
        // The word's bits of edges in [lo, hi) only.
        let bits = back[w];
        if (w * 32 < lo) bits &= -1 << (lo & 31);
        if (hi - w * 32 < 32) bits &= (1 << (hi - w * 32)) - 1;
        for (; bits !== 0; bits &= bits - 1) {
          const e = w * 32 + 31 - Math.clz32(bits & -bits);
          while (e >= starts[u + 1]) u++;
          const v = dst[e - 1];
          if (scatter) BT[C[base + v]++] = u;
          else {
            if (!(v >= 0 && v < u)) throw new Error(`block sources: the follow-back at edge ${e} has source ${v}, not before its block's owner ${u}`);
            C[base + v]++;
            inBlock[u]++;
          }
        }
      }
    }
  },
);

/**
 * Row v of the following CSR from its block (csr.ts rowsFromBlocks): its own edges (not marked in
 * back), read from X at e - shift, last first, then its follow-backs, to dst[offsets[v] ..].
 */
function placeRow(a: { starts: Float64Array; back: Int32Array; inBlock: Int32Array; backOf: Float64Array; backTargets: Int32Array; offsets: Int32Array | Float64Array; dst: Int32Array }, v: number, X: Int32Array, shift: number): void {
  const { starts, back, dst } = a;
  const lo = starts[v];
  const hi = starts[v + 1];
  const own = hi - lo - a.inBlock[v];
  let w = a.offsets[v] + own;
  for (let b = a.backOf[v], b1 = a.backOf[v + 1]; b < b1; b++) dst[w++] = a.backTargets[b];
  w = a.offsets[v] + own - 1;
  if (a.inBlock[v] === 0) for (let e = hi - 1; e >= lo; e--) dst[w--] = X[e - shift];
  else for (let e = hi - 1; e >= lo; e--) if (((back[e >>> 5] >>> (e & 31)) & 1) === 0) dst[w--] = X[e - shift];
}

/**
 * The following rows placed in dst, in place of their blocks, per part p of the rows [bounds[p],
 * bounds[p + 1]), each part's rows last first. Rows only move right, so a part overwrites nothing
 * that it or a later part reads, except the start of the next part's edges: part p's rows before
 * sideEnd[p], whose edges lie below where part p's first row goes, read them from `side` (a copy
 * made before any part ran, from side[sideAt[p]] on).
 */
const placeBlockRows = kernel(
  {
    reads: { starts: 'f64', back: 'i32', inBlock: 'i32', backOf: 'f64', backTargets: 'i32', offsets: 'offsets', bounds: 'f64', sideAt: 'f64', sideEnd: 'f64', side: 'i32' },
    writes: { dst: 'i32' },
    params: [],
  },
  (a, start, end): void => {
    for (let p = start; p < end; p++) {
      const h = a.bounds[p];
      const r = a.sideEnd[p];
      for (let v = a.bounds[p + 1] - 1; v >= r; v--) placeRow(a, v, a.dst, 0);
      for (let v = r - 1; v >= h; v--) placeRow(a, v, a.side, a.starts[h] - a.sideAt[p]);
    }
  },
);

export const kernels = kernelList(import.meta.url, { bucketCounts, bucketScatter, bucketRows, blockBacks, placeBlockRows });
