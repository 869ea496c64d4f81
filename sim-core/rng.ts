/**
 * Counter-based randomness: every draw is a pure function of (seed, stream, step, row, draw), so a
 * row's numbers do not depend on evaluation order, chunking or thread count. There is no hidden
 * state to advance; kernels take a `key` for (seed, stream, step) and hash the row in.
 *
 * A key is a 53-bit integer (a plain JS number: 32 low bits and 21 high bits), built by two
 * independent hash chains over the full seed (up to 2^53), stream and step, so distinct
 * (seed, stream, step) triples practically never share a key (about 2^-53 per pair; a 32-bit key
 * would repeat among ~77k triples with even odds, i.e. whole random streams of two steps or two
 * seeds would coincide).
 *
 * The mixer is "lowbias32" from Chris Wellons, "Prospecting for Hash Functions" (2018): a bijection
 * on 32-bit integers with low avalanche bias. For a fixed key and draw, the map from row to output
 * is a composition of bijections, so distinct rows under one key never collide, and the double hash
 * of the row decorrelates neighbouring rows. Every step is a 32-bit integer operation, so the same
 * function can be written in WGSL with equal outputs.
 */
import { normalPairFromHashes32 } from './f32math.ts';

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
/** Second hash chain's start, and the 21 high bits a key keeps (53 bits in all). */
const MIX_B = 0x85ebca6b;
const HIGH_MASK = 0x1fffff;

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
 * The key for one (seed, stream, step). `seed` and `step` may be any non-negative integers up to
 * 2^53 - 1; `stream` comes from `streamOf`. Returns an integer in [0, 2^53).
 */
export function keyOf(seed: number, stream: number, step: number): number {
  const sLo = seed >>> 0;
  const sHi = Math.floor(seed / TWO_POW_32) >>> 0;
  const tLo = step >>> 0;
  const tHi = Math.floor(step / TWO_POW_32) >>> 0;
  let a = mix32(sLo ^ GOLDEN);
  a = mix32(a ^ sHi);
  a = mix32(a ^ stream);
  a = mix32(a ^ tLo);
  a = mix32(a ^ tHi);
  let b = mix32(sHi ^ MIX_B);
  b = mix32(b ^ tLo);
  b = mix32(b ^ sLo);
  b = mix32(b ^ tHi);
  b = mix32(b ^ stream);
  return (b & HIGH_MASK) * TWO_POW_32 + a;
}

/** Uniform 32-bit integer for (key, row, draw). */
export function hash(key: number, row: number, draw = 0): number {
  const lo = key >>> 0;
  const hi = (key - lo) / TWO_POW_32;
  return mix32(((mix32((row ^ lo) >>> 0) ^ hi) + Math.imul(draw + 1, GOLDEN)) >>> 0);
}

/** A key's 32 low bits and its high bits, for `rowHash`. */
export function splitKey(key: number): [number, number] {
  const lo = key >>> 0;
  return [lo, (key - lo) / TWO_POW_32];
}

/**
 * `hash(key, row, 0)` for a key already split into its 32 low bits `lo` and its high bits `hi`
 * (`splitKey`): hot kernels split the key once per chunk, not per row.
 */
export function rowHash(lo: number, hi: number, row: number): number {
  // -1640531527 = Math.imul(0 + 1, GOLDEN), the draw term of draw 0.
  return mix32(((mix32((row ^ lo) >>> 0) ^ hi) - 1640531527) >>> 0);
}

/**
 * The part of hash(key, row, draw) that does not depend on the draw: rowDraw(rowSeed(key, row), d)
 * equals hash(key, row, d), at half the cost for a kernel that makes many draws per row.
 */
export function rowSeed(key: number, row: number): number {
  const lo = key >>> 0;
  const hi = (key - lo) / TWO_POW_32;
  return mix32((row ^ lo) >>> 0) ^ hi;
}
/** hash(key, row, draw) from rowSeed(key, row). */
export function rowDraw(seed: number, draw: number): number {
  return mix32((seed + Math.imul(draw + 1, GOLDEN)) >>> 0);
}

/** Uniform float in [0, 1) with 32 bits of resolution for (key, row, draw). */
export function uniform(key: number, row: number, draw = 0): number {
  const lo = key >>> 0;
  const hi = (key - lo) / TWO_POW_32;
  return mix32(((mix32((row ^ lo) >>> 0) ^ hi) + Math.imul(draw + 1, GOLDEN)) >>> 0) / TWO_POW_32;
}
/** Uniform integer in [0, n) for (key, row, draw); n <= 2^32. */
export function below(key: number, row: number, n: number, draw = 0): number {
  return Math.floor(uniform(key, row, draw) * n);
}

/**
 * Two standard normals in float32 for (key, row, pair), from draws 2 pair and 2 pair + 1 (f32math.ts
 * `normalPairFromHashes32`), into out[at] and out[at + 1]: for kernels whose output must not depend
 * on the backend (the GPU computes the same bits).
 */
export function normalPair32(key: number, row: number, pair: number, out: Float32Array, at: number): void {
  normalPairFromHashes32(hash(key, row, 2 * pair), hash(key, row, 2 * pair + 1), out, at);
}

/** Standard normal for (key, row, draw) by Box-Muller over two independent draws. */
export function normal(key: number, row: number, draw = 0): number {
  return rowNormal(rowSeed(key, row), draw);
}

/** normal(key, row, draw) from rowSeed(key, row), for kernels that draw many per row. */
export function rowNormal(seed: number, draw: number): number {
  const u1 = 1 - rowDraw(seed, 2 * draw) / TWO_POW_32;
  const u2 = rowDraw(seed, 2 * draw + 1) / TWO_POW_32;
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}
