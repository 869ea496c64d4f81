/**
 * The post base scores (recsys/kernels.ts `baseScores`) in WGSL, registered with the webgpu
 * executor, for the rankers with a WGSL base score (recommender.ts RankerWgsl.base, in each
 * ranker's file): the same f32 bits in the records' `score` column (records.ts) as the CPU's
 * Math.fround of its f64 arithmetic (products rounded to f64 as the CPU's are, in the software f64
 * of sim-core/gpu/softf64.wgsl.ts), so the scores are made where the feed kernel and the candidate
 * lists read them. One shader, a switch over the rankers' codes with each snippet in its case (one
 * shader per ranker would not do: a layout made from a shader leaves out the bindings it does not
 * use, and the arrays bound are the same for every ranker). Rows whose author's follower count
 * is past the factor table (x-interest's) are counted in the second result word (records.ts
 * extends the table and runs the kernel again).
 *
 * A ranker without a WGSL base score (reddit-hot's takes a base-10 logarithm) stays on the CPU.
 */
import { registerGpuKernel, typedArgs } from '../sim-core/gpu/gpuKernels.ts';
import { RNG_WGSL } from '../sim-core/gpu/rng.wgsl.ts';
import { SOFTFLOAT_WGSL } from '../sim-core/gpu/softfloat.wgsl.ts';
import { SOFTF64_WGSL } from '../sim-core/gpu/softf64.wgsl.ts';
import { WORKGROUP } from '../sim-core/gpu/dispatch.ts';
import { packOffsets } from '../sim-core/gpu/gpuKernels.ts';
import { FLAG } from '../platform/posts.ts';
import { BUNDLED_RANKERS } from './rankerRegistry.ts';
import { kernels as K } from './kernels.ts';

/** Each bundled ranker's base-score statements in the case of its code. */
const CASES = BUNDLED_RANKERS.map((R, code) => (R.wgsl?.base === undefined ? '' : `case ${code}u: {\n      ${R.wgsl.base}\n    }`)).join('\n    ');

/** Parameters: base, first, ranker, firstStep, the tables' word offsets in their pack, factor count. */
export const BASE_SCORES_WGSL = /* wgsl */ `
${RNG_WGSL}
${SOFTFLOAT_WGSL}
${SOFTF64_WGSL}
struct Params { rows: u32, stride: u32, base: u32, first: u32, ranker: u32, first_step: i32, o_recencies: u32, o_factors: u32, factors: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> rank: array<u32>;
@group(0) @binding(2) var<storage, read> step: array<i32>;
@group(0) @binding(3) var<storage, read> author: array<i32>;
@group(0) @binding(4) var<storage, read> flags: array<u32>;
@group(0) @binding(5) var<storage, read> followers: array<i32>;
@group(0) @binding(6) var<storage, read> tables: array<u32>;
@group(0) @binding(7) var<storage, read_write> score: array<u32>;
@group(0) @binding(8) var<storage, read_write> result: array<atomic<u32>>;
var<workgroup> removed: atomic<u32>;
var<workgroup> missing: atomic<u32>;

// The f64 at word offset w of the tables (low word first).
fn table(w: u32) -> D {
  return d_from_f64(tables[w + 1u], tables[w]);
}

@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let v = gid.x + gid.y * p.stride;
  if (v < p.rows) {
    let r = p.first + v;
    let m = rank[r];
    var d: D;
    switch (p.ranker) {
    ${CASES}
      default: {}
    }
    score[r] = d_to_f32(d);
    if ((((flags[r >> 2u] >> ((r & 3u) * 8u)) & 0xffu) & ${FLAG.removed}u) != 0u) { atomicAdd(&removed, 1u); }
  }
  workgroupBarrier();
  if (li == 0u) {
    let n = atomicLoad(&removed);
    if (n > 0u) { atomicAdd(&result[0], n); }
    let x = atomicLoad(&missing);
    if (x > 0u) { atomicAdd(&result[1], x); }
  }
}`;

registerGpuKernel(K.baseScores, (a, rows) => {
  const types = { rank: Float32Array, step: Int32Array, author: Int32Array, flags: Uint8Array, followers: Int32Array, recencies: Float64Array, factors: Float64Array, out: Float32Array };
  if (!typedArgs(a, types)) return undefined;
  const { rank, step, author, flags, followers, recencies, factors, out } = a as { [K in keyof typeof types]: InstanceType<(typeof types)[K]> };
  const [first, now, firstStep] = [a.first as number, a.now as number, a.firstStep as number];
  const base = BUNDLED_RANKERS[a.ranker as number].wgsl?.base;
  if (base === undefined || a.outStride !== 1) return undefined;
  // The recency table holds R(age) of every creation step in the window (x-interest reads it).
  if (recencies.length < now - firstStep + 1) return undefined;
  const end = first + rows;
  if (out.length < end || [rank, step, author, flags].some((x) => x.length < end)) return undefined;
  // Both tables in one binding (the kernel's others and its result take the other eight).
  const pack = [recencies, factors];
  const [oRecencies, oFactors] = packOffsets(pack);
  return {
    shader: BASE_SCORES_WGSL,
    gridRows: rows,
    params: [a.base as number, first, a.ranker as number, firstStep | 0, oRecencies, oFactors, factors.length],
    arrays: [rank, step, author, flags, followers, { pack }, out],
    writes: [{ array: out, from: first, to: end }],
    resultWords: 2,
  };
});
