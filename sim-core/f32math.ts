/**
 * exp2, exp, log2, pow, sqrt, sin and cos (of a turn) and normal draws in float32, defined as a fixed
 * sequence of float32 operations (each rounded to nearest even) so that the GPU's twin (gpu/softmath.wgsl.ts, the same sequence in the
 * software f32 of gpu/softfloat.wgsl.ts) gives the same bits. Math.exp and Math.pow differ between
 * engines and none exists in WGSL with a defined result, so kernels whose output must not depend
 * on the backend use these instead.
 *
 * Accuracy (tests/sim-core/f32math.test.ts): within 1.5e-7 relative of the exact value for exp2 and
 * log2 (about one unit in the last place; measured worst 9.3e-8), and within |x| x 1.2e-7 more for exp, whose argument is
 * first rounded to x log2(e) in float32. Results below 2^-126 are 0 (no subnormal results).
 *
 * Method. exp2(x): k = round(x), r = x - k in [-1/2, 1/2] (exact), 2^r by its Taylor polynomial
 * of degree 7 in r ln 2 (truncation below 6e-9 relative), times 2^k (exact). log2(x): x = m 2^e
 * with m in [sqrt(2)/2, sqrt(2)), t = (m - 1) / (m + 1), log2(m) = (2 / ln 2)(t + t^3/3 + ... +
 * t^9/9) (|t| <= 0.172, truncation below 5e-10), plus e.
 */

const f = Math.fround;
const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

/** The float32 bits of v (rounded to float32 first). */
export function bitsOf32(v: number): number {
  F32[0] = v;
  return U32[0];
}

/** The float32 whose bits are b. */
export function fromBits32(b: number): number {
  U32[0] = b;
  return F32[0];
}

/** (ln 2)^n / n! for n = 0..7, as float32. */
export const EXP2_COEFFS = [1, 0.6931471805599453, 0.2402265069591007, 0.05550410866482158, 0.009618129107628477, 0.0013333558146428443, 0.00015403530393381606, 1.525273380405984e-5].map(f);
/** 2 / (ln 2 x (2n + 1)) for n = 0..4, as float32: log2(m) = sum c_n t^(2n+1). */
export const LOG2_COEFFS = [0, 1, 2, 3, 4].map((n) => f(2 / (Math.LN2 * (2 * n + 1))));
const LOG2E = f(Math.LOG2E);
const SQRT2 = f(Math.SQRT2);

/** 2^x in float32 (x a float32 value). */
export function exp2f32(x0: number): number {
  const x = f(x0);
  if (x !== x) return NaN;
  if (x >= 128) return Infinity;
  if (x < -126) return 0;
  // Round half away from zero: the same integer on both sides, exactly.
  const k = x < 0 ? -Math.floor(0.5 - x) : Math.floor(x + 0.5);
  const r = f(x - k);
  let p = EXP2_COEFFS[7];
  for (let i = 6; i >= 0; i--) p = f(f(p * r) + EXP2_COEFFS[i]);
  // 2^k in float32 reaches 2^127: k = 128 scales twice (each scaling by a power of two is exact
  // unless the result leaves the normal range).
  const y = k > 127 ? f(f(p * 2 ** 127) * 2) : f(p * 2 ** k);
  return y < 2 ** -126 ? 0 : y;
}

/** e^x in float32: exp2(x log2 e), the product rounded to float32. */
export function expf32(x: number): number {
  return exp2f32(f(f(x) * LOG2E));
}

/** log2(x) in float32 for x > 0; -Infinity at 0, NaN below. */
export function log2f32(x0: number): number {
  const x = f(x0);
  if (!(x >= 0)) return NaN;
  if (x === 0) return -Infinity;
  if (x === Infinity) return Infinity;
  let b = bitsOf32(x);
  let e = (b >>> 23) & 0xff;
  if (e === 0) {
    // Subnormal: scale by 2^23 (exact) and take 23 off the exponent.
    b = bitsOf32(x * 2 ** 23);
    e = ((b >>> 23) & 0xff) - 23;
  }
  let m = fromBits32((b & 0x7fffff) | 0x3f800000);
  e -= 127;
  if (m > SQRT2) {
    m = f(m * 0.5);
    e += 1;
  }
  const t = f(f(m - 1) / f(m + 1));
  const t2 = f(t * t);
  let p = LOG2_COEFFS[4];
  for (let i = 3; i >= 0; i--) p = f(f(p * t2) + LOG2_COEFFS[i]);
  return f(f(p * t) + e);
}

/** a^b in float32 for a >= 0: exp2(b log2 a), with a^0 = 1 and 0^b = 0 for b > 0. */
export function powf32(a: number, b: number): number {
  const bb = f(b);
  if (bb === 0) return 1;
  const aa = f(a);
  if (aa === 0) return bb > 0 ? 0 : Infinity;
  return exp2f32(f(bb * log2f32(aa)));
}

/** The float32 bits that start sqrtf32's Newton steps: the exponent halved, the significand roughly. */
export const SQRT_SEED = 0x1fbd1df5;

/**
 * sqrt(x) in float32 for x >= 0 (a signed zero, infinity and NaN are returned as they are; NaN
 * for x < 0): a first guess from x's bits (the exponent halved, within 4%), then three Newton
 * steps y = (y + x / y) / 2 in float32, within about one unit in the last place for normal x.
 */
export function sqrtf32(x0: number): number {
  const x = f(x0);
  if (x < 0) return NaN;
  if (!(x > 0) || x === Infinity) return x;
  let y = fromBits32(((bitsOf32(x) >>> 1) + SQRT_SEED) >>> 0);
  for (let i = 0; i < 3; i++) y = f(f(y + f(x / y)) * 0.5);
  return y;
}

/** (-1)^n / (2n + 1)! and (-1)^n / (2n)! for n = 0..4, as float32: the Taylor coefficients of sin and cos. */
export const SIN_COEFFS = [1, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880].map(f);
export const COS_COEFFS = [1, -1 / 2, 1 / 24, -1 / 720, 1 / 40320].map(f);
const HALF_PI = f(Math.PI / 2);

/**
 * cos and sin of 2 pi h / 2^32 in float32 for a u32 h (a turn in 2^32 steps), into out[at] and
 * out[at + 1]: the quadrant and the position in it come from h's integer bits, a position past an
 * eighth of a turn is reflected, and sin and cos of the angle a in [0, pi/4] come from their Taylor
 * polynomials (degree 9 and 8, truncation below 4e-9) in float32; within a few units of 1e-7.
 */
export function sinCosTurns32(h: number, out: Float32Array, at: number): void {
  const q = h >>> 30;
  let r = h & 0x3fffffff;
  const flip = r > 0x20000000;
  if (flip) r = 0x40000000 - r;
  const a = f(f(f(r) * 2 ** -30) * HALF_PI);
  const a2 = f(a * a);
  let s = SIN_COEFFS[4];
  let c = COS_COEFFS[4];
  for (let i = 3; i >= 0; i--) {
    s = f(f(s * a2) + SIN_COEFFS[i]);
    c = f(f(c * a2) + COS_COEFFS[i]);
  }
  s = f(s * a);
  // The angle in the quadrant is a, or pi/2 - a when reflected.
  const cq = flip ? s : c;
  const sq = flip ? c : s;
  out[at] = q === 0 ? cq : q === 1 ? -sq : q === 2 ? -cq : sq;
  out[at + 1] = q === 0 ? sq : q === 1 ? cq : q === 2 ? -sq : -cq;
}

const LN2 = f(Math.LN2);

/**
 * Two independent standard normals in float32 from two u32 draws, by Box-Muller, into out[at]
 * and out[at + 1]: u1 = 1 - h1 / 2^32 rounded to float32 (in (0, 1]), r = sqrt(-2 ln u1), then
 * r cos(2 pi h2 / 2^32) and r sin(2 pi h2 / 2^32), every step in float32.
 */
export function normalPairFromHashes32(h1: number, h2: number, out: Float32Array, at: number): void {
  const u1 = h1 === 0 ? 1 : f(f(4294967296 - h1) * 2 ** -32);
  const r = sqrtf32(f(-2 * f(log2f32(u1) * LN2)));
  sinCosTurns32(h2, out, at);
  out[at] = f(r * out[at]);
  out[at + 1] = f(r * out[at + 1]);
}
