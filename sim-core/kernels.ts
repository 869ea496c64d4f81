/**
 * sim-core's kernels: the domain-free part of the kernel list (map, gather, CSR spread and segment
 * means, sampling, reductions, compaction, CSR construction). Each follows the contract in
 * `kernel.ts`; phases run them through an executor (`exec.ts`), which splits the rows into fixed
 * chunks and runs each chunk in the main thread (`--threads 1`) or in a worker. Three write
 * outside [start, end): `spread` only idempotent marks, `compactMask` the disjoint output range its
 * chunk's prefix sum gives it, and `pairwiseBounded`, declared `sequential` (always one chunk).
 *
 * CSR arguments: `offsets` (Int32Array or Float64Array, length n + 1) and `targets` (Int32Array);
 * row v's neighbours are targets[offsets[v] .. offsets[v + 1]).
 *
 * WGSL versions (for the webgpu executor): gpu/kernels.wgsl.ts, and gpu/opinionKernels.wgsl.ts
 * for the continuous opinion kernels.
 */
import { kernel, kernelList } from './kernel.ts';
import { rowHash, splitKey, uniform } from './rng.ts';
import { applyMarksGpu, compactMaskGpu, copyGpu, countCodesGpu, countMaskGpu, gatherGpu, gatherNeighborGpu, sampleNeighborGpu, spreadGpu, thresholdMarkGpu, transitionGpu } from './gpu/kernels.wgsl.ts';
import { boundedStepGpu, segmentBoundedMeanGpu, segmentMeanGpu } from './gpu/opinionKernels.wgsl.ts';

/** out[i] = value. */
const fill = kernel({ reads: {}, writes: { out: 'num' }, params: ['value'] }, (a, start, end): void => {
  a.out.fill(a.value, start, end);
});

/** out[i] = src[i]. */
const copy = kernel({ reads: { src: 'num' }, writes: { out: 'num' }, params: [] }, (a, start, end): void => {
  a.out.set(a.src.subarray(start, end), start);
}, copyGpu);

/**
 * Picks one neighbour of each row uniformly: out[v] = targets[offsets[v] + floor(u * deg)], or -1
 * for rows without neighbours. The draw is keyed by the row.
 */
const sampleNeighbor = kernel({ reads: { offsets: 'offsets', targets: 'i32' }, writes: { out: 'i32' }, params: ['key'] }, (a, start, end): void => {
  const { offsets: Off, targets: Tgt, out: Out } = a;
  const [klo, khi] = splitKey(a.key);
  // rowHash / 2^32 is uniform(key, v), its key split once per chunk (a third of the kernel's
  // time); `| 0` is Math.floor on [0, deg), without the float-to-index check (10% more). Four
  // rows per iteration, each row's end offset the next one's start (as gather: 8-12% on 1M rows).
  let v = start;
  let o0 = Off[v];
  for (; v + 4 <= end; v += 4) {
    const o1 = Off[v + 1];
    const o2 = Off[v + 2];
    const o3 = Off[v + 3];
    const o4 = Off[v + 4];
    const h0 = rowHash(klo, khi, v);
    const h1 = rowHash(klo, khi, v + 1);
    const h2 = rowHash(klo, khi, v + 2);
    const h3 = rowHash(klo, khi, v + 3);
    Out[v] = o1 === o0 ? -1 : Tgt[o0 + (((h0 / 4294967296) * (o1 - o0)) | 0)];
    Out[v + 1] = o2 === o1 ? -1 : Tgt[o1 + (((h1 / 4294967296) * (o2 - o1)) | 0)];
    Out[v + 2] = o3 === o2 ? -1 : Tgt[o2 + (((h2 / 4294967296) * (o3 - o2)) | 0)];
    Out[v + 3] = o4 === o3 ? -1 : Tgt[o3 + (((h3 / 4294967296) * (o4 - o3)) | 0)];
    o0 = o4;
  }
  for (; v < end; v++) {
    const o1 = Off[v + 1];
    Out[v] = o1 === o0 ? -1 : Tgt[o0 + (((rowHash(klo, khi, v) / 4294967296) * (o1 - o0)) | 0)];
    o0 = o1;
  }
}, sampleNeighborGpu);

/**
 * out[v] = src[sampleNeighbor's pick for v], or src[v] for rows without neighbours: sampleNeighbor
 * then gather in one pass (the same draws), without the picks' array between them. The voter step.
 */
const gatherNeighbor = kernel({ reads: { offsets: 'offsets', targets: 'i32', src: 'num' }, writes: { out: 'num' }, params: ['key'] }, (a, start, end): void => {
  const { offsets: Off, targets: Tgt, src: Src, out: Out } = a;
  const [klo, khi] = splitKey(a.key);
  // As sampleNeighbor: four rows per iteration, each row's end offset the next one's start.
  let v = start;
  let o0 = Off[v];
  for (; v + 4 <= end; v += 4) {
    const o1 = Off[v + 1];
    const o2 = Off[v + 2];
    const o3 = Off[v + 3];
    const o4 = Off[v + 4];
    const h0 = rowHash(klo, khi, v);
    const h1 = rowHash(klo, khi, v + 1);
    const h2 = rowHash(klo, khi, v + 2);
    const h3 = rowHash(klo, khi, v + 3);
    const j0 = o1 === o0 ? v : Tgt[o0 + (((h0 / 4294967296) * (o1 - o0)) | 0)];
    const j1 = o2 === o1 ? v + 1 : Tgt[o1 + (((h1 / 4294967296) * (o2 - o1)) | 0)];
    const j2 = o3 === o2 ? v + 2 : Tgt[o2 + (((h2 / 4294967296) * (o3 - o2)) | 0)];
    const j3 = o4 === o3 ? v + 3 : Tgt[o3 + (((h3 / 4294967296) * (o4 - o3)) | 0)];
    Out[v] = Src[j0];
    Out[v + 1] = Src[j1];
    Out[v + 2] = Src[j2];
    Out[v + 3] = Src[j3];
    o0 = o4;
  }
  for (; v < end; v++) {
    const o1 = Off[v + 1];
    Out[v] = Src[o1 === o0 ? v : Tgt[o0 + (((rowHash(klo, khi, v) / 4294967296) * (o1 - o0)) | 0)]];
    o0 = o1;
  }
}, gatherNeighborGpu);

/** out[i] = src[index[i]], or src[i] when index[i] < 0. */
const gather = kernel({ reads: { src: 'num', index: 'i32' }, writes: { out: 'num' }, params: [] }, (a, start, end): void => {
  const { out: Out, src: Src, index: Idx } = a;
  // Four rows per iteration: V8 re-checks each typed array's map and bounds at every loop
  // back-edge (no loop-invariant hoisting), so unrolling is 1.6x on a 1M-row random gather.
  let i = start;
  for (; i + 4 <= end; i += 4) {
    const j0 = Idx[i];
    const j1 = Idx[i + 1];
    const j2 = Idx[i + 2];
    const j3 = Idx[i + 3];
    Out[i] = Src[j0 < 0 ? i : j0];
    Out[i + 1] = Src[j1 < 0 ? i + 1 : j1];
    Out[i + 2] = Src[j2 < 0 ? i + 2 : j2];
    Out[i + 3] = Src[j3 < 0 ? i + 3 : j3];
  }
  for (; i < end; i++) {
    const j = Idx[i];
    Out[i] = Src[j < 0 ? i : j];
  }
}, gatherGpu);

/**
 * Independent-cascade style spreading along CSR rows (push): for every row u in range with
 * state[u] === from, for each neighbour v (edge j) with state[v] === susceptible, with probability
 * p (draw keyed by the edge index j): next[v] = mark. Marks are idempotent, so concurrent chunks
 * writing the same v agree; state is read-only here (synchronous semantics).
 * Returns [attempts, successes].
 */
const spread = kernel({ reads: { offsets: 'offsets', targets: 'i32', state: 'u8' }, writes: { next: 'u8' }, params: ['from', 'susceptible', 'mark', 'p', 'key'] }, (a, start, end): number[] => {
  const { offsets: Off, targets: Tgt, state: State, next: Next, from, susceptible, mark } = a;
  const [klo, khi] = splitKey(a.key);
  // uniform(key, j) < p, compared as integers: rowHash(j) < p * 2^32 (scaling by 2^32 is exact)
  const below = a.p * 4294967296;
  let attempts = 0;
  let successes = 0;
  for (let u = start; u < end; u++) {
    if (State[u] !== from) continue;
    const hi = Off[u + 1];
    for (let j = Off[u]; j < hi; j++) {
      const v = Tgt[j];
      if (State[v] !== susceptible) continue;
      attempts++;
      if (rowHash(klo, khi, j) < below) {
        Next[v] = mark;
        successes++;
      }
    }
  }
  return [attempts, successes];
}, spreadGpu);

/**
 * Per-row state transition: for every row, if next[i] !== 0 and state[i] === when, state[i] = next[i];
 * next[i] is reset to 0. Returns [rows changed].
 */
const applyMarks = kernel({ reads: {}, writes: { state: 'u8', next: 'u8' }, params: ['when'] }, (a, start, end): number[] => {
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
}, applyMarksGpu);

/**
 * Stochastic recoding: rows with state[i] === from move to `to` with probability p (keyed by row);
 * p = 1 moves all of them. Returns [rows moved].
 */
const transition = kernel({ reads: {}, writes: { state: 'u8' }, params: ['from', 'to', 'p', 'key'] }, (a, start, end): number[] => {
  const { state: State, from, to, p } = a;
  const [klo, khi] = splitKey(a.key);
  const below = p * 4294967296; // uniform(key, i) < p as integers, as in spread
  let moved = 0;
  for (let i = start; i < end; i++) {
    if (State[i] === from && (p >= 1 || rowHash(klo, khi, i) < below)) {
      State[i] = to;
      moved++;
    }
  }
  return [moved];
}, transitionGpu);

/**
 * Segment mean over CSR rows (an SpMV with row-normalised weights):
 * out[v] = (selfWeight * x[v] + sum_u x[u]) / (selfWeight + deg(v)); rows whose weight is not
 * positive keep x[v]. On f32 columns every operation is an f32 one, in this order: s = w * x[v],
 * s += x[u] for each neighbour in row order, out[v] = s / (w + deg), with w = f32(selfWeight) and
 * deg as an f32, so the GPU's software f32 (gpu/softfloat.wgsl.ts) gives the same bits. f64 columns
 * sum in f64.
 */
const segmentMean = kernel({ reads: { offsets: 'offsets', targets: 'i32', x: 'float' }, writes: { out: 'float' }, params: ['selfWeight'] }, (a, start, end): void => {
  const { offsets: Off, targets: Tgt, x: X, out: Out, selfWeight } = a;
  if (X instanceof Float32Array) {
    const f = Math.fround;
    const sw = f(selfWeight);
    for (let v = start; v < end; v++) {
      const lo = Off[v];
      const hi = Off[v + 1];
      let s = f(sw * X[v]);
      for (let j = lo; j < hi; j++) s = f(s + X[Tgt[j]]);
      const w = f(sw + f(hi - lo));
      Out[v] = w > 0 ? f(s / w) : X[v];
    }
    return;
  }
  for (let v = start; v < end; v++) {
    const lo = Off[v];
    const hi = Off[v + 1];
    let s = selfWeight * X[v];
    for (let j = lo; j < hi; j++) s += X[Tgt[j]];
    const w = selfWeight + (hi - lo);
    Out[v] = w > 0 ? s / w : X[v];
  }
}, segmentMeanGpu);

/**
 * Bounded-confidence mean (Hegselmann-Krause): out[v] = mean of x[u] over the neighbours u of v,
 * and v itself when self = 1, whose opinion is within eps of x[v]: |x[u] - x[v]| <= eps, or < eps
 * when strict = 1. A row with nobody within eps (only possible with self = 0) keeps x[v]. f32
 * arithmetic throughout, in row order: d = x[u] - x[v] against eps as an f32, s += x[u],
 * out[v] = s / c (the GPU's software f32 gives the same bits; gpu/softfloat.wgsl.ts).
 */
const segmentBoundedMean = kernel({ reads: { offsets: 'offsets', targets: 'i32', x: 'f32' }, writes: { out: 'f32' }, params: ['eps', 'self', 'strict'] }, (a, start, end): void => {
  const { offsets: Off, targets: Tgt, x: X, out: Out } = a;
  const f = Math.fround;
  const eps = f(a.eps);
  const self = a.self !== 0;
  const strict = a.strict !== 0;
  for (let v = start; v < end; v++) {
    const xv = X[v];
    let s = self ? xv : 0;
    let c = self ? 1 : 0;
    const hi = Off[v + 1];
    for (let j = Off[v]; j < hi; j++) {
      const xu = X[Tgt[j]];
      const d = f(xu - xv);
      if (strict ? d < eps && d > -eps : d <= eps && d >= -eps) {
        s = f(s + xu);
        c++;
      }
    }
    Out[v] = c > 0 ? f(s / f(c)) : xv;
  }
}, segmentBoundedMeanGpu);

/**
 * Threshold rule (linear threshold), fused: every row with state[v] === from computes the share of
 * its neighbours whose state equals `value` and, when that share reaches threshold[v] (and it has
 * at least one neighbour), gets next[v] = mark. Rows not in state `from` are skipped, so the cost
 * falls as adoption spreads. Returns [rows marked].
 */
const thresholdMark = kernel({ reads: { offsets: 'offsets', targets: 'i32', state: 'u8', threshold: 'f32' }, writes: { next: 'u8' }, params: ['from', 'value', 'mark'] }, (a, start, end): number[] => {
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
}, thresholdMarkGpu);

/**
 * Pairwise bounded-confidence step (Deffuant, one-sided synchronous variant): each row moves toward
 * its sampled partner partner[i] by mu * (x[j] - x[i]) when |x[j] - x[i]| < eps. f32 arithmetic:
 * d = x[j] - x[i], out[i] = x[i] + mu * d, with eps and mu as f32s (gpu/softfloat.wgsl.ts).
 */
const boundedStep = kernel({ reads: { x: 'f32', partner: 'i32' }, writes: { out: 'f32' }, params: ['eps', 'mu'] }, (a, start, end): void => {
  const { x: X, out: Out, partner: P } = a;
  const f = Math.fround;
  const eps = f(a.eps);
  const mu = f(a.mu);
  for (let i = start; i < end; i++) {
    const j = P[i];
    const xi = X[i];
    if (j < 0) {
      Out[i] = xi;
      continue;
    }
    const d = f(X[j] - xi);
    Out[i] = d < eps && d > -eps ? f(xi + f(mu * d)) : xi;
  }
}, boundedStepGpu);

/**
 * Pairwise bounded confidence (Deffuant et al. 2000), sequential: for each update t in
 * [start, end), in order, agent i = floor(u0 * agents) and j = a uniform neighbour of i (u0, u1 =
 * uniform(key, t, 0 and 1)); if |x[i] - x[j]| < eps both move, from the values before the update:
 * x[i] += mu * (x[j] - x[i]), x[j] -= mu * (x[j] - x[i]). Rows without neighbours skip their
 * update. Rows are updates, not agents, and x is written anywhere: the result depends on the order,
 * so it is declared `sequential` and every executor runs it as one chunk, on one thread.
 * Returns [pairs that moved].
 */
const pairwiseBounded = kernel({ reads: { offsets: 'offsets', targets: 'i32' }, writes: { x: 'f32' }, params: ['eps', 'mu', 'agents', 'key'], sequential: true }, (a, start, end): number[] => {
  const { offsets: Off, targets: Tgt, x: X, eps, mu, agents, key } = a;
  let moved = 0;
  for (let t = start; t < end; t++) {
    const i = Math.floor(uniform(key, t, 0) * agents);
    const lo = Off[i];
    const deg = Off[i + 1] - lo;
    if (deg === 0) continue;
    const j = Tgt[lo + Math.floor(uniform(key, t, 1) * deg)];
    const xi = X[i];
    const xj = X[j];
    const d = xj - xi;
    if (d < eps && d > -eps) {
      const m = mu * d;
      X[i] = xi + m;
      X[j] = xj - m;
      moved++;
    }
  }
  return [moved];
});

/** out[i] = 1 with probability p (keyed by row), else 0. */
const bernoulli = kernel({ reads: {}, writes: { out: 'u8' }, params: ['p', 'key'] }, (a, start, end): void => {
  const { out: Out } = a;
  const [klo, khi] = splitKey(a.key);
  const below = a.p * 4294967296; // uniform(key, i) < p as integers, as in spread
  for (let i = start; i < end; i++) Out[i] = rowHash(klo, khi, i) < below ? 1 : 0;
});

/** out[i] = table[group[i]]: per-group broadcast of a parameter. */
const broadcast = kernel({ reads: { table: 'num', group: 'num' }, writes: { out: 'num' }, params: [] }, (a, start, end): void => {
  const { out: Out, table: T, group: G } = a;
  for (let i = start; i < end; i++) Out[i] = T[G[i]];
});

/** [count, sum x, sum x^2, sum x^3, sum x^4] over the rows (raw power sums, combined in chunk order). */
const moments = kernel({ reads: { x: 'num' }, writes: {}, params: [] }, (a, start, end): number[] => {
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
});

/** Histogram of x into `bins` equal bins over [lo, hi] (values outside are clamped). */
const histogram = kernel({ reads: { x: 'num' }, writes: {}, params: ['bins', 'lo', 'hi'] }, (a, start, end): number[] => {
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
});

/** Counts of each integer code 0..k-1 in `codes` (codes outside that range are not counted). */
const countCodes = kernel({ reads: { codes: 'num' }, writes: {}, params: ['k'] }, (a, start, end): number[] => {
  const { codes: C, k } = a;
  if (C instanceof Uint8Array && k <= 3) return countFewBytes(C, k, start, end);
  const h = new Float64Array(k);
  for (let i = start; i < end; i++) {
    const c = C[i];
    if (c < k) h[c]++;
  }
  return Array.from(h);
}, countCodesGpu);

/**
 * countCodes over bytes with few codes (the voter's two, a cascade's three), four bytes per 32-bit
 * word: per code c, the bytes of w ^ (c * 0x01010101) that are zero (the SWAR zero-byte test:
 * bit 7 of each byte of ~(((x & 0x7f7f7f7f) + 0x7f7f7f7f) | x)) are summed by one multiply. Twice
 * as fast as a histogram, whose increments of the same counter wait on each other.
 */
function countFewBytes(C: Uint8Array, k: number, start: number, end: number): number[] {
  const out = new Array<number>(k).fill(0);
  let i = start;
  for (; i < end && ((C.byteOffset + i) & 3) !== 0; i++) if (C[i] < k) out[C[i]]++;
  const words = (end - i) >> 2;
  const W = new Uint32Array(C.buffer, C.byteOffset + i, words);
  for (let c = 0; c < k; c++) {
    const rep = Math.imul(c, 0x01010101);
    let n = 0;
    for (let w = 0; w < words; w++) {
      const x = W[w] ^ rep;
      const zero = ~(((x & 0x7f7f7f7f) + 0x7f7f7f7f) | x) & 0x80808080;
      n += Math.imul(zero >>> 7, 0x01010101) >>> 24;
    }
    out[c] += n;
  }
  for (i += words * 4; i < end; i++) if (C[i] < k) out[C[i]]++;
  return out;
}

/**
 * [count of rows with mask[i] !== 0]; first pass of a stable compaction, one partial per chunk.
 * `chunkRows`: the call's chunk size, which the device version (one count per chunk) needs.
 */
const countMask = kernel({ reads: { mask: 'num' }, writes: {}, params: ['chunkRows'] }, (a, start, end): number[] => {
  const M = a.mask;
  let c = 0;
  for (let i = start; i < end; i++) if (M[i] !== 0) c++;
  return [c];
}, countMaskGpu);

/**
 * Second pass of a stable compaction: rows with mask[i] !== 0 go to out[at++], in row order, where
 * `at` starts at starts[chunk] (the prefix sum of the first pass's counts; chunk = start / chunkRows).
 */
const compactMask = kernel({ reads: { mask: 'num', starts: 'i32' }, writes: { out: 'i32' }, params: ['chunkRows'] }, (a, start, end): void => {
  const { mask: M, out: Out } = a;
  let at = a.starts[Math.floor(start / a.chunkRows)];
  for (let i = start; i < end; i++) if (M[i] !== 0) Out[at++] = i;
}, compactMaskGpu);

/** The first edge of the chunk with an id outside 0..nodes-1 (negative ids read as huge unsigned ones). */
const firstBadEdge = kernel({ reads: { src: 'i32?', dst: 'i32' }, writes: {}, params: ['nodes'] }, (a, start, end): number[] => {
  const { src: S, dst: D, nodes } = a;
  if (!S) {
    for (let k = start; k < end; k++) if (D[k] >>> 0 >= nodes) return [k];
    return [];
  }
  for (let k = start; k < end; k++) if (S[k] >>> 0 >= nodes || D[k] >>> 0 >= nodes) return [k];
  return [];
});

export const kernels = kernelList(import.meta.url, {
  fill,
  firstBadEdge,
  copy,
  sampleNeighbor,
  gatherNeighbor,
  gather,
  spread,
  applyMarks,
  transition,
  segmentMean,
  segmentBoundedMean,
  thresholdMark,
  boundedStep,
  pairwiseBounded,
  bernoulli,
  broadcast,
  moments,
  histogram,
  countCodes,
  countMask,
  compactMask,
});
