/**
 * The kernel list. Every heavy loop in socsim is one of these functions; phases call them through
 * an executor (`exec.ts`), which splits the rows into fixed chunks and runs each chunk either in
 * the main thread (`--threads 1`) or in a worker. A kernel's contract:
 *
 *   kernel(args, start, end) → optional number[] partial result for rows [start, end)
 *
 * - It writes only rows in [start, end) of its outputs (or, for `spread`, only idempotent marks),
 *   so chunks can run in any order on any thread and give the same result.
 * - Randomness comes only from `rng.ts`, keyed by `args.key` and the row or edge index.
 * - Partial results (sums, counts) are returned per chunk and combined by the caller in chunk order.
 * - Array arguments are typed arrays (on SharedArrayBuffer when threads > 1); the rest are numbers.
 *
 * CSR arguments: `offsets` (Int32Array or Float64Array, length n + 1) and `targets` (Int32Array);
 * row v's neighbours are targets[offsets[v] .. offsets[v + 1]).
 */
import { uniform } from './rng.ts';
import type { TypedArray } from './table.ts';

type Offsets = Int32Array | Float64Array;
type Num = TypedArray;

/** out[i] = value. */
function fill(a: { out: Num; value: number }, start: number, end: number): void {
  a.out.fill(a.value, start, end);
}

/** out[i] = src[i]. */
function copy(a: { out: Num; src: Num }, start: number, end: number): void {
  a.out.set(a.src.subarray(start, end), start);
}

/**
 * Picks one neighbour of each row uniformly: out[v] = targets[offsets[v] + floor(u * deg)], or -1
 * for rows without neighbours. The draw is keyed by the row.
 */
function sampleNeighbor(
  a: { offsets: Offsets; targets: Int32Array; out: Int32Array; key: number },
  start: number,
  end: number,
): void {
  const { offsets: Off, targets: Tgt, out: Out, key } = a;
  for (let v = start; v < end; v++) {
    const lo = Off[v];
    const deg = Off[v + 1] - lo;
    Out[v] = deg === 0 ? -1 : Tgt[lo + Math.floor(uniform(key, v) * deg)];
  }
}

/** out[i] = src[index[i]], or src[i] when index[i] < 0. */
function gather(a: { out: Num; src: Num; index: Int32Array }, start: number, end: number): void {
  const { out: Out, src: Src, index: Idx } = a;
  for (let i = start; i < end; i++) {
    const j = Idx[i];
    Out[i] = Src[j < 0 ? i : j];
  }
}

/**
 * Independent-cascade style spreading along CSR rows (push): for every row u in range with
 * state[u] === from, for each neighbour v (edge j) with state[v] === susceptible, with probability
 * p (draw keyed by the edge index j): next[v] = mark. Marks are idempotent, so concurrent chunks
 * writing the same v agree; state is read-only here (synchronous semantics).
 * Returns [attempts, successes].
 */
function spread(
  a: {
    offsets: Offsets;
    targets: Int32Array;
    state: Uint8Array;
    next: Uint8Array;
    from: number;
    susceptible: number;
    mark: number;
    p: number;
    key: number;
  },
  start: number,
  end: number,
): number[] {
  const { offsets: Off, targets: Tgt, state: State, next: Next, from, susceptible, mark, p, key } = a;
  let attempts = 0;
  let successes = 0;
  for (let u = start; u < end; u++) {
    if (State[u] !== from) continue;
    const hi = Off[u + 1];
    for (let j = Off[u]; j < hi; j++) {
      const v = Tgt[j];
      if (State[v] !== susceptible) continue;
      attempts++;
      if (uniform(key, j) < p) {
        Next[v] = mark;
        successes++;
      }
    }
  }
  return [attempts, successes];
}

/**
 * Per-row state transition: for every row, if next[i] !== 0 and state[i] === when, state[i] = next[i];
 * next[i] is reset to 0. Returns [rows changed].
 */
function applyMarks(a: { state: Uint8Array; next: Uint8Array; when: number }, start: number, end: number): number[] {
  const { state: State, next: Next, when } = a;
  let changed = 0;
  for (let i = start; i < end; i++) {
    const m = Next[i];
    if (m !== 0) {
      if (State[i] === when) {
        State[i] = m;
        changed++;
      }
      Next[i] = 0;
    }
  }
  return [changed];
}

/**
 * Stochastic recoding: rows with state[i] === from move to `to` with probability p (keyed by row);
 * p = 1 moves all of them. Returns [rows moved].
 */
function transition(
  a: { state: Uint8Array; from: number; to: number; p: number; key: number },
  start: number,
  end: number,
): number[] {
  const { state: State, from, to, p, key } = a;
  let moved = 0;
  for (let i = start; i < end; i++) {
    if (State[i] === from && (p >= 1 || uniform(key, i) < p)) {
      State[i] = to;
      moved++;
    }
  }
  return [moved];
}

/**
 * Segment mean over CSR rows (an SpMV with row-normalised weights):
 * out[v] = (selfWeight * x[v] + sum_u x[u]) / (selfWeight + deg(v)); rows with no neighbours and
 * selfWeight 0 keep x[v].
 */
function segmentMean(
  a: { offsets: Offsets; targets: Int32Array; x: Float32Array | Float64Array; out: Float32Array | Float64Array; selfWeight: number },
  start: number,
  end: number,
): void {
  const { offsets: Off, targets: Tgt, x: X, out: Out, selfWeight } = a;
  for (let v = start; v < end; v++) {
    const lo = Off[v];
    const hi = Off[v + 1];
    let s = selfWeight * X[v];
    for (let j = lo; j < hi; j++) s += X[Tgt[j]];
    const w = selfWeight + (hi - lo);
    Out[v] = w > 0 ? s / w : X[v];
  }
}

/**
 * Bounded-confidence mean (Hegselmann-Krause): out[v] = mean of x[u] over u in {v} ∪ N(v) with
 * |x[u] - x[v]| <= eps.
 */
function segmentBoundedMean(
  a: { offsets: Offsets; targets: Int32Array; x: Float32Array; out: Float32Array; eps: number },
  start: number,
  end: number,
): void {
  const { offsets: Off, targets: Tgt, x: X, out: Out, eps } = a;
  for (let v = start; v < end; v++) {
    const xv = X[v];
    let s = xv;
    let c = 1;
    const hi = Off[v + 1];
    for (let j = Off[v]; j < hi; j++) {
      const xu = X[Tgt[j]];
      const d = xu - xv;
      if (d <= eps && d >= -eps) {
        s += xu;
        c++;
      }
    }
    Out[v] = s / c;
  }
}

/**
 * Threshold rule (linear threshold), fused: every row with state[v] === from computes the share of
 * its neighbours whose state equals `value` and, when that share reaches threshold[v] (and it has
 * at least one neighbour), gets next[v] = mark. Rows not in state `from` are skipped, so the cost
 * falls as adoption spreads. Returns [rows marked].
 */
function thresholdMark(
  a: {
    offsets: Offsets;
    targets: Int32Array;
    state: Uint8Array;
    threshold: Float32Array;
    next: Uint8Array;
    from: number;
    value: number;
    mark: number;
  },
  start: number,
  end: number,
): number[] {
  const { offsets: Off, targets: Tgt, state: State, threshold: Th, next: Next, from, value, mark } = a;
  let marked = 0;
  for (let v = start; v < end; v++) {
    if (State[v] !== from) continue;
    const lo = Off[v];
    const hi = Off[v + 1];
    if (hi === lo) continue;
    let c = 0;
    for (let j = lo; j < hi; j++) if (State[Tgt[j]] === value) c++;
    if (c / (hi - lo) >= Th[v]) {
      Next[v] = mark;
      marked++;
    }
  }
  return [marked];
}

/**
 * Pairwise bounded-confidence step (Deffuant, one-sided synchronous variant): each row moves toward
 * its sampled partner partner[i] by mu * (x[j] - x[i]) when |x[j] - x[i]| < eps.
 */
function boundedStep(
  a: { x: Float32Array; out: Float32Array; partner: Int32Array; eps: number; mu: number },
  start: number,
  end: number,
): void {
  const { x: X, out: Out, partner: P, eps, mu } = a;
  for (let i = start; i < end; i++) {
    const j = P[i];
    const xi = X[i];
    if (j < 0) {
      Out[i] = xi;
      continue;
    }
    const d = X[j] - xi;
    Out[i] = d < eps && d > -eps ? xi + mu * d : xi;
  }
}

/** out[i] = 1 with probability p (keyed by row), else 0. */
function bernoulli(a: { out: Uint8Array; p: number; key: number }, start: number, end: number): void {
  const { out: Out, p, key } = a;
  for (let i = start; i < end; i++) Out[i] = uniform(key, i) < p ? 1 : 0;
}

/** out[i] = table[group[i]]: per-group broadcast of a parameter. */
function broadcast(a: { out: Num; table: Num; group: Num }, start: number, end: number): void {
  const { out: Out, table: T, group: G } = a;
  for (let i = start; i < end; i++) Out[i] = T[G[i]];
}

/** [count, sum x, sum x^2, sum x^3, sum x^4] over the rows (raw power sums, combined in chunk order). */
function moments(a: { x: Num }, start: number, end: number): number[] {
  const X = a.x;
  let s = 0;
  let s2 = 0;
  let s3 = 0;
  let s4 = 0;
  for (let i = start; i < end; i++) {
    const v = X[i];
    const v2 = v * v;
    s += v;
    s2 += v2;
    s3 += v2 * v;
    s4 += v2 * v2;
  }
  return [end - start, s, s2, s3, s4];
}

/** Histogram of x into `bins` equal bins over [lo, hi] (values outside are clamped). */
function histogram(a: { x: Num; bins: number; lo: number; hi: number }, start: number, end: number): number[] {
  const { x: X, bins, lo, hi } = a;
  const h = new Array<number>(bins).fill(0);
  const scale = bins / (hi - lo);
  for (let i = start; i < end; i++) {
    let b = Math.floor((X[i] - lo) * scale);
    if (b < 0) b = 0;
    else if (b >= bins) b = bins - 1;
    h[b]++;
  }
  return h;
}

/** Counts of each integer code 0..k-1 in `codes`. */
function countCodes(a: { codes: Num; k: number }, start: number, end: number): number[] {
  const { codes: C, k } = a;
  const h = new Array<number>(k).fill(0);
  for (let i = start; i < end; i++) h[C[i]]++;
  return h;
}

/** [count of rows with mask[i] !== 0]; first pass of a stable compaction. */
function countMask(a: { mask: Num }, start: number, end: number): number[] {
  const M = a.mask;
  let c = 0;
  for (let i = start; i < end; i++) if (M[i] !== 0) c++;
  return [c];
}

/**
 * Second pass of a stable compaction: rows with mask[i] !== 0 go to out[at++], in row order, where
 * `at` starts at starts[chunk] (the prefix sum of the first pass's counts; chunk = start / chunkRows).
 */
function compactMask(a: { mask: Num; out: Int32Array; starts: Float64Array; chunkRows: number }, start: number, end: number): void {
  const { mask: M, out: Out } = a;
  let at = a.starts[Math.floor(start / a.chunkRows)];
  for (let i = start; i < end; i++) if (M[i] !== 0) Out[at++] = i;
}

/**
 * CSR construction, pass 1, partitioned by row range: counts[v] += number of edges with
 * keys[e] = v (and keys2[e] = v when given) for v in [start, end). Every chunk scans all edges and
 * writes only its own rows, so run it with a small fixed `parts` count.
 */
function countKeys(a: { keys: Int32Array; keys2?: Int32Array; counts: Int32Array }, start: number, end: number): void {
  const C = a.counts;
  for (const K of a.keys2 ? [a.keys, a.keys2] : [a.keys]) {
    const m = K.length;
    for (let e = 0; e < m; e++) {
      const v = K[e];
      if (v >= start && v < end) C[v]++;
    }
  }
}

/**
 * CSR construction, pass 2: for edges with keys[e] in [start, end), in edge order,
 * targets[cursor[keys[e]]++] = values[e]; then the same for (keys2, values2) when given. `cursor`
 * starts as a copy of the row offsets, so each row lists its neighbours in edge-list order.
 */
function scatterKeys(
  a: { keys: Int32Array; values: Int32Array; keys2?: Int32Array; values2?: Int32Array; cursor: Float64Array; targets: Int32Array },
  start: number,
  end: number,
): void {
  const { cursor: Cur, targets: T } = a;
  const passes: Array<[Int32Array, Int32Array]> = [[a.keys, a.values]];
  if (a.keys2 && a.values2) passes.push([a.keys2, a.values2]);
  for (const [K, V] of passes) {
    const m = K.length;
    for (let e = 0; e < m; e++) {
      const v = K[e];
      if (v >= start && v < end) T[Cur[v]++] = V[e];
    }
  }
}

export const kernels = {
  fill,
  copy,
  sampleNeighbor,
  gather,
  spread,
  applyMarks,
  transition,
  segmentMean,
  segmentBoundedMean,
  thresholdMark,
  boundedStep,
  bernoulli,
  broadcast,
  moments,
  histogram,
  countCodes,
  countMask,
  compactMask,
  countKeys,
  scatterKeys,
} as const;

export type KernelName = keyof typeof kernels;
export type KernelArgs<K extends KernelName> = Parameters<(typeof kernels)[K]>[0];
