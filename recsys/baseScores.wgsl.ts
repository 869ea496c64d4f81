/**
 * The post base scores (recsys/kernels.ts `baseScores`, which attaches this version) in WGSL,
 * for the rankers with a WGSL base score (recommender.ts RankerWgsl.base, in each
 * ranker's file): the same f32 bits in the records' `score` column (records.ts) as the CPU's
 * Math.fround of its f64 arithmetic (products rounded to f64 as the CPU's are, in the software f64
 * of sim-core/gpu/softf64.wgsl.ts), so the scores are made where the feed kernel and the candidate
 * lists read them. One shader, a switch over the rankers' codes with each snippet in its case (one
 * shader per ranker would not do: a layout made from a shader leaves out the bindings it does not
 * use, and the arrays bound are the same for every ranker). Rows whose author's follower count
 * is past the factor table (x-interest's) are counted in the second result word (records.ts
 * extends the table and runs the kernel again).
 *
 * A ranker without a WGSL base score (reddit-hot's takes a base-10 logarithm, bridging's reads the
 * per-side vote counts, which stay on the CPU's side of this kernel) stays on the CPU.
 */
import { RNG_WGSL } from '../sim-core/gpu/rng.wgsl.ts';
import { SOFTFLOAT_WGSL } from '../sim-core/gpu/softfloat.wgsl.ts';
import { SOFTF64_WGSL } from '../sim-core/gpu/softf64.wgsl.ts';
import { WORKGROUP } from '../sim-core/gpu/dispatch.ts';
import { wgslKernel } from '../sim-core/gpu/wgslKernel.ts';
import { FLAG } from '../platform/posts.ts';
import { BUNDLED_RANKERS } from './rankerRegistry.ts';

/** Each bundled ranker's base-score statements in the case of its code. */
const CASES = BUNDLED_RANKERS.map((R, code) => (R.wgsl?.base === undefined ? '' : `case ${code}u: {\n      ${R.wgsl.base}\n    }`)).join('\n    ');

/** The two f64 tables are one pack (the kernel's others and its result take the other eight bindings). */
export const baseScoresGpu = wgslKernel({
  params: { outStride: 'none', now: 'none', stepSeconds: 'none', tauHours: 'none', recency: 'none', firstStep: 'i32' },
  words: ['factors'],
  bind: { likes: 'none', dislikes: 'none', likesLeft: 'none', dislikesLeft: 'none', treatVote: 'none', recencies: 'pack', factors: 'pack' },
  result: 'atomic',
  body: () => /* wgsl */ `
${RNG_WGSL}
${SOFTFLOAT_WGSL}
${SOFTF64_WGSL}
var<workgroup> removed: atomic<u32>;
var<workgroup> missing: atomic<u32>;

// The f64 at word offset w of the tables (low word first).
fn table(w: u32) -> D {
  return d_from_f64(inp[w + 1u], inp[w]);
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
    out[r] = d_to_f32(d);
    if ((((flags[r >> 2u] >> ((r & 3u) * 8u)) & 0xffu) & ${FLAG.removed}u) != 0u) { atomicAdd(&removed, 1u); }
  }
  workgroupBarrier();
  if (li == 0u) {
    let n = atomicLoad(&removed);
    if (n > 0u) { atomicAdd(&result[0], n); }
    let x = atomicLoad(&missing);
    if (x > 0u) { atomicAdd(&result[1], x); }
  }
}`,
  build(a, rows) {
    const { first, now, firstStep, recencies, out } = a;
    const base = BUNDLED_RANKERS[a.ranker].wgsl?.base;
    if (base === undefined || a.outStride !== 1) return undefined;
    // The recency table holds R(age) of every creation step in the window (x-interest reads it).
    if (recencies.length < now - firstStep + 1) return undefined;
    const end = first + rows;
    if (out.length < end || [a.rank, a.step, a.author, a.flags].some((x) => x.length < end)) return undefined;
    return { gridRows: rows, words: { factors: a.factors.length }, wrote: { out: [first, end] }, resultWords: 2 };
  },
});
