/**
 * WGSL versions of the continuous opinion kernels of sim-core/kernels.ts (DeGroot's
 * `segmentMean`, Hegselmann-Krause's `segmentBoundedMean` and synchronous Deffuant's
 * `boundedStep`) on f32 columns. Every float operation goes through softfloat.wgsl.ts, in the
 * order the CPU declaration performs it, so each output's bits equal the CPU's on every adapter.
 * Columns are bound as array<u32> (their bit patterns); parameters are passed as f32 bit patterns.
 * A call stays on the CPU for f64 columns or a parameter the software f32 does not take (it takes
 * finite f32 values; eps may also be infinite).
 */
import { RNG_WGSL } from './rng.wgsl.ts';
import { SOFTFLOAT_WGSL } from './softfloat.wgsl.ts';
import { ROW } from './kernels.wgsl.ts';
import { WORKGROUP } from './dispatch.ts';
import { wgslKernel } from './wgslKernel.ts';

const ARITHMETIC = `${RNG_WGSL}\n${SOFTFLOAT_WGSL}`;

/** Finite as an f32 (the parameters the software f32 takes). */
const finite32 = (v: unknown) => typeof v === 'number' && Number.isFinite(Math.fround(v));

/** Entry of the CSR opinion kernels: row v. */
const CSR_OPINION_MAIN = /* wgsl */ `
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}`;

/**
 * segmentMean, f32: s = w x[v] then s += x[u] over the row in order, out[v] = s / (w + deg) when
 * that is > 0, else x[v]; w (selfWeight) as f32 bits.
 */
export const segmentMeanGpu = wgslKernel({
  params: { selfWeight: 'f32' },
  bind: { targets: 'split' },
  narrow: { x: 'f32', out: 'f32' },
  body: () => /* wgsl */ `
${ARITHMETIC}
${CSR_OPINION_MAIN}
  let lo = u32(offsets[v]);
  let hi = u32(offsets[v + 1u]);
  var s = f_mul(p.self_weight, x[v]);
  for (var j = lo; j < hi; j++) { s = f_add(s, x[u32(tgt(j))]); }
  let w = f_add(p.self_weight, f_from_u32(hi - lo));
  out[v] = select(x[v], f_div(s, w), f_lt(0u, w));
}`,
  build(a, rows) {
    if (a.offsets.length < rows + 1 || a.x === a.out || !finite32(a.selfWeight)) return undefined;
    return { gridRows: rows };
  },
});

/**
 * segmentBoundedMean, f32: over the row in order, d = x[u] - x[v] and, when -eps <= d <= eps
 * (strict: -eps < d < eps), s += x[u] and c += 1, starting from s = x[v], c = 1 when self = 1;
 * out[v] = s / c, or x[v] when c = 0; eps as f32 bits.
 */
export const segmentBoundedMeanGpu = wgslKernel({
  params: { eps: 'f32', self: 'bool', strict: 'bool' },
  bind: { targets: 'split' },
  body: () => /* wgsl */ `
${ARITHMETIC}
${CSR_OPINION_MAIN}
  let xv = x[v];
  let neg_eps = p.eps ^ F_SIGN;
  var s = select(0u, xv, p.self_ != 0u);
  var c = select(0u, 1u, p.self_ != 0u);
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
}`,
  build(a, rows) {
    if (a.offsets.length < rows + 1 || a.x === a.out || Number.isNaN(a.eps)) return undefined;
    return { gridRows: rows };
  },
});

/**
 * boundedStep, f32: j = partner[i]; d = x[j] - x[i]; out[i] = x[i] + mu d when -eps < d < eps,
 * else x[i] (and x[i] when j < 0); eps and mu as f32 bits.
 */
export const boundedStepGpu = wgslKernel({
  params: { eps: 'f32', mu: 'f32' },
  body: () => /* wgsl */ `
${ARITHMETIC}
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
}`,
  build(a, rows) {
    if (a.x === a.out || !finite32(a.mu) || Number.isNaN(a.eps)) return undefined;
    return { gridRows: rows };
  },
});
