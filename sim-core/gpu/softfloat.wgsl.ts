/**
 * IEEE-754 binary32 arithmetic in WGSL integer operations: addition, subtraction, multiplication
 * and division rounded to nearest, ties to even, with gradual underflow (subnormals kept), on the
 * bit patterns of f32 values held as u32.
 *
 * Why not WGSL's own f32: the WGSL specification (section 15.7) lets an implementation reassociate
 * operations, fuse a multiply and an add, flush subnormal inputs and outputs to zero, and round a
 * division to within 2.5 ULP. Any of those changes the bytes of an opinion column between devices,
 * and between a device and the CPU. Integer operations are exact everywhere, so these functions
 * give, on every adapter, exactly what the CPU gets from `Math.fround(a op b)` on two f32 values
 * (double rounding through f64 is harmless for +, -, x and / because 53 >= 2 x 24 + 2: Figueroa,
 * "When is double rounding innocuous?", SIGNUM Newsletter 30(3), 1995).
 *
 * Inputs are finite; an infinite or NaN input gives an unspecified finite or infinite result
 * (opinions and model parameters are checked finite by the kernels' WGSL builders before a call
 * comes here).
 *
 * Working format: a significand m with its leading one at bit 29 (23 fraction bits, then 6 bits
 * below the last place, the lowest holding a sticky bit) and a biased exponent e >= 1.
 *
 * Needs `mulhi` from rng.wgsl.ts in the same shader.
 */
export const SOFTFLOAT_WGSL = /* wgsl */ `
const F_SIGN = 0x80000000u;
const F_ABS = 0x7fffffffu;

// m >> s, with every bit shifted out ORed into bit 0 (s may be 32 or more).
fn f_shift_sticky(m: u32, s: u32) -> u32 {
  if (s == 0u) { return m; }
  if (s >= 31u) { return select(0u, 1u, m != 0u); }
  return (m >> s) | select(0u, 1u, (m & ((1u << s) - 1u)) != 0u);
}

// Rounds m (leading one at bit 29, or below it only when e == 1: a subnormal) to 24 bits, nearest
// even, and packs it with sign s and exponent e. A carry out of rounding moves into the exponent
// field by the addition itself, as does a subnormal rounding up to the smallest normal.
fn f_round_pack(s: u32, e: i32, m: u32) -> u32 {
  if (e >= 255) { return s | 0x7f800000u; }
  var q = m >> 6u;
  let r = m & 63u;
  if (r > 32u || (r == 32u && (q & 1u) == 1u)) { q = q + 1u; }
  if (q == 0u) { return s; }
  return s | ((u32(e - 1) << 23u) + q);
}

// The significand of a nonzero finite x with its leading one at bit 23, and its unbiased-by-one
// exponent (subnormals are normalised, so the exponent may fall below 1).
fn f_unpack(x: u32) -> vec2<i32> {
  let ex = i32((x >> 23u) & 0xffu);
  let fr = x & 0x7fffffu;
  if (ex != 0) { return vec2<i32>(i32(fr | 0x800000u), ex); }
  let sh = countLeadingZeros(fr) - 8u;
  return vec2<i32>(i32(fr << sh), 1 - i32(sh));
}

// Moves a value below the normal range (e < 1) to e = 1 by shifting its significand right.
fn f_denormal(s: u32, e: i32, m: u32) -> u32 {
  if (e >= 1) { return f_round_pack(s, e, m); }
  return f_round_pack(s, 1, f_shift_sticky(m, u32(1 - e)));
}

fn f_add(a: u32, b: u32) -> u32 {
  if ((a & F_ABS) == 0u) {
    // Both zero: -0 only when both are -0 (round to nearest).
    if ((b & F_ABS) == 0u) { return a & b; }
    return b;
  }
  if ((b & F_ABS) == 0u) { return a; }
  // x carries the larger magnitude (bit patterns of finite values order as their magnitudes).
  var x = a;
  var y = b;
  if ((b & F_ABS) > (a & F_ABS)) { x = b; y = a; }
  let ex = i32(max((x >> 23u) & 0xffu, 1u));
  let ey = i32(max((y >> 23u) & 0xffu, 1u));
  let mx = ((x & 0x7fffffu) | select(0u, 0x800000u, (x & 0x7f800000u) != 0u)) << 6u;
  let my = f_shift_sticky(((y & 0x7fffffu) | select(0u, 0x800000u, (y & 0x7f800000u) != 0u)) << 6u, u32(ex - ey));
  var m: u32;
  if (((x ^ y) & F_SIGN) == 0u) { m = mx + my; } else { m = mx - my; }
  // Exact cancellation gives +0.
  if (m == 0u) { return 0u; }
  let s = x & F_SIGN;
  var e = ex;
  if (m >= 0x40000000u) {
    m = f_shift_sticky(m, 1u);
    e = e + 1;
  } else {
    // Left shifts are exact: a cancellation of more than one place happens only when the operands
    // were at most one place apart, so no sticky bits were set.
    let lz = i32(countLeadingZeros(m)) - 2;
    let sh = min(lz, e - 1);
    m = m << u32(sh);
    e = e - sh;
  }
  return f_round_pack(s, e, m);
}

fn f_sub(a: u32, b: u32) -> u32 {
  return f_add(a, b ^ F_SIGN);
}

fn f_mul(a: u32, b: u32) -> u32 {
  let s = (a ^ b) & F_SIGN;
  if ((a & F_ABS) == 0u || (b & F_ABS) == 0u) { return s; }
  let ua = f_unpack(a);
  let ub = f_unpack(b);
  // The 48-bit product of two 24-bit significands, leading one at bit 46 or 47.
  let pa = u32(ua.x);
  let pb = u32(ub.x);
  let lo = pa * pb;
  let hi = mulhi(pa, pb);
  var m = (hi << 15u) | (lo >> 17u) | select(0u, 1u, (lo & 0x1ffffu) != 0u);
  var e = ua.y + ub.y - 127;
  if (m >= 0x40000000u) {
    m = f_shift_sticky(m, 1u);
    e = e + 1;
  }
  return f_denormal(s, e, m);
}

// a / b for b != 0, by restoring long division of the significands: 30 quotient bits, and the
// remainder as the sticky bit.
fn f_div(a: u32, b: u32) -> u32 {
  let s = (a ^ b) & F_SIGN;
  if ((b & F_ABS) == 0u) { return s | 0x7f800000u; }
  if ((a & F_ABS) == 0u) { return s; }
  let ua = f_unpack(a);
  let ub = f_unpack(b);
  var r = u32(ua.x);
  let d = u32(ub.x);
  var e = ua.y - ub.y + 127;
  if (r < d) {
    r = r << 1u;
    e = e - 1;
  }
  var q = 0u;
  for (var i = 0u; i < 30u; i++) {
    q = q << 1u;
    if (r >= d) {
      r = r - d;
      q = q | 1u;
    }
    r = r << 1u;
  }
  return f_denormal(s, e, q | select(0u, 1u, r != 0u));
}

// n as an f32, rounded to nearest even.
fn f_from_u32(n: u32) -> u32 {
  if (n == 0u) { return 0u; }
  let top = 31 - i32(countLeadingZeros(n));
  var m: u32;
  if (top > 29) { m = f_shift_sticky(n, u32(top - 29)); } else { m = n << u32(29 - top); }
  return f_round_pack(0u, 127 + top, m);
}

// A u32 whose unsigned order is the numeric order of finite f32 values, with -0 equal to +0.
fn f_key(x0: u32) -> u32 {
  var x = x0;
  if ((x & F_ABS) == 0u) { x = 0u; }
  return select(x | F_SIGN, ~x, (x & F_SIGN) != 0u);
}

fn f_lt(a: u32, b: u32) -> bool { return f_key(a) < f_key(b); }
fn f_le(a: u32, b: u32) -> bool { return f_key(a) <= f_key(b); }
`;
