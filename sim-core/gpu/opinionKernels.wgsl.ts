/**
 * WGSL versions of the continuous opinion kernels of sim-core/kernels.ts (DeGroot's
 * `segmentMean`, Hegselmann-Krause's `segmentBoundedMean` and synchronous Deffuant's
 * `boundedStep`) on f32 columns. Every float operation goes through softfloat.wgsl.ts, in the
 * order the CPU declaration performs it, so each output's bits equal the CPU's on every adapter.
 * Columns are bound as array<u32> (their bit patterns); parameters are passed as f32 bit patterns.
 * Bindings follow dispatch.ts, with CSR targets split as in kernels.wgsl.ts.
 */
import { RNG_WGSL } from './rng.wgsl.ts';
import { SOFTFLOAT_WGSL } from './softfloat.wgsl.ts';
import { ROW, SPLIT_TARGETS, perParts } from './kernels.wgsl.ts';
import { WORKGROUP } from './dispatch.ts';

const ARITHMETIC = `${RNG_WGSL}\n${SOFTFLOAT_WGSL}`;

/** Bindings and entry of the CSR opinion kernels: offsets, split targets, x, out; row v. */
const CSR_OPINION_MAIN = (parts: number) => /* wgsl */ `
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> offsets: array<i32>;
${SPLIT_TARGETS(2, parts)}
@group(0) @binding(${2 + parts}) var<storage, read> x: array<u32>;
@group(0) @binding(${3 + parts}) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}`;

/**
 * segmentMean, f32: s = w x[v] then s += x[u] over the row in order, out[v] = s / (w + deg) when
 * that is > 0, else x[v]. Parameters: part, then w (selfWeight) as f32 bits.
 */
export const SEGMENT_MEAN_F32_WGSL = perParts((parts) => /* wgsl */ `
${ARITHMETIC}
struct Params { rows: u32, stride: u32, part: u32, self_weight: u32 }
${CSR_OPINION_MAIN(parts)}
  let lo = u32(offsets[v]);
  let hi = u32(offsets[v + 1u]);
  var s = f_mul(p.self_weight, x[v]);
  for (var j = lo; j < hi; j++) { s = f_add(s, x[u32(tgt(j))]); }
  let w = f_add(p.self_weight, f_from_u32(hi - lo));
  out[v] = select(x[v], f_div(s, w), f_lt(0u, w));
}`);

/**
 * segmentBoundedMean, f32: over the row in order, d = x[u] - x[v] and, when -eps <= d <= eps
 * (strict: -eps < d < eps), s += x[u] and c += 1, starting from s = x[v], c = 1 when self = 1;
 * out[v] = s / c, or x[v] when c = 0. Parameters: part, eps as f32 bits, self, strict.
 */
export const SEGMENT_BOUNDED_MEAN_F32_WGSL = perParts((parts) => /* wgsl */ `
${ARITHMETIC}
struct Params { rows: u32, stride: u32, part: u32, eps: u32, self_in: u32, strict: u32 }
${CSR_OPINION_MAIN(parts)}
  let xv = x[v];
  let neg_eps = p.eps ^ F_SIGN;
  var s = select(0u, xv, p.self_in != 0u);
  var c = select(0u, 1u, p.self_in != 0u);
  let lo = u32(offsets[v]);
  let hi = u32(offsets[v + 1u]);
  for (var j = lo; j < hi; j++) {
    let xu = x[u32(tgt(j))];
    let d = f_sub(xu, xv);
    var within: bool;
    if (p.strict != 0u) { within = f_lt(d, p.eps) && f_lt(neg_eps, d); } else { within = f_le(d, p.eps) && f_le(neg_eps, d); }
    if (within) {
      s = f_add(s, xu);
      c++;
    }
  }
  out[v] = select(xv, f_div(s, f_from_u32(c)), c > 0u);
}`);

/**
 * boundedStep, f32: j = partner[i]; d = x[j] - x[i]; out[i] = x[i] + mu d when -eps < d < eps,
 * else x[i] (and x[i] when j < 0). Parameters: eps and mu as f32 bits.
 */
export const BOUNDED_STEP_F32_WGSL = /* wgsl */ `
${ARITHMETIC}
struct Params { rows: u32, stride: u32, eps: u32, mu: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read> partner: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  let xi = x[v];
  let j = partner[v];
  var r = xi;
  if (j >= 0) {
    let d = f_sub(x[u32(j)], xi);
    if (f_lt(d, p.eps) && f_lt(p.eps ^ F_SIGN, d)) { r = f_add(xi, f_mul(p.mu, d)); }
  }
  out[v] = r;
}`;

/** The bits of Math.fround(v), as the shaders' f32 parameters. */
export function f32Bits(v: number): number {
  return new Uint32Array(Float32Array.of(v).buffer)[0];
}
