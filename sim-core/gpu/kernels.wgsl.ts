/**
 * WGSL versions of the kernels of sim-core/kernels.ts, one shader per kernel, each with the same
 * contract and the same outputs as its CPU declaration (tests/sim-core/gpu/kernels.test.ts checks
 * them byte for byte). Bindings follow dispatch.ts: 0 the uniform block (rows, stride, then the
 * kernel's parameters as u32 words), then the inputs in order, then the output.
 *
 * CSR offsets are i32 here: graphs past 2^31 edges (Float64Array offsets on the CPU) are not yet
 * supported on the GPU.
 */
import { RNG_WGSL } from './rng.wgsl.ts';
import { WORKGROUP } from './dispatch.ts';

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

/** The most ranges a split array is bound as. */
export const MAX_SPLIT_PARTS = 8;
/** Storage bindings a split kernel has besides its split array (thresholdMark's five, the most). */
const OTHER_STORAGE = 5;

/**
 * How many bindings a split array takes on an adapter (executor.ts binds it as that many ranges of
 * one buffer): what its storage-buffer limit leaves beside the kernel's other arrays, at most
 * MAX_SPLIT_PARTS (3 at WebGPU's default limit of 8; 8 on lavapipe, whose limit is 16).
 */
export function splitParts(limits: { maxStorageBuffersPerShaderStage: number }): number {
  return Math.max(0, Math.min(MAX_SPLIT_PARTS, limits.maxStorageBuffersPerShaderStage - OTHER_STORAGE));
}

/**
 * CSR targets bound as `parts` read-only ranges from binding `first` on, each `p.part` elements
 * (the last one shorter, unused ones repeating the first), so a graph can pass the adapter's
 * largest storage binding; tgt(j) reads element j.
 */
export const SPLIT_TARGETS = (first: number, parts: number) => /* wgsl */ `
${Array.from({ length: parts }, (_, i) => `@group(0) @binding(${first + i}) var<storage, read> targets${i}: array<i32>;`).join('\n')}
fn tgt(j: u32) -> i32 {
  let c = j / p.part;
  let o = j - c * p.part;
  switch c {
${Array.from({ length: parts - 1 }, (_, i) => `    case ${i}u: { return targets${i}[o]; }`).join('\n')}
    default: { return targets${parts - 1}[o]; }
  }
}`;

/** A shader whose text depends on the number of split parts, built once per number. */
export function perParts(make: (parts: number) => string): (parts: number) => string {
  const made = new Map<number, string>();
  return (parts) => {
    let s = made.get(parts);
    if (s === undefined) made.set(parts, (s = make(parts)));
    return s;
  };
}

/**
 * sampleNeighbor: out[v] = targets[offsets[v] + below(key, v, deg)], or -1 for rows without
 * neighbours. Parameters: part (SPLIT_TARGETS), then the key as [lo, hi] words (rng.wgsl.ts `keyWords`).
 */
export const SAMPLE_NEIGHBOR_WGSL = perParts((parts) => /* wgsl */ `
${RNG_WGSL}
struct Params { rows: u32, stride: u32, part: u32, key_lo: u32, key_hi: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> offsets: array<i32>;
${SPLIT_TARGETS(2, parts)}
@group(0) @binding(${2 + parts}) var<storage, read_write> out: array<i32>;
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
}`);

/** Row i's byte of the u8 array `src`, bound as u32 words (four rows to a word, little-endian). */
const SRC_BYTE_AT = /* wgsl */ `
fn byte_at(i: u32) -> u32 {
  return (src[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}`;

/**
 * gather for u8 columns: out[i] = src[index[i]], or src[i] when index[i] < 0. WGSL has no 8-bit
 * storage, so both u8 arrays are packed four rows to a u32 word (little-endian, as the CPU's bytes
 * lie) and each invocation writes one whole word: rows 4w .. 4w + 3. The grid runs over words.
 * Parameters: n, the number of rows (the last word may be partial; its spare bytes are written 0).
 */
export const GATHER_U8_WGSL = /* wgsl */ `
struct Params { rows: u32, stride: u32, n: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read> index: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
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
export const GATHER_WORDS_WGSL = /* wgsl */ `
struct Params { rows: u32, stride: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read> index: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  let j = index[v];
  out[v] = src[select(u32(j), v, j < 0)];
}`;

/**
 * gatherNeighbor for u8 columns: out[v] = src[sampleNeighbor's pick for v], or src[v] for rows
 * without neighbours. Packed as GATHER_U8_WGSL (four rows to a word, one word per invocation; the
 * grid runs over words), the picks as SAMPLE_NEIGHBOR_WGSL. Parameters: part (SPLIT_TARGETS), n
 * (the rows), then the key as [lo, hi] words.
 */
export const GATHER_NEIGHBOR_U8_WGSL = perParts((parts) => /* wgsl */ `
${RNG_WGSL}
struct Params { rows: u32, stride: u32, part: u32, n: u32, key_lo: u32, key_hi: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> offsets: array<i32>;
${SPLIT_TARGETS(2, parts)}
@group(0) @binding(${2 + parts}) var<storage, read> src: array<u32>;
@group(0) @binding(${3 + parts}) var<storage, read_write> out: array<u32>;
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
}`);

/** copy of whole arrays as u32 words (any element type; the grid runs over words). */
export const COPY_WORDS_WGSL = /* wgsl */ `
struct Params { rows: u32, stride: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  out[v] = src[v];
}`;

/**
 * The two passes of a stable compaction over a u8 mask (countMask, compactMask): one workgroup per
 * chunk of `chunk_rows` rows, each invocation a contiguous slice of its chunk. countMask adds each
 * chunk's count of nonzero rows to result word `chunk`; compactMask writes the chunk's rows, in row
 * order, from starts[chunk] on, each invocation after the rows of the slices before its own.
 * Parameters: n (rows), chunk_rows, chunks.
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

export const COUNT_MASK_U8_WGSL = /* wgsl */ `
struct Params { rows: u32, stride: u32, n: u32, chunk_rows: u32, chunks: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> mask: array<u32>;
@group(0) @binding(2) var<storage, read_write> result: array<atomic<u32>>;
${MASK_CHUNKS(`  if (c > 0u) { atomicAdd(&result[chunk], c); }`)}`;

export const COMPACT_MASK_U8_WGSL = /* wgsl */ `
struct Params { rows: u32, stride: u32, n: u32, chunk_rows: u32, chunks: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> mask: array<u32>;
@group(0) @binding(2) var<storage, read> starts: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<i32>;
${MASK_CHUNKS(`  counts[li] = c;
  workgroupBarrier();
  var at = u32(starts[chunk]);
  for (var j = 0u; j < li; j++) { at += counts[j]; }
  for (var i = a; i < b; i++) {
    if (mask_at(i)) {
      out[at] = i32(i);
      at++;
    }
  }`)}`;

/**
 * countCodes for u8 codes: counts[c] = number of rows with code c, over n rows packed four to a
 * word (the grid runs over words). Each workgroup counts into its own 256 bins, then adds them to
 * the result: integer sums, so the totals equal the CPU's whatever the order.
 */
export const COUNT_CODES_U8_WGSL = /* wgsl */ `
struct Params { rows: u32, stride: u32, n: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> codes: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<atomic<u32>>;
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
    if (c > 0u) { atomicAdd(&counts[b], c); }
  }
}`;

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
export const SPREAD_U8_WGSL = perParts((parts) => /* wgsl */ `
${RNG_WGSL}
${BERNOULLI}
struct Params { rows: u32, stride: u32, part: u32, from_state: u32, susceptible: u32, mark: u32, key_lo: u32, key_hi: u32, thr: u32, always: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> offsets: array<i32>;
${SPLIT_TARGETS(2, parts)}
@group(0) @binding(${2 + parts}) var<storage, read> state: array<u32>;
@group(0) @binding(${3 + parts}) var<storage, read_write> next: array<atomic<u32>>;
@group(0) @binding(${4 + parts}) var<storage, read_write> result: array<atomic<u32>>;
${BYTE_OF('state')}
${SET_NEXT}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  if (state_byte(v) != p.from_state) { return; }
  var attempts = 0u;
  var successes = 0u;
  let hi = u32(offsets[v + 1u]);
  for (var j = u32(offsets[v]); j < hi; j++) {
    let u = u32(tgt(j));
    if (state_byte(u) != p.susceptible) { continue; }
    attempts++;
    if (bernoulli(p.key_lo, p.key_hi, j, p.thr, p.always)) {
      set_next(u, p.mark);
      successes++;
    }
  }
  if (attempts > 0u) { atomicAdd(&result[0], attempts); }
  if (successes > 0u) { atomicAdd(&result[1], successes); }
}`);

/**
 * transition (u8 state): rows with state == from move to `to` with probability p (draw keyed by the
 * row). One invocation per word of four rows, over n rows. Result word: rows moved.
 */
export const TRANSITION_U8_WGSL = /* wgsl */ `
${RNG_WGSL}
${BERNOULLI}
struct Params { rows: u32, stride: u32, n: u32, from_state: u32, to_state: u32, key_lo: u32, key_hi: u32, thr: u32, always: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> state: array<u32>;
@group(0) @binding(2) var<storage, read_write> result: array<atomic<u32>>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  var word = state[v];
  var moved = 0u;
  for (var b = 0u; b < 4u; b++) {
    let i = v * 4u + b;
    let shift = b * 8u;
    if (i < p.n && ((word >> shift) & 0xffu) == p.from_state && bernoulli(p.key_lo, p.key_hi, i, p.thr, p.always)) {
      word = (word & ~(0xffu << shift)) | (p.to_state << shift);
      moved++;
    }
  }
  state[v] = word;
  if (moved > 0u) { atomicAdd(&result[0], moved); }
}`;

/**
 * applyMarks (u8 state and next): a row with next != 0 takes it as its state if its state is
 * `when`; next is reset to 0. One invocation per word of four rows, over n rows. Result word: rows
 * changed.
 */
export const APPLY_MARKS_U8_WGSL = /* wgsl */ `
struct Params { rows: u32, stride: u32, n: u32, when_state: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> state: array<u32>;
@group(0) @binding(2) var<storage, read_write> next: array<u32>;
@group(0) @binding(3) var<storage, read_write> result: array<atomic<u32>>;
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
      if (((s >> shift) & 0xffu) == p.when_state) {
        s = (s & ~(0xffu << shift)) | (mark << shift);
        changed++;
      }
      m = m & ~(0xffu << shift);
    }
  }
  state[v] = s;
  next[v] = m;
  if (changed > 0u) { atomicAdd(&result[0], changed); }
}`;

/**
 * thresholdMark (linear threshold, u8 state, f32 thresholds): a row in state `from` with at least one
 * neighbour gets next = mark when the share c / deg of its neighbours in state `value` reaches its
 * threshold t. The CPU compares c / deg >= t in f64; for an f32 t = m / 2^k (m < 2^24) and
 * deg < 2^28 the rounded quotient is on the same side of t as the exact one (the two differ by at
 * least t / (m deg) > 2^-52 t unless equal), so the GPU compares c 2^k >= m deg exactly, in 64-bit
 * integers made of u32 pairs. Result word: rows marked.
 */
export const THRESHOLD_MARK_U8_WGSL = perParts((parts) => /* wgsl */ `
${RNG_WGSL}
struct Params { rows: u32, stride: u32, part: u32, from_state: u32, value: u32, mark: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> offsets: array<i32>;
${SPLIT_TARGETS(2, parts)}
@group(0) @binding(${2 + parts}) var<storage, read> state: array<u32>;
@group(0) @binding(${3 + parts}) var<storage, read> threshold: array<u32>;
@group(0) @binding(${4 + parts}) var<storage, read_write> next: array<atomic<u32>>;
@group(0) @binding(${5 + parts}) var<storage, read_write> result: array<atomic<u32>>;
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
  if (state_byte(v) != p.from_state) { return; }
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
}`);

/** [threshold, always] of a Bernoulli(p) draw for the WGSL `bernoulli` (see BERNOULLI above). */
export function bernoulliWords(p: number): [number, number] {
  if (!(p > 0)) return [0, 0];
  const t = p * 4294967296;
  return t >= 4294967296 ? [0, 1] : [Math.ceil(t), 0];
}
