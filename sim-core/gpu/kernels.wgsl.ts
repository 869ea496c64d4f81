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

const ROW = /* wgsl */ `
  let v = gid.x + gid.y * p.stride;
  if (v >= p.rows) { return; }`;

/**
 * sampleNeighbor: out[v] = targets[offsets[v] + below(key, v, deg)], or -1 for rows without
 * neighbours. Parameters: the key as [lo, hi] words (rng.wgsl.ts `keyWords`).
 */
export const SAMPLE_NEIGHBOR_WGSL = /* wgsl */ `
${RNG_WGSL}
struct Params { rows: u32, stride: u32, key_lo: u32, key_hi: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> offsets: array<i32>;
@group(0) @binding(2) var<storage, read> targets: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<i32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  let lo = offsets[v];
  let deg = u32(offsets[v + 1u] - lo);
  if (deg == 0u) {
    out[v] = -1;
  } else {
    out[v] = targets[u32(lo) + rng_below(p.key_lo, p.key_hi, v, deg, 0u)];
  }
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
fn byte_at(i: u32) -> u32 {
  return (src[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}
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
