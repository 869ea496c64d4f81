/**
 * The float32 exp2, exp, log2, pow, sqrt, sin and cos of a turn and normal pair of sim-core/f32math.ts in WGSL: the same sequence of float32
 * operations, each through the software f32 of softfloat.wgsl.ts, so results equal the CPU's bit
 * for bit (tests/sim-core/gpu/softmath.test.ts). Arguments are finite float32 bit patterns; see
 * f32math.ts for the method and its accuracy. Needs RNG_WGSL (mulhi) and SOFTFLOAT_WGSL before it.
 */
import { COS_COEFFS, EXP2_COEFFS, LOG2_COEFFS, SIN_COEFFS, SQRT_SEED, bitsOf32 } from '../f32math.ts';

const hex = (v: number) => `0x${bitsOf32(v).toString(16)}u`;

export const SOFTMATH_WGSL = /* wgsl */ `
const EXP2_C = array<u32, 8>(${EXP2_COEFFS.map(hex).join(', ')});
const LOG2_C = array<u32, 5>(${LOG2_COEFFS.map(hex).join(', ')});
const F_LOG2E = ${hex(Math.LOG2E)};
const F_SQRT2 = ${hex(Math.SQRT2)};
const F_ONE = 0x3f800000u;
const F_INF = 0x7f800000u;
const SIN_C = array<u32, 5>(${SIN_COEFFS.map(hex).join(', ')});
const COS_C = array<u32, 5>(${COS_COEFFS.map(hex).join(', ')});
const F_HALF_PI = ${hex(Math.PI / 2)};
const F_LN2 = ${hex(Math.LN2)};

// k as a float32 (|k| < 2^24: exact).
fn f_from_i32(k: i32) -> u32 {
  if (k < 0) { return f_from_u32(u32(-k)) | F_SIGN; }
  return f_from_u32(u32(k));
}

// x rounded to the nearest integer, halves away from zero, for |x| < 2^23.
fn f_round_away(x: u32) -> i32 {
  let e = i32((x >> 23u) & 0xffu);
  if (e < 126) { return 0; }
  let m = (x & 0x7fffffu) | 0x800000u;
  let sh = u32(150 - e);
  let q = i32((m + (1u << (sh - 1u))) >> sh);
  return select(q, -q, (x & F_SIGN) != 0u);
}

// 2^k as a float32, -126 <= k <= 127.
fn f_pow2(k: i32) -> u32 {
  return u32(k + 127) << 23u;
}

fn f_exp2(x: u32) -> u32 {
  if (f_le(0x43000000u, x)) { return F_INF; }          // x >= 128
  if (f_lt(x, 0xc2fc0000u)) { return 0u; }             // x < -126
  let k = f_round_away(x);
  let r = f_sub(x, f_from_i32(k));
  var p = EXP2_C[7];
  for (var i = 6; i >= 0; i--) { p = f_add(f_mul(p, r), EXP2_C[i]); }
  var y: u32;
  if (k > 127) { y = f_mul(f_mul(p, f_pow2(127)), 0x40000000u); } else { y = f_mul(p, f_pow2(k)); }
  if (f_lt(y, 0x00800000u)) { return 0u; }
  return y;
}

fn f_exp(x: u32) -> u32 {
  return f_exp2(f_mul(x, F_LOG2E));
}

// log2(x) for x > 0 (0 gives -infinity).
fn f_log2(x: u32) -> u32 {
  if ((x & F_ABS) == 0u) { return F_INF | F_SIGN; }
  if (x == F_INF) { return F_INF; }
  var e = i32((x >> 23u) & 0xffu);
  var fr = x & 0x7fffffu;
  if (e == 0) {
    let sh = countLeadingZeros(fr) - 8u;
    fr = (fr << sh) & 0x7fffffu;
    e = 1 - i32(sh);
  }
  var m = fr | F_ONE;
  e = e - 127;
  if (f_lt(F_SQRT2, m)) {
    m = f_mul(m, 0x3f000000u);
    e = e + 1;
  }
  let t = f_div(f_sub(m, F_ONE), f_add(m, F_ONE));
  let t2 = f_mul(t, t);
  var p = LOG2_C[4];
  for (var i = 3; i >= 0; i--) { p = f_add(f_mul(p, t2), LOG2_C[i]); }
  return f_add(f_mul(p, t), f_from_i32(e));
}

// a^b for a >= 0: a^0 = 1, 0^b = 0 for b > 0 (infinity for b < 0).
fn f_pow(a: u32, b: u32) -> u32 {
  if ((b & F_ABS) == 0u) { return F_ONE; }
  if ((a & F_ABS) == 0u) { return select(F_INF, 0u, (b & F_SIGN) == 0u); }
  return f_exp2(f_mul(b, f_log2(a)));
}

// sqrt for x >= 0 (signed zeros, infinity and NaN as they are; NaN below 0): the bits' first
// guess, then three Newton steps.
fn f_sqrt(x: u32) -> u32 {
  if ((x & F_ABS) > F_INF || (x & F_ABS) == 0u || x == F_INF) { return x; }
  if ((x & F_SIGN) != 0u) { return 0x7fc00000u; }
  var y = (x >> 1u) + ${SQRT_SEED}u;
  for (var i = 0; i < 3; i++) { y = f_mul(f_add(y, f_div(x, y)), 0x3f000000u); }
  return y;
}

// (cos, sin) of 2 pi h / 2^32: quadrant and position from h's bits, reflected past an eighth of
// a turn, Taylor polynomials of sin and cos on [0, pi/4].
fn f_sin_cos_turns(h: u32) -> vec2<u32> {
  let q = h >> 30u;
  var r = h & 0x3fffffffu;
  let flip = r > 0x20000000u;
  if (flip) { r = 0x40000000u - r; }
  // r 2^-30 (0x30800000 is 2^-30), times pi/2.
  let a = f_mul(f_mul(f_from_u32(r), 0x30800000u), F_HALF_PI);
  let a2 = f_mul(a, a);
  var s = SIN_C[4];
  var c = COS_C[4];
  for (var i = 3; i >= 0; i--) {
    s = f_add(f_mul(s, a2), SIN_C[i]);
    c = f_add(f_mul(c, a2), COS_C[i]);
  }
  s = f_mul(s, a);
  let cq = select(c, s, flip);
  let sq = select(s, c, flip);
  switch q {
    case 0u: { return vec2<u32>(cq, sq); }
    case 1u: { return vec2<u32>(sq ^ F_SIGN, cq); }
    case 2u: { return vec2<u32>(cq ^ F_SIGN, sq ^ F_SIGN); }
    default: { return vec2<u32>(sq, cq ^ F_SIGN); }
  }
}

// Box-Muller's two normals from two draws: u1 = 1 - h1 / 2^32 in float32 (0x2f800000 is 2^-32),
// r = sqrt(-2 ln u1), then r cos and r sin of 2 pi h2 / 2^32.
fn f_normal_pair(h1: u32, h2: u32) -> vec2<u32> {
  var u1 = F_ONE;
  if (h1 != 0u) { u1 = f_mul(f_from_u32(0u - h1), 0x2f800000u); }
  let r = f_sqrt(f_mul(0xc0000000u, f_mul(f_log2(u1), F_LN2)));
  let cs = f_sin_cos_turns(h2);
  return vec2<u32>(f_mul(r, cs.x), f_mul(r, cs.y));
}
`;
