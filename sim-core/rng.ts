/**
 * Counter-based randomness: every draw is a pure function of (seed, stream, step, row, draw), so a
 * row's numbers do not depend on evaluation order, chunking or thread count. There is no hidden
 * state to advance; kernels take a 32-bit `key` for (seed, stream, step) and hash the row in.
 *
 * The mixer is "lowbias32" from Chris Wellons, "Prospecting for Hash Functions" (2018): a bijection
 * on 32-bit integers with low avalanche bias. Keys are chained through it, so distinct rows under
 * one key never collide, and the double hash of the row decorrelates neighbouring rows.
 */

/** lowbias32: bijective 32-bit integer mixer (Wellons 2018). Returns an unsigned 32-bit integer. */
export function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

const GOLDEN = 0x9e3779b9;
const TWO_POW_32 = 4294967296;

/** 32-bit FNV-1a of a name: turns a phase or model name into a stream id. */
export function streamOf(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * The key for one (seed, stream, step). `seed` may be any non-negative integer up to 2^53 - 1;
 * `stream` comes from `streamOf`; `step` is the simulation step (or any other outer counter).
 */
export function keyOf(seed: number, stream: number, step: number): number {
  const lo = seed >>> 0;
  const hi = Math.floor(seed / TWO_POW_32) >>> 0;
  let k = mix32(lo ^ GOLDEN);
  k = mix32((k ^ hi) >>> 0);
  k = mix32((k ^ stream) >>> 0);
  k = mix32((k + Math.imul(step, GOLDEN)) >>> 0);
  return k;
}

/** Uniform 32-bit integer for (key, row, draw). */
export function hash(key: number, row: number, draw = 0): number {
  return mix32((mix32((row ^ key) >>> 0) + Math.imul(draw + 1, GOLDEN)) >>> 0);
}

/** Uniform float in [0, 1) with 32 bits of resolution for (key, row, draw). */
export function uniform(key: number, row: number, draw = 0): number {
  return mix32((mix32((row ^ key) >>> 0) + Math.imul(draw + 1, GOLDEN)) >>> 0) / TWO_POW_32;
}

/** Uniform integer in [0, n) for (key, row, draw); n <= 2^32. */
export function below(key: number, row: number, n: number, draw = 0): number {
  return Math.floor(uniform(key, row, draw) * n);
}

/** Standard normal for (key, row, draw) by Box-Muller over two independent draws. */
export function normal(key: number, row: number, draw = 0): number {
  const u1 = 1 - uniform(key, row, 2 * draw);
  const u2 = uniform(key, row, 2 * draw + 1);
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}
