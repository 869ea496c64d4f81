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
`;

/** A key of rng.ts (an integer below 2^53) as the [lo, hi] u32 words the WGSL functions take. */
export function keyWords(key: number): [number, number] {
  const lo = key >>> 0;
  return [lo, (key - lo) / 4294967296];
}
