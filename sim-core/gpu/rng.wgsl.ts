/**
 * The counter RNG of sim-core/rng.ts in WGSL, with equal u32 outputs: the same lowbias32 mixer and
 * the same composition, every operation a 32-bit integer one (WGSL's u32 arithmetic wraps, as
 * Math.imul and `>>> 0` do). A 53-bit key is passed as two u32 words (`keyWords`).
 *
 * Kernels compare integers (`rng_hash(...) < threshold`), never floats, so a Bernoulli draw gives
 * the same answer on every backend.
 */
export const RNG_WGSL = /* wgsl */ `
fn mix32(x0: u32) -> u32 {
  var x = x0;
  x = x ^ (x >> 16u);
  x = x * 0x7feb352du;
  x = x ^ (x >> 15u);
  x = x * 0x846ca68bu;
  x = x ^ (x >> 16u);
  return x;
}

// hash(key, row, draw) of rng.ts; key = key_hi * 2^32 + key_lo.
fn rng_hash(key_lo: u32, key_hi: u32, row: u32, draw: u32) -> u32 {
  return mix32((mix32(row ^ key_lo) ^ key_hi) + (draw + 1u) * 0x9e3779b9u);
}

// The high 32 bits of the 64-bit product a * b (WGSL has no u64), from 16-bit halves.
fn mulhi(a: u32, b: u32) -> u32 {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p00 = a0 * b0;
  let p10 = a1 * b0;
  let p01 = a0 * b1;
  let mid = (p00 >> 16u) + (p10 & 0xffffu) + (p01 & 0xffffu);
  return a1 * b1 + (p10 >> 16u) + (p01 >> 16u) + (mid >> 16u);
}

// below(key, row, n, draw) of rng.ts: floor(uniform * n) = mulhi(hash, n). The CPU's float product
// is exact while hash * n < 2^53, i.e. for every n < 2^21; past that the two may differ.
fn rng_below(key_lo: u32, key_hi: u32, row: u32, n: u32, draw: u32) -> u32 {
  return mulhi(rng_hash(key_lo, key_hi, row, draw), n);
}
`;

/** A key of rng.ts (an integer below 2^53) as the [lo, hi] u32 words the WGSL functions take. */
export function keyWords(key: number): [number, number] {
  const lo = key >>> 0;
  return [lo, (key - lo) / 4294967296];
}
