/**
 * Dot products of a vector with the rows of a matrix (topic prototypes, post topics), in doubles
 * and in float32 as the GPU rounds them, and the nearest prototype of a vector: shared by the act
 * and postContent kernels, post creation and the users' nearest clusters (recsys/kernels.ts).
 */

/**
 * v[off .. off + dim) . each row of m (rows x dim, row-major) in doubles into out[0 .. rows):
 * each sum taken in dimension order (float32 inputs give exact products), four rows at a time so
 * that their chains of dependent additions overlap (one at a time waited on every addition).
 */
export function dots64(m: ArrayLike<number>, rows: number, dim: number, v: ArrayLike<number>, off: number, out: Float64Array): void {
  let t = 0;
  for (; t + 4 <= rows; t += 4) {
    const p0 = t * dim;
    const p1 = p0 + dim;
    const p2 = p1 + dim;
    const p3 = p2 + dim;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let d = 0; d < dim; d++) {
      const x = v[off + d];
      s0 += x * m[p0 + d];
      s1 += x * m[p1 + d];
      s2 += x * m[p2 + d];
      s3 += x * m[p3 + d];
    }
    out[t] = s0;
    out[t + 1] = s1;
    out[t + 2] = s2;
    out[t + 3] = s3;
  }
  for (; t < rows; t++) {
    let s = 0;
    for (let d = 0; d < dim; d++) s += v[off + d] * m[t * dim + d];
    out[t] = s;
  }
}

/** The largest Euclidean norm of the rows of m (rows x dim, row-major): nearestPrototype's `maxNorm`. */
export function maxRowNorm(m: Float32Array, rows: number, dim: number): number {
  let most = 0;
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let d = 0; d < dim; d++) s += m[r * dim + d] * m[r * dim + d];
    if (s > most) most = s;
  }
  return Math.sqrt(most);
}

let dots = new Float64Array(64);

/**
 * Index of the prototype (topics x dim, row-major) with the largest dot product with
 * v[off .. off + dim); ties keep the lower index. The dot products are summed in float32, in
 * order, as the GPU's postContent computes them (platform/kernels.wgsl.ts).
 *
 * Only the prototypes that can win get that float32 sum. All dot products are first taken in
 * doubles, without a rounding per operation (the products of float32 values are exact, each sum
 * within dim x 2^-53 relative). A float32 dot product of length n is within gamma_n |v| |m| of
 * the exact one, gamma_n = n u / (1 - n u), u = 2^-24 (Higham, Accuracy and Stability of
 * Numerical Algorithms, 2002, section 3.1; Cauchy-Schwarz for the sum of |v_d m_d|), plus
 * n 2^-126 where products underflow. So a prototype whose double is below the best double by more
 * than twice that (norms from `maxNorm`, the largest prototype norm) has a float32 dot product
 * below the best one's, and cannot win. Usually one or two remain: the same index as
 * nearestPrototypeExact at a third of its time.
 */
export function nearestPrototype(prototypes: Float32Array, topics: number, dim: number, v: ArrayLike<number>, off: number, maxNorm = maxRowNorm(prototypes, topics, dim)): number {
  if (dots.length < topics) dots = new Float64Array(topics);
  const g = dots;
  dots64(prototypes, topics, dim, v, off, g);
  let vv = 0;
  for (let d = 0; d < dim; d++) vv += v[off + d] * v[off + d];
  let most = -Infinity;
  for (let t = 0; t < topics; t++) most = Math.max(most, g[t]);
  const u = 2 ** -24;
  const gamma = (dim * u) / (1 - dim * u) + 1e-12;
  const bound = (2 * gamma * Math.sqrt(vv) * maxNorm + 2 * dim * 2 ** -126) * (1 + 1e-6);
  // Not finite (a NaN or infinite component): every prototype in float32, as the GPU does.
  if (!(most > -Infinity && most < Infinity && bound < Infinity)) return nearestPrototypeExact(prototypes, topics, dim, v, off);
  let best = 0;
  let bestDot = -Infinity;
  for (let t = 0; t < topics; t++) {
    if (g[t] < most - bound) continue;
    const dot = dotf32(v, off, prototypes, t * dim, dim);
    if (dot > bestDot) {
      bestDot = dot;
      best = t;
    }
  }
  return best;
}

/** nearestPrototype with every prototype's dot product summed in float32. */
export function nearestPrototypeExact(prototypes: Float32Array, topics: number, dim: number, v: ArrayLike<number>, off: number): number {
  let best = 0;
  let bestDot = -Infinity;
  // Four topics at a time (dots4f32), then the four compared in topic order.
  let t = 0;
  for (; t + 4 <= topics; t += 4) {
    const p = t * dim;
    dots4f32(v, off, prototypes, p, p + dim, p + 2 * dim, p + 3 * dim, dim, four, 0);
    for (let j = 0; j < 4; j++) {
      if (four[j] > bestDot) {
        bestDot = four[j];
        best = t + j;
      }
    }
  }
  for (; t < topics; t++) {
    const dot = dotf32(v, off, prototypes, t * dim, dim);
    if (dot > bestDot) {
      bestDot = dot;
      best = t;
    }
  }
  return best;
}

const four = new Float32Array(4);

/**
 * x[xo .. xo + dim) . m[mo .. mo + dim) in float32: summed in dimension order, every product and
 * sum rounded to float32, as the GPU's software f32 computes it.
 */
export function dotf32(x: ArrayLike<number>, xo: number, m: ArrayLike<number>, mo: number, dim: number): number {
  const f = Math.fround;
  let dot = 0;
  for (let d = 0; d < dim; d++) dot = f(dot + f(x[xo + d] * m[mo + d]));
  return dot;
}

/**
 * dotf32 of x[xo ..) with four rows of m (from o0, o1, o2, o3) into out[at .. at + 4): each sum is
 * still taken in dimension order, but the four chains of dependent roundings (and the rows' reads)
 * overlap, where one at a time waits on every addition.
 */
export function dots4f32(x: ArrayLike<number>, xo: number, m: ArrayLike<number>, o0: number, o1: number, o2: number, o3: number, dim: number, out: Float32Array, at: number): void {
  const f = Math.fround;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let d = 0; d < dim; d++) {
    const xd = x[xo + d];
    s0 = f(s0 + f(xd * m[o0 + d]));
    s1 = f(s1 + f(xd * m[o1 + d]));
    s2 = f(s2 + f(xd * m[o2 + d]));
    s3 = f(s3 + f(xd * m[o3 + d]));
  }
  out[at] = s0;
  out[at + 1] = s1;
  out[at + 2] = s2;
  out[at + 3] = s3;
}
