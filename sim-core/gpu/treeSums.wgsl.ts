/**
 * WGSL versions of the opinion statistics' sums (sim-core/treeSums.ts `treeSum` and
 * `treeCentralSums`): one workgroup per group of TREE_GROUP rows, one invocation per block of
 * TREE_BLOCK rows summing them in row order, then the 64 block sums added pairwise (t + 32, t +
 * 16, ..., t + 1), every addition and product an f64 operation of softf64.wgsl.ts rounded as the
 * CPU's. So each group's sums have the CPU's bits, and only those words come back (13 words per
 * 4,096 rows, ~130 KB at 10M agents, where the opinions themselves are 40 MB).
 *
 * x is an f32 column bound as array<u32> (its bit patterns). Result words per group: treeSum
 * [sum high, sum low, lowest, highest, non-finite] (the extremes as f32 bits, over the finite
 * values; non-finite 1 when the group holds a NaN or an infinity, whose sum is then
 * meaningless), treeCentralSums [sum d, sum d^2, sum d^3, sum d^4] as f64 words (high, low), d = x - c.
 */
import { RNG_WGSL } from './rng.wgsl.ts';
import { SOFTFLOAT_WGSL } from './softfloat.wgsl.ts';
import { SOFTF64_WGSL } from './softf64.wgsl.ts';
import { WORKGROUP } from './dispatch.ts';
import { TREE_BLOCK, TREE_BLOCKS, TREE_GROUP } from '../treeShape.ts';
import { wgslKernel, type GpuArgs } from './wgslKernel.ts';

// One invocation a block: the workgroup is the CPU's group.
if (TREE_BLOCKS !== WORKGROUP) throw new Error(`treeSums.wgsl.ts: ${TREE_BLOCKS} blocks a group, ${WORKGROUP} invocations a workgroup`);

/** Result words per group. */
export const TREE_SUM_WORDS = 5;
export const TREE_CENTRAL_WORDS = 8;

/** The group, the invocation's first row and end row; `body` sums rows [a, b) and the tree follows. */
const GROUP_MAIN = (body: string) => /* wgsl */ `
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  // Uniform across the workgroup, so the barriers below are reached by all of it or none.
  let g = wg.x + wg.y * nw.x;
  if (g >= p.groups) { return; }
  let a = min(g * ${TREE_GROUP}u + li * ${TREE_BLOCK}u, p.n);
  let b = min(a + ${TREE_BLOCK}u, p.n);
${body}
}`;

/** Pairwise additions of the workgroup's block sums in `arrays` (array<D, WORKGROUP> each), into element 0. */
const TREE = (arrays: string[]) => {
  const steps: string[] = [];
  for (let w = WORKGROUP / 2; w >= 1; w /= 2) {
    steps.push(`  if (li < ${w}u) {\n${arrays.map((x) => `    ${x}[li] = d_add(${x}[li], ${x}[li + ${w}u]);`).join('\n')}\n  }\n  workgroupBarrier();`);
  }
  return steps.join('\n');
};

const HEAD = `${RNG_WGSL}\n${SOFTFLOAT_WGSL}\n${SOFTF64_WGSL}`;

/** The grid: one workgroup per group of TREE_GROUP rows. */
function groupsOf(a: GpuArgs, rows: number) {
  if (a.x.length < rows) return undefined;
  const groups = Math.ceil(rows / TREE_GROUP);
  return { gridRows: groups * WORKGROUP, words: { n: rows, groups } };
}

/** treeSum. Words: n (rows), groups. */
export const treeSumGpu = wgslKernel({
  narrow: { x: 'f32' },
  words: ['n', 'groups'],
  result: 'plain',
  body: () => /* wgsl */ `${HEAD}
var<workgroup> sums: array<D, ${WORKGROUP}>;
var<workgroup> lows: array<u32, ${WORKGROUP}>;
var<workgroup> highs: array<u32, ${WORKGROUP}>;
var<workgroup> bad: atomic<u32>;
// An f32's bits as a key in the order of its value (-0 just below +0).
fn order_key(bits: u32) -> u32 {
  return select(bits | 0x80000000u, ~bits, (bits >> 31u) == 1u);
}
fn key_bits(k: u32) -> u32 {
  return select(~k, k & 0x7fffffffu, (k >> 31u) == 1u);
}
${GROUP_MAIN(`  if (li == 0u) { atomicStore(&bad, 0u); }
  var s = D(0u, 0, 0u, 0u);
  var lo = 0xffffffffu;
  var hi = 0u;
  var nonfinite = 0u;
  for (var i = a; i < b; i++) {
    let bits = x[i];
    if (((bits >> 23u) & 0xffu) == 0xffu) {
      nonfinite = 1u;
      continue;
    }
    let k = order_key(bits);
    lo = min(lo, k);
    hi = max(hi, k);
    s = d_add(s, d_norm(d_from_f32(bits)));
  }
  sums[li] = s;
  lows[li] = lo;
  highs[li] = hi;
  workgroupBarrier();
  if (nonfinite == 1u) { atomicStore(&bad, 1u); }
${TREE(['sums'])}
  if (li == 0u) {
    // The extremes: exact, in any order.
    var lo_all = 0xffffffffu;
    var hi_all = 0u;
    for (var t = 0u; t < ${WORKGROUP}u; t++) {
      lo_all = min(lo_all, lows[t]);
      hi_all = max(hi_all, highs[t]);
    }
    let w = d_to_f64(sums[0]);
    let o = g * ${TREE_SUM_WORDS}u;
    result[o] = w.x;
    result[o + 1u] = w.y;
    result[o + 2u] = key_bits(lo_all);
    result[o + 3u] = key_bits(hi_all);
    result[o + 4u] = atomicLoad(&bad);
  }`)}`,
  build(a, rows) {
    const g = groupsOf(a, rows);
    return g && { ...g, resultWords: g.words.groups * TREE_SUM_WORDS, finish: treeSumValues };
  },
});

/** treeCentralSums. Words: n (rows), groups; c as f64 words. */
export const treeCentralSumsGpu = wgslKernel({
  params: { c: 'f64' },
  narrow: { x: 'f32' },
  words: ['n', 'groups'],
  result: 'plain',
  body: () => /* wgsl */ `${HEAD}
var<workgroup> s1: array<D, ${WORKGROUP}>;
var<workgroup> s2: array<D, ${WORKGROUP}>;
var<workgroup> s3: array<D, ${WORKGROUP}>;
var<workgroup> s4: array<D, ${WORKGROUP}>;
${GROUP_MAIN(`  let c = d_from_f64(p.c_hi, p.c_lo);
  let minus_c = D(c.s ^ 1u, c.e, c.hi, c.lo);
  var d1 = D(0u, 0, 0u, 0u);
  var d2 = d1;
  var d3 = d1;
  var d4 = d1;
  for (var i = a; i < b; i++) {
    let d = d_add(d_norm(d_from_f32(x[i])), minus_c);
    let dd = d_mul(d, d);
    d1 = d_add(d1, d);
    d2 = d_add(d2, dd);
    d3 = d_add(d3, d_mul(dd, d));
    d4 = d_add(d4, d_mul(dd, dd));
  }
  s1[li] = d1;
  s2[li] = d2;
  s3[li] = d3;
  s4[li] = d4;
  workgroupBarrier();
${TREE(['s1', 's2', 's3', 's4'])}
  if (li == 0u) {
    let o = g * ${TREE_CENTRAL_WORDS}u;
    let w1 = d_to_f64(s1[0]);
    let w2 = d_to_f64(s2[0]);
    let w3 = d_to_f64(s3[0]);
    let w4 = d_to_f64(s4[0]);
    result[o] = w1.x;
    result[o + 1u] = w1.y;
    result[o + 2u] = w2.x;
    result[o + 3u] = w2.y;
    result[o + 4u] = w3.x;
    result[o + 5u] = w3.y;
    result[o + 6u] = w4.x;
    result[o + 7u] = w4.y;
  }`)}`,
  build(a, rows) {
    // The centre as an f64 the software f64 takes: finite, normal or zero.
    const c = a.c as number;
    if (!Number.isFinite(c) || (c !== 0 && Math.abs(c) < 2 ** -1022)) return undefined;
    const g = groupsOf(a, rows);
    return g && { ...g, resultWords: g.words.groups * TREE_CENTRAL_WORDS, finish: treeCentralValues };
  },
});

const f64 = new Float64Array(1);
const f64w = new Uint32Array(f64.buffer);
const f32 = new Float32Array(1);
const f32w = new Uint32Array(f32.buffer);
const fromF64 = (hi: number, lo: number) => ((f64w[1] = hi), (f64w[0] = lo), f64[0]);
const fromF32 = (bits: number) => ((f32w[0] = bits), f32[0]);

/** treeSum's result words as the CPU kernel's partial: [sum, lowest, highest, non-finite] per group. */
export function treeSumValues(w: number[]): number[] {
  const out: number[] = [];
  for (let o = 0; o + TREE_SUM_WORDS <= w.length; o += TREE_SUM_WORDS) out.push(fromF64(w[o], w[o + 1]), fromF32(w[o + 2]), fromF32(w[o + 3]), w[o + 4]);
  return out;
}

/** treeCentralSums' result words as the CPU kernel's partial: four sums per group. */
export function treeCentralValues(w: number[]): number[] {
  const out: number[] = [];
  for (let o = 0; o + 1 < w.length; o += 2) out.push(fromF64(w[o], w[o + 1]));
  return out;
}
