/**
 * IEEE-754 binary64 arithmetic in WGSL integer operations, for the few f64 values the device must
 * reproduce bit for bit:
 * - `d_mul`: the post base scores (recsys/baseScores.wgsl.ts), products of f64 table values
 *   and an f32 rank multiplier rounded to nearest even at 53 bits, as the CPU's f64 product is, then
 *   to f32 as Math.fround rounds (subnormals kept; double rounding reproduced, not avoided: the CPU
 *   rounds twice too);
 * - `d_add`: the opinion statistics' sums (sim-core/kernels.ts `treeSum`, `treeCentralSums`; the
 *   shaders in treeSums.wgsl.ts), each addition rounded to nearest even as the CPU's is.
 *
 * A value is a `D`: sign s, and (hi x 2^32 + lo) x 2^e with hi below 2^22; `d_mul`, `d_add` and
 * `d_norm` return it normalised (the significand's top bit at bit 52, or zero). Inputs are finite,
 * zero or normal f64 and finite f32 values (no infinities or NaN: base scores are finite by
 * construction, the statistics check their inputs), and results stay in the normal range (no
 * overflow, no f64 subnormals: the callers' values are far from both).
 *
 * Needs SOFTFLOAT_WGSL (f_denormal, which rounds to f32) in the same shader.
 */
export const SOFTF64_WGSL = /* wgsl */ `
// An f64 operand or result: value = (hi x 2^32 + lo) x 2^e, sign s; hi < 2^22.
struct D { s: u32, e: i32, hi: u32, lo: u32 }

// Bits [bit, bit + 32) of the 128-bit w (w[0] lowest), 0 past the top.
fn d_bits(w0: array<u32, 4>, bit: u32) -> u32 {
  var w = w0;
  let i = bit >> 5u;
  let o = bit & 31u;
  var x = 0u;
  if (i < 4u) { x = w[i] >> o; }
  if (o != 0u && i + 1u < 4u) { x = x | (w[i + 1u] << (32u - o)); }
  return x;
}

// a x b rounded to 53 bits, nearest even (as an f64 product is); the result normalised, its top bit at bit 52.
fn d_mul(a: D, b: D) -> D {
  let s = a.s ^ b.s;
  if ((a.hi | a.lo) == 0u || (b.hi | b.lo) == 0u) { return D(s, 0, 0u, 0u); }
  var x = array<u32, 4>(a.lo & 0xffffu, a.lo >> 16u, a.hi & 0xffffu, a.hi >> 16u);
  var y = array<u32, 4>(b.lo & 0xffffu, b.lo >> 16u, b.hi & 0xffffu, b.hi >> 16u);
  var c = array<u32, 9>(0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u);
  for (var i = 0u; i < 4u; i++) {
    for (var j = 0u; j < 4u; j++) {
      let p = x[i] * y[j];
      c[i + j] += p & 0xffffu;
      c[i + j + 1u] += p >> 16u;
    }
  }
  for (var k = 0u; k < 8u; k++) {
    c[k + 1u] += c[k] >> 16u;
    c[k] = c[k] & 0xffffu;
  }
  var w = array<u32, 4>(c[0] | (c[1] << 16u), c[2] | (c[3] << 16u), c[4] | (c[5] << 16u), c[6] | (c[7] << 16u));
  // The top bit n of the product.
  var n = 0u;
  for (var k = 0u; k < 4u; k++) {
    if (w[k] != 0u) { n = 32u * k + 31u - countLeadingZeros(w[k]); }
  }
  var e = a.e + b.e;
  var hi: u32;
  var lo: u32;
  if (n <= 52u) {
    // Exact: shift left.
    let sh = 52u - n;
    if (sh >= 32u) {
      hi = w[0] << (sh - 32u);
      lo = 0u;
    } else if (sh == 0u) {
      hi = w[1];
      lo = w[0];
    } else {
      hi = (w[1] << sh) | (w[0] >> (32u - sh));
      lo = w[0] << sh;
    }
    return D(s, e - i32(sh), hi, lo);
  }
  let sh = n - 52u;
  lo = d_bits(w, sh);
  hi = d_bits(w, sh + 32u) & 0x1fffffu;
  let round = (d_bits(w, sh - 1u) & 1u) == 1u;
  // Bits below the round bit.
  var sticky = false;
  let below = sh - 1u;
  for (var k = 0u; k < 4u; k++) {
    if (32u * k + 32u <= below) { sticky = sticky || w[k] != 0u; }
    else if (32u * k < below) { sticky = sticky || (w[k] & ((1u << (below - 32u * k)) - 1u)) != 0u; }
  }
  e = e + i32(sh);
  if (round && (sticky || (lo & 1u) == 1u)) {
    lo = lo + 1u;
    if (lo == 0u) { hi = hi + 1u; }
    if (hi == 0x200000u) {
      hi = 0x100000u;
      e = e + 1;
    }
  }
  return D(s, e, hi, lo);
}

// An f64 from its two words (finite, normal or zero).
fn d_from_f64(hw: u32, lw: u32) -> D {
  let be = (hw >> 20u) & 0x7ffu;
  if (be == 0u) { return D(hw >> 31u, 0, 0u, 0u); }
  return D(hw >> 31u, i32(be) - 1075, (hw & 0xfffffu) | 0x100000u, lw);
}

// An f32 from its bits (finite).
fn d_from_f32(x: u32) -> D {
  let be = (x >> 23u) & 0xffu;
  if (be == 0u) { return D(x >> 31u, -149, 0u, x & 0x7fffffu); }
  return D(x >> 31u, i32(be) - 150, 0u, (x & 0x7fffffu) | 0x800000u);
}

// A normalised D (or zero) rounded to an f32, nearest even, subnormals kept: Math.fround of the f64.
fn d_to_f32(d: D) -> u32 {
  let s = d.s << 31u;
  if ((d.hi | d.lo) == 0u) { return s; }
  // The significand's 30 high bits (leading one at bit 29), the rest as a sticky bit.
  let m = (d.hi << 9u) | (d.lo >> 23u) | select(0u, 1u, (d.lo & 0x7fffffu) != 0u);
  return f_denormal(s, d.e + 179, m);
}
// d with its significand's top bit moved to bit 52 (d's significand below 2^53), or zero.
fn d_norm(d: D) -> D {
  if ((d.hi | d.lo) == 0u) { return D(d.s, 0, 0u, 0u); }
  let lz = select(32u + countLeadingZeros(d.lo), countLeadingZeros(d.hi), d.hi != 0u);
  let sh = lz - 11u;
  if (sh == 0u) { return d; }
  if (sh >= 32u) { return D(d.s, d.e - i32(sh), d.lo << (sh - 32u), 0u); }
  return D(d.s, d.e - i32(sh), (d.hi << sh) | (d.lo >> (32u - sh)), d.lo << sh);
}

// The high and low words of (hi, lo) >> k, any bit shifted out ORed into the lowest (sticky).
fn d_shr_sticky(hi: u32, lo: u32, k: u32) -> vec2<u32> {
  if (k == 0u) { return vec2<u32>(hi, lo); }
  if (k >= 64u) { return vec2<u32>(0u, select(0u, 1u, (hi | lo) != 0u)); }
  if (k >= 32u) {
    let lost = lo != 0u || (k > 32u && (hi << (64u - k)) != 0u);
    return vec2<u32>(0u, (hi >> (k - 32u)) | select(0u, 1u, lost));
  }
  let lost = (lo << (32u - k)) != 0u;
  return vec2<u32>(hi >> k, (lo >> k) | (hi << (32u - k)) | select(0u, 1u, lost));
}

// a + b rounded to 53 bits, nearest even (as an f64 sum is), for normalised a and b; an exact
// zero sum is +0 (-0 only for -0 + -0).
fn d_add(a0: D, b0: D) -> D {
  let az = (a0.hi | a0.lo) == 0u;
  let bz = (b0.hi | b0.lo) == 0u;
  if (az && bz) { return D(a0.s & b0.s, 0, 0u, 0u); }
  if (bz) { return a0; }
  if (az) { return b0; }
  // a the larger in magnitude.
  var a = a0;
  var b = b0;
  if (b.e > a.e || (b.e == a.e && (b.hi > a.hi || (b.hi == a.hi && b.lo > a.lo)))) {
    a = b0;
    b = a0;
  }
  // Both significands with three guard bits (top bit at 55); b aligned to a, sticky.
  let ah = (a.hi << 3u) | (a.lo >> 29u);
  let al = a.lo << 3u;
  let bb = d_shr_sticky((b.hi << 3u) | (b.lo >> 29u), b.lo << 3u, u32(a.e - b.e));
  var e = a.e - 3;
  var h: u32;
  var l: u32;
  if (a.s == b.s) {
    l = al + bb.y;
    h = ah + bb.x + select(0u, 1u, l < al);
    if (h >= 0x1000000u) {
      // A carry to bit 56: one bit right, kept as sticky.
      l = (l >> 1u) | (h << 31u) | (l & 1u);
      h = h >> 1u;
      e = e + 1;
    }
  } else {
    l = al - bb.y;
    h = ah - bb.x - select(0u, 1u, al < bb.y);
    if ((h | l) == 0u) { return D(0u, 0, 0u, 0u); }
    // Top bit back to 55 (more than one place only when b was not shifted past the guard bits: exact).
    let lz = select(32u + countLeadingZeros(l), countLeadingZeros(h), h != 0u);
    let sh = lz - 8u;
    if (sh >= 32u) {
      h = l << (sh - 32u);
      l = 0u;
    } else if (sh > 0u) {
      h = (h << sh) | (l >> (32u - sh));
      l = l << sh;
    }
    e = e - i32(sh);
  }
  // Round the three guard bits off, to nearest even.
  let g = l & 7u;
  l = (l >> 3u) | (h << 29u);
  h = h >> 3u;
  e = e + 3;
  if (g > 4u || (g == 4u && (l & 1u) == 1u)) {
    l = l + 1u;
    if (l == 0u) { h = h + 1u; }
    if (h == 0x200000u) {
      h = 0x100000u;
      e = e + 1;
    }
  }
  return D(a.s, e, h, l);
}

// The high and low words of a normalised D (or zero) as an f64.
fn d_to_f64(d: D) -> vec2<u32> {
  if ((d.hi | d.lo) == 0u) { return vec2<u32>(d.s << 31u, 0u); }
  return vec2<u32>((d.s << 31u) | (u32(d.e + 1075) << 20u) | (d.hi & 0xfffffu), d.lo);
}
`;
