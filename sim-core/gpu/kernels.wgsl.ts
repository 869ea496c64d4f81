/**
 * WGSL versions of the kernels of sim-core/kernels.ts (attached there, `kernel(spec, fn, gpu)`),
 * each with the same contract and the same outputs as its CPU declaration
 * (tests/sim-core/gpu/kernels.test.ts and executor.test.ts check them byte for byte). Each body
 * follows the header wgslKernel.ts generates from the kernel's spec: `p` the uniform words, the
 * arrays by their snake-case names, `tgt(j)` for split CSR targets.
 *
 * A call stays on the CPU where the device could not give the same bytes: sampleNeighbor and
 * gatherNeighbor on a row of 2^21 or more neighbours (rng_below equals the CPU's float product only
 * below that; rng.wgsl.ts), thresholdMark on a row of 2^28 or more (the share comparison below), u8
 * kernels (gather, gatherNeighbor, countCodes) and copy over part of an array, since they write
 * whole words. CSR offsets are i32 here: graphs past 2^31 edges (Float64Array offsets) stay on the
 * CPU.
 */
import { RNG_WGSL } from './rng.wgsl.ts';
import { WORKGROUP } from './dispatch.ts';
import { EXACT_BELOW, maxDegree } from './gpuKernels.ts';
import { wgslKernel, type GpuArgs } from './wgslKernel.ts';

export const ROW = /* wgsl */ `
  let v = gid.x + gid.y * p.stride;
  if (v >= p.rows) { return; }`;

/**
 * The host's writes at scattered words (sim-core/gpu/executor.ts hostWroteAt): binding 0 holds n,
 * then n word indices, then their n values; dst[index] = value. Any grid: each invocation strides
 * by the grid's size.
 */
export const SCATTER_WORDS_WGSL = /* wgsl */ `
@group(0) @binding(0) var<storage, read> iv: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let n = iv[0];
  for (var i = gid.x; i < n; i += groups.x * ${WORKGROUP}u) {
    dst[iv[1u + i]] = iv[1u + n + i];
  }
}`;

/** Most words of one piece of COPY_PIECES_WGSL: a workgroup copies a piece, each invocation every 64th word. */
export const PIECE_WORDS = 64 * WORKGROUP;

/**
 * A new array made from pieces of an old one (sim-core/gpu/executor.ts hostRearranged): binding 0
 * holds triples (destination word, source word, words), each piece at most PIECE_WORDS; workgroup
 * k (over a grid of any shape) copies piece k.
 */
export const COPY_PIECES_WGSL = /* wgsl */ `
@group(0) @binding(0) var<storage, read> pieces: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let k = wg.x + wg.y * groups.x;
  if (k >= arrayLength(&pieces) / 3u) { return; }
  let d = pieces[3u * k];
  let s = pieces[3u * k + 1u];
  let n = pieces[3u * k + 2u];
  for (var i = li; i < n; i += ${WORKGROUP}u) {
    dst[d + i] = src[s + i];
  }
}`;

/** Rows of a grid over words of four u8 rows. */
const words = (bytes: number) => Math.ceil(bytes / 4);
/** The CPU's f64 share c / deg compares with an f32 threshold as the exact share does below this degree (THRESHOLD_MARK below). */
const EXACT_SHARE = 2 ** 28;

/**
 * sampleNeighbor: out[v] = targets[offsets[v] + below(key, v, deg)], or -1 for rows without
 * neighbours.
 */
export const sampleNeighborGpu = wgslKernel({
  params: { key: 'key' },
  bind: { targets: 'split' },
  body: () => /* wgsl */ `
${RNG_WGSL}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  let lo = offsets[v];
  let deg = u32(offsets[v + 1u] - lo);
  if (deg == 0u) {
    out[v] = -1;
  } else {
    out[v] = tgt(u32(lo) + rng_below(p.key_lo, p.key_hi, v, deg, 0u));
  }
}`,
  build(a, rows) {
    if (a.offsets.length < rows + 1 || maxDegree(a.offsets) >= EXACT_BELOW) return undefined;
    return { gridRows: rows };
  },
});

/** Row i's byte of the u8 array `src`, bound as u32 words (four rows to a word, little-endian). */
const SRC_BYTE_AT = /* wgsl */ `
fn byte_at(i: u32) -> u32 {
  return (src[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}`;

/**
 * gather for u8 columns: out[i] = src[index[i]], or src[i] when index[i] < 0. WGSL has no 8-bit
 * storage, so both u8 arrays are packed four rows to a u32 word (little-endian, as the CPU's bytes
 * lie) and each invocation writes one whole word: rows 4w .. 4w + 3. The grid runs over words.
 * Words: n, the number of rows (the last word may be partial; its spare bytes are written 0).
 */
const GATHER_U8 = /* wgsl */ `
${SRC_BYTE_AT}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  var word = 0u;
  for (var b = 0u; b < 4u; b++) {
    let i = v * 4u + b;
    if (i < p.n) {
      let j = index[i];
      word = word | (byte_at(select(u32(j), i, j < 0)) << (b * 8u));
    }
  }
  out[v] = word;
}`;

/**
 * gather for 32-bit columns (f32, i32, u32): out[i] = src[index[i]], or src[i] when index[i] < 0,
 * moved as bit patterns. The grid runs over rows.
 */
const GATHER_WORDS = /* wgsl */ `
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  let j = index[v];
  out[v] = src[select(u32(j), v, j < 0)];
}`;

/** gather: over 32-bit words when src and out are one 4-byte type, else over u8 columns. */
export const gatherGpu = wgslKernel({
  narrow: { src: 'num', out: 'num' },
  variants: ['words', 'u8'],
  words: (variant) => (variant === 'u8' ? ['n'] : []),
  body: ({ variant }) => (variant === 'u8' ? GATHER_U8 : GATHER_WORDS),
  build(a, rows) {
    const { src, index, out } = a;
    if (src.BYTES_PER_ELEMENT === 4 && src.constructor === out.constructor && src !== out && out.length >= rows && index.length >= rows) {
      // Only rows [0, rows) of out are written: the host keeps the rest.
      return { variant: 'words', gridRows: rows, wrote: { out: [0, rows] } };
    }
    if (!(src instanceof Uint8Array && out instanceof Uint8Array) || out.length !== rows || index.length < rows) return undefined;
    return { variant: 'u8', gridRows: words(rows), words: { n: rows } };
  },
});

/**
 * gatherNeighbor for u8 columns: out[v] = src[sampleNeighbor's pick for v], or src[v] for rows
 * without neighbours. Packed as gather's u8 version (four rows to a word, one word per invocation;
 * the grid runs over words), the picks as sampleNeighbor's. Words: n (the rows).
 */
export const gatherNeighborGpu = wgslKernel({
  params: { key: 'key' },
  bind: { targets: 'split' },
  narrow: { src: 'u8', out: 'u8' },
  words: ['n'],
  body: () => /* wgsl */ `
${RNG_WGSL}
${SRC_BYTE_AT}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  var word = 0u;
  for (var b = 0u; b < 4u; b++) {
    let i = v * 4u + b;
    if (i < p.n) {
      let lo = offsets[i];
      let deg = u32(offsets[i + 1u] - lo);
      var j = i;
      if (deg != 0u) {
        j = u32(tgt(u32(lo) + rng_below(p.key_lo, p.key_hi, i, deg, 0u)));
      }
      word = word | (byte_at(j) << (b * 8u));
    }
  }
  out[v] = word;
}`,
  build(a, rows) {
    const { offsets, src, out } = a;
    if (offsets.length < rows + 1 || maxDegree(offsets) >= EXACT_BELOW || src === out || out.length !== rows || src.length < rows) return undefined;
    return { gridRows: words(rows), words: { n: rows } };
  },
});

/** copy of whole arrays as u32 words (any element type; the grid runs over words). */
export const copyGpu = wgslKernel({
  narrow: { src: 'num', out: 'num' },
  body: () => /* wgsl */ `
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  out[v] = src[v];
}`,
  build(a, rows) {
    const { src, out } = a;
    if (src.constructor !== out.constructor || out.length !== rows || src.length !== rows) return undefined;
    return { gridRows: words(out.byteLength) };
  },
});

/**
 * The two passes of a stable compaction over a u8 mask (countMask, compactMask): one workgroup per
 * chunk of `chunk_rows` rows, each invocation a contiguous slice of its chunk. countMask adds each
 * chunk's count of nonzero rows to result word `chunk`; compactMask writes the chunk's rows, in row
 * order, from starts[chunk] on, each invocation after the rows of the slices before its own.
 * Words: n (rows), chunks; chunk_rows is the spec's chunkRows.
 */
const MASK_CHUNKS = (body: string) => /* wgsl */ `
var<workgroup> counts: array<u32, ${WORKGROUP}>;
fn mask_at(i: u32) -> bool {
  return ((mask[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu) != 0u;
}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  // Uniform across the workgroup, so the barrier below is reached by all of it or none.
  let chunk = wg.x + wg.y * nw.x;
  if (chunk >= p.chunks) { return; }
  let lo = chunk * p.chunk_rows;
  let hi = min(lo + p.chunk_rows, p.n);
  let per = (hi - lo + ${WORKGROUP - 1}u) / ${WORKGROUP}u;
  let a = min(lo + li * per, hi);
  let b = min(a + per, hi);
  var c = 0u;
  for (var i = a; i < b; i++) { if (mask_at(i)) { c++; } }
${body}
}`;

/** The grid of the mask kernels: one workgroup per chunk of the CPU's chunking. */
function maskChunks(a: GpuArgs, rows: number) {
  const chunkRows = a.chunkRows;
  if (a.mask.length < rows || !(chunkRows > 0)) return undefined;
  const chunks = Math.ceil(rows / chunkRows);
  return { gridRows: chunks * WORKGROUP, words: { n: rows, chunks } };
}

export const countMaskGpu = wgslKernel({
  narrow: { mask: 'u8' },
  words: ['n', 'chunks'],
  result: 'atomic',
  body: () => /* wgsl */ `
${MASK_CHUNKS(`  if (c > 0u) { atomicAdd(&result[chunk], c); }`)}`,
  build(a, rows) {
    const c = maskChunks(a, rows);
    return c && { ...c, resultWords: c.words.chunks, wordPerChunk: true };
  },
});

export const compactMaskGpu = wgslKernel({
  narrow: { mask: 'u8' },
  words: ['n', 'chunks'],
  body: () => /* wgsl */ `
${MASK_CHUNKS(`  counts[li] = c;
  workgroupBarrier();
  var at = u32(starts[chunk]);
  for (var j = 0u; j < li; j++) { at += counts[j]; }
  for (var i = a; i < b; i++) {
    if (mask_at(i)) {
      out[at] = i32(i);
      at++;
    }
  }`)}`,
  build(a, rows) {
    const c = maskChunks(a, rows);
    return c && a.starts.length >= c.words.chunks ? c : undefined;
  },
});

/**
 * countCodes for u8 codes: counts[c] = number of rows with code c, over n rows packed four to a
 * word (the grid runs over words). Each workgroup counts into its own 256 bins, then adds them to
 * the result: integer sums, so the totals equal the CPU's whatever the order.
 */
export const countCodesGpu = wgslKernel({
  params: { k: 'none' },
  narrow: { codes: 'u8' },
  words: ['n'],
  result: 'atomic',
  body: () => /* wgsl */ `
var<workgroup> bins: array<atomic<u32>, 256>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  for (var b = li; b < 256u; b += ${WORKGROUP}u) { atomicStore(&bins[b], 0u); }
  workgroupBarrier();
  let v = gid.x + gid.y * p.stride;
  if (v < p.rows) {
    let w = codes[v];
    for (var b = 0u; b < 4u; b++) {
      if (v * 4u + b < p.n) { atomicAdd(&bins[(w >> (b * 8u)) & 0xffu], 1u); }
    }
  }
  workgroupBarrier();
  for (var b = li; b < 256u; b += ${WORKGROUP}u) {
    let c = atomicLoad(&bins[b]);
    if (c > 0u) { atomicAdd(&result[b], c); }
  }
}`,
  build(a, rows) {
    const bins = a.k;
    if (a.codes.length !== rows || bins > 256) return undefined;
    return { gridRows: words(rows), words: { n: rows }, resultWords: 256, finish: (w) => w.slice(0, bins) };
  },
});

/**
 * Bernoulli draws as the CPU makes them, `uniform(key, row) < p`, compared as integers:
 * uniform = hash / 2^32 exactly, so the draw succeeds iff hash < p 2^32, iff hash < ceil(p 2^32)
 * (`bernoulliWords` computes the threshold on the host, in f64, exactly); `always` covers p >= 1,
 * whose threshold 2^32 is no u32.
 */
const BERNOULLI = /* wgsl */ `
fn bernoulli(key_lo: u32, key_hi: u32, row: u32, thr: u32, always: u32) -> bool {
  return always != 0u || rng_hash(key_lo, key_hi, row, 0u) < thr;
}`;

/** The byte of row i in a u8 column packed four rows to a word. */
const BYTE_OF = (name: string) => /* wgsl */ `
fn ${name}_byte(i: u32) -> u32 {
  return (${name}[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}`;

/**
 * next[i] = value for a u8 column `next` bound as atomic words, four rows to a word: a
 * compare-and-swap of the row's byte, so invocations writing other rows of the word lose nothing.
 */
const SET_NEXT = /* wgsl */ `
fn set_next(i: u32, value: u32) {
  let w = i >> 2u;
  let shift = (i & 3u) * 8u;
  var old = atomicLoad(&next[w]);
  loop {
    let want = (old & ~(0xffu << shift)) | (value << shift);
    if (want == old) { break; }
    let r = atomicCompareExchangeWeak(&next[w], old, want);
    if (r.exchanged) { break; }
    old = r.old_value;
  }
}`;

/**
 * spread (independent-cascade push, u8 state): for each row u with state u == from, each edge j to a
 * neighbour v with state v == susceptible is an attempt, and with probability p (draw keyed by j)
 * sets next[v] = mark. Rows of `next` are bytes shared by four rows, so the mark is written by a
 * compare-and-swap on the word; every write of a call is the same mark, so the result does not
 * depend on the order. Result words: attempts, successes.
 */
export const spreadGpu = wgslKernel({
  params: { p: 'bernoulli', key: 'key' },
  bind: { targets: 'split', next: 'atomic' },
  result: 'atomic',
  body: () => /* wgsl */ `
${RNG_WGSL}
${BERNOULLI}
${BYTE_OF('state')}
${SET_NEXT}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  if (state_byte(v) != p.from_) { return; }
  var attempts = 0u;
  var successes = 0u;
  let hi = u32(offsets[v + 1u]);
  for (var j = u32(offsets[v]); j < hi; j++) {
    let u = u32(tgt(j));
    if (state_byte(u) != p.susceptible) { continue; }
    attempts++;
    if (bernoulli(p.key_lo, p.key_hi, j, p.p_thr, p.p_always)) {
      set_next(u, p.mark);
      successes++;
    }
  }
  if (attempts > 0u) { atomicAdd(&result[0], attempts); }
  if (successes > 0u) { atomicAdd(&result[1], successes); }
}`,
  build(a, rows) {
    if (a.offsets.length < rows + 1 || a.state === a.next) return undefined;
    return { gridRows: rows, resultWords: 2 };
  },
});

/**
 * transition (u8 state): rows with state == from move to `to` with probability p (draw keyed by the
 * row). One invocation per word of four rows, over n rows. Result word: rows moved.
 */
export const transitionGpu = wgslKernel({
  params: { p: 'bernoulli', key: 'key' },
  words: ['n'],
  result: 'atomic',
  body: () => /* wgsl */ `
${RNG_WGSL}
${BERNOULLI}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  var word = state[v];
  var moved = 0u;
  for (var b = 0u; b < 4u; b++) {
    let i = v * 4u + b;
    let shift = b * 8u;
    if (i < p.n && ((word >> shift) & 0xffu) == p.from_ && bernoulli(p.key_lo, p.key_hi, i, p.p_thr, p.p_always)) {
      word = (word & ~(0xffu << shift)) | (p.to << shift);
      moved++;
    }
  }
  state[v] = word;
  if (moved > 0u) { atomicAdd(&result[0], moved); }
}`,
  build(a, rows) {
    if (a.state.length !== rows) return undefined;
    return { gridRows: words(rows), words: { n: rows }, resultWords: 1 };
  },
});

/**
 * applyMarks (u8 state and next): a row with next != 0 takes it as its state if its state is
 * `when`; next is reset to 0. One invocation per word of four rows, over n rows. Result word: rows
 * changed.
 */
export const applyMarksGpu = wgslKernel({
  words: ['n'],
  result: 'atomic',
  body: () => /* wgsl */ `
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  var s = state[v];
  var m = next[v];
  var changed = 0u;
  for (var b = 0u; b < 4u; b++) {
    let i = v * 4u + b;
    let shift = b * 8u;
    let mark = (m >> shift) & 0xffu;
    if (i < p.n && mark != 0u) {
      if (((s >> shift) & 0xffu) == p.when) {
        s = (s & ~(0xffu << shift)) | (mark << shift);
        changed++;
      }
      m = m & ~(0xffu << shift);
    }
  }
  state[v] = s;
  next[v] = m;
  if (changed > 0u) { atomicAdd(&result[0], changed); }
}`,
  build(a, rows) {
    const { state, next } = a;
    if (state.length !== rows || next.length !== rows || state === next) return undefined;
    return { gridRows: words(rows), words: { n: rows }, resultWords: 1 };
  },
});

/**
 * thresholdMark (linear threshold, u8 state, f32 thresholds): a row in state `from` with at least one
 * neighbour gets next = mark when the share c / deg of its neighbours in state `value` reaches its
 * threshold t. The CPU compares c / deg >= t in f64; for an f32 t = m / 2^k (m < 2^24) and
 * deg < 2^28 the rounded quotient is on the same side of t as the exact one (the two differ by at
 * least t / (m deg) > 2^-52 t unless equal), so the GPU compares c 2^k >= m deg exactly, in 64-bit
 * integers made of u32 pairs. Result word: rows marked.
 */
export const thresholdMarkGpu = wgslKernel({
  bind: { targets: 'split', next: 'atomic' },
  result: 'atomic',
  body: () => /* wgsl */ `
${RNG_WGSL}
${BYTE_OF('state')}
${SET_NEXT}
// c / deg >= t, t given by its f32 bits, deg >= 1, exactly.
fn share_reaches(c: u32, deg: u32, bits: u32) -> bool {
  let e = (bits >> 23u) & 0xffu;
  let frac = bits & 0x7fffffu;
  if (e == 255u) { return false; }            // NaN or infinity: no share reaches it
  if ((bits >> 31u) == 1u || (e == 0u && frac == 0u)) { return true; } // t <= 0
  if (e >= 127u) { return bits == 0x3f800000u && c == deg; } // t >= 1: only a share of 1 reaches 1
  if (c == 0u) { return false; }
  // t = m / 2^k, m < 2^24, 24 <= k <= 149.
  var m = frac;
  var k = 149u;
  if (e != 0u) {
    m = frac | 0x800000u;
    k = 150u - e;
  }
  // m deg as (hi, lo); it is below 2^52.
  let md_lo = m * deg;
  let md_hi = mulhi(m, deg);
  // c 2^k as (hi, lo), or larger than any m deg once it passes 2^64.
  if (k >= 64u) { return true; }
  var c_hi: u32;
  var c_lo: u32;
  if (k >= 32u) {
    if (c > (0xffffffffu >> (k - 32u))) { return true; }
    c_hi = c << (k - 32u);
    c_lo = 0u;
  } else {
    c_hi = c >> (32u - k);
    c_lo = c << k;
  }
  return c_hi > md_hi || (c_hi == md_hi && c_lo >= md_lo);
}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  if (state_byte(v) != p.from_) { return; }
  let lo = u32(offsets[v]);
  let hi = u32(offsets[v + 1u]);
  if (hi == lo) { return; }
  var c = 0u;
  for (var j = lo; j < hi; j++) {
    if (state_byte(u32(tgt(j))) == p.value) { c++; }
  }
  if (share_reaches(c, hi - lo, threshold[v])) {
    set_next(v, p.mark);
    atomicAdd(&result[0], 1u);
  }
}`,
  build(a, rows) {
    const { offsets, state, threshold, next } = a;
    if (offsets.length < rows + 1 || maxDegree(offsets) >= EXACT_SHARE || state === next || threshold.length < rows) return undefined;
    return { gridRows: rows, resultWords: 1 };
  },
});
