/**
 * The numerical parts of the bridging fit (bridgingScore.ts): ratings in note-major and rater-major
 * order, the exact block solves of alternating least squares, the exact moves along the loss's
 * flat directions, and the spectral start. Each is O(ratings) or O(notes + raters) and reads and
 * writes in a fixed order, so the fit is the same bits on every run.
 */
import { normal } from '../../sim-core/rng.ts';

/**
 * The spectral start's power iteration stops when an iteration turns the vector by less than this
 * (1 - |cos| of the angle), or after SPECTRAL_ITERATIONS (each two passes over the ratings). Why a
 * spectral start: the loss is not convex, and on sparse ratings alternating solves from random
 * rater factors end in different minima for different seeds (different notes shown); from the
 * leading singular vector of the ratings less their note means (the one-factor structure the model
 * fits) they reach the same, lower, minimum whatever the seed, in far fewer sweeps.
 */
const SPECTRAL_TOLERANCE = 1e-4;
const SPECTRAL_ITERATIONS = 50;

/** Ratings in one entity's order: entity e's are [start[e], start[e + 1]) of other (the other side's index) and value. */
export interface Csr {
  start: Int32Array;
  other: Int32Array;
  value: Float64Array;
}

/** Stable counting sort of the kept ratings by `by` (note or rater). */
export function csr(by: Int32Array, other: Int32Array, value: Float32Array, keep: Uint8Array, count: number, size: number, kept: number): Csr {
  const start = new Int32Array(size + 1);
  for (let k = 0; k < count; k++) if (keep[k]) start[by[k] + 1]++;
  for (let e = 0; e < size; e++) start[e + 1] += start[e];
  const at = start.slice(0, size);
  const o = new Int32Array(kept);
  const v = new Float64Array(kept);
  for (let k = 0; k < count; k++) {
    if (!keep[k]) continue;
    const p = at[by[k]]++;
    o[p] = other[k];
    v[p] = value[k];
  }
  return { start, other: o, value: v };
}

/**
 * Solves every entity's (intercept, factor) given the other side's, in place. Returns the largest
 * change, the sums of squared intercepts and factors, the sum and the sum of squares of the
 * residuals after the solve (for the loss and mu), and the moments of the fitted entities (for
 * alongSymmetries).
 */
export function solveSide(m: Csr, mu: number, li: number, lf: number, icpt: Float64Array, fac: Float64Array, oIcpt: Float64Array, oFac: Float64Array) {
  let delta = 0;
  let sumI2 = 0;
  let sumF2 = 0;
  let sumE = 0;
  let sumE2 = 0;
  const mo: Moments = { c: 0, si: 0, sf: 0, sff: 0, sif: 0 };
  const n = icpt.length;
  for (let e = 0; e < n; e++) {
    const lo = m.start[e];
    const hi = m.start[e + 1];
    let sx = 0;
    let sxx = 0;
    let sy = 0;
    let syx = 0;
    let syy = 0;
    for (let p = lo; p < hi; p++) {
      const o = m.other[p];
      const x = oFac[o];
      const y = m.value[p] - mu - oIcpt[o];
      sx += x;
      sxx += x * x;
      sy += y;
      syx += y * x;
      syy += y * y;
    }
    const c = hi - lo;
    // The normal equations of min sum (y - a - b x)^2 + li a^2 + lf b^2.
    const a11 = c + li;
    const a22 = sxx + lf;
    const det = a11 * a22 - sx * sx;
    const a = (sy * a22 - sx * syx) / det;
    const b = (a11 * syx - sx * sy) / det;
    delta = Math.max(delta, Math.abs(a - icpt[e]), Math.abs(b - fac[e]));
    icpt[e] = a;
    fac[e] = b;
    sumI2 += a * a;
    sumF2 += b * b;
    sumE += sy - a * c - b * sx;
    sumE2 += syy - 2 * a * sy - 2 * b * syx + a * a * c + 2 * a * b * sx + b * b * sxx;
    if (c > 0) {
      mo.c++;
      mo.si += a;
      mo.sf += b;
      mo.sff += b * b;
      mo.sif += a * b;
    }
  }
  return { delta, sumI2, sumF2, sumE, sumE2, moments: mo };
}

/** Moments of one side's fitted entities (those with ratings in the fit): count, and sums of i, f, f^2 and i f. */
export interface Moments {
  c: number;
  si: number;
  sf: number;
  sff: number;
  sif: number;
}

/**
 * The loss has directions along which the data term does not change, only the regularisation:
 * mu + s with every fitted note's intercept - s (or every rater's); every rater's factor + t with
 * every note's intercept - t f_n (or the sides swapped); one side's factors x c with the other's / c.
 * Alternating solves crawl along such flat valleys (hundreds of sweeps, mu far from its optimum),
 * so after each sweep the parameters move to the exact minimum along each direction in turn (every
 * move lowers the loss or keeps it). The moves are found from the moments and applied in one pass
 * per side: notes i - s - tu f, (f + tn) / c; raters i - t - tn (f + tu), (f + tu) c. Returns mu.
 */
export function alongSymmetries(mu: number, li: number, lf: number, n: Moments, u: Moments, nStart: Int32Array, nI: Float64Array, nF: Float64Array, uStart: Int32Array, uI: Float64Array, uF: Float64Array): number {
  if (n.c === 0 || u.c === 0) return mu;
  // Intercepts: min over (s, t) of (mu + s + t)^2 + sum_n (i_n - s)^2 + sum_u (i_u - t)^2.
  const a = 1 + n.c;
  const b = 1 + u.c;
  const det = a * b - 1;
  const s = ((n.si - mu) * b - (u.si - mu)) / det;
  const t = (a * (u.si - mu) - (n.si - mu)) / det;
  mu += s + t;
  let nsi = n.si - s * n.c;
  let nsif = n.sif - s * n.sf;
  let usi = u.si - t * u.c;
  let usif = u.sif - t * u.sf;
  // Raters' factors + tu, notes' intercepts - tu f_n: min lf sum (f_u + tu)^2 + li sum (i_n - tu f_n)^2.
  const tu = (li * nsif - lf * u.sf) / (lf * u.c + li * n.sff);
  nsi -= tu * n.sf;
  nsif -= tu * n.sff;
  const usff = u.sff + 2 * tu * u.sf + tu * tu * u.c;
  usif += tu * usi;
  // The same with the sides swapped.
  const tn = (li * usif - lf * n.sf) / (lf * n.c + li * usff);
  const nsff = n.sff + 2 * tn * n.sf + tn * tn * n.c;
  // Scale: min lf (c^2 sum f_u^2 + sum f_n^2 / c^2) at c^4 = sum f_n^2 / sum f_u^2.
  const c = nsff > 0 && usff > 0 ? Math.sqrt(Math.sqrt(nsff / usff)) : 1;
  for (let e = 0; e < nI.length; e++) {
    if (nStart[e + 1] === nStart[e]) continue;
    nI[e] -= s + tu * nF[e];
    nF[e] = (nF[e] + tn) / c;
  }
  for (let e = 0; e < uI.length; e++) {
    if (uStart[e + 1] === uStart[e]) continue;
    const f = uF[e] + tu;
    uI[e] -= t + tn * f;
    uF[e] = f * c;
  }
  return mu;
}

/**
 * Sets `x` (raters) to the leading right singular vector of E, the fitted ratings less each note's
 * mean rating, by power iteration from seeded normal draws, scaled to root-mean-square 1 over the
 * fitted raters; raters outside the fit get 0.
 */
export function spectralStart(byNote: Csr, byUser: Csr, key: number, x: Float64Array): void {
  const notes = byNote.start.length - 1;
  const mean = new Float64Array(notes);
  for (let n = 0; n < notes; n++) {
    const lo = byNote.start[n];
    const hi = byNote.start[n + 1];
    let s = 0;
    for (let p = lo; p < hi; p++) s += byNote.value[p];
    mean[n] = hi > lo ? s / (hi - lo) : 0;
  }
  const y = new Float64Array(notes);
  const fitted = (u: number) => byUser.start[u + 1] > byUser.start[u];
  let m = 0;
  let s0 = 0;
  for (let u = 0; u < x.length; u++) {
    x[u] = fitted(u) ? normal(key, u) : 0;
    if (fitted(u)) m++;
    s0 += x[u] * x[u];
  }
  if (m === 0) return;
  // Every x the loop starts from has squared norm m (root-mean-square 1).
  for (let u = 0; u < x.length; u++) x[u] *= Math.sqrt(m / s0);
  for (let it = 0; it < SPECTRAL_ITERATIONS; it++) {
    for (let n = 0; n < notes; n++) {
      let s = 0;
      for (let p = byNote.start[n]; p < byNote.start[n + 1]; p++) s += (byNote.value[p] - mean[n]) * x[byNote.other[p]];
      y[n] = s;
    }
    let ss = 0;
    let dot = 0;
    for (let u = 0; u < x.length; u++) {
      let s = 0;
      for (let p = byUser.start[u]; p < byUser.start[u + 1]; p++) s += (byUser.value[p] - mean[byUser.other[p]]) * y[byUser.other[p]];
      dot += s * x[u];
      x[u] = s;
      ss += s * s;
    }
    if (!(ss > 0)) {
      // No structure beyond the note means: start from the draws (any start is then as good).
      for (let u = 0; u < x.length; u++) x[u] = fitted(u) ? normal(key, u) * Math.sqrt(m / s0) : 0;
      return;
    }
    const scale = Math.sqrt(m / ss);
    for (let u = 0; u < x.length; u++) x[u] *= scale;
    if (1 - Math.abs(dot) / Math.sqrt(ss * m) < SPECTRAL_TOLERANCE) return;
  }
}

/** The regularised loss at the given parameters (one pass over the ratings, in note order). */
export function lossAt(byNote: Csr, mu: number, li: number, lf: number, nI: Float64Array, nF: Float64Array, uI: Float64Array, uF: Float64Array): number {
  let data = 0;
  let i2 = mu * mu;
  let f2 = 0;
  for (let n = 0; n < nI.length; n++) {
    const a = mu + nI[n];
    const b = nF[n];
    for (let p = byNote.start[n]; p < byNote.start[n + 1]; p++) {
      const o = byNote.other[p];
      const e = byNote.value[p] - a - uI[o] - uF[o] * b;
      data += e * e;
    }
    i2 += nI[n] * nI[n];
    f2 += b * b;
  }
  for (let u = 0; u < uI.length; u++) {
    i2 += uI[u] * uI[u];
    f2 += uF[u] * uF[u];
  }
  return data + li * i2 + lf * f2;
}

/** Largest extrapolation step, in multiples of the last sweep's change. */
const MAX_STEP = 32;

/**
 * Extrapolation between sweeps: where the sweeps keep moving the same way (a long, shallow valley
 * of the loss, as when the factors are weakly determined and lambda_f is small), the parameters
 * jump `step` times the last sweep's change further, kept only if that lowers the loss. The step
 * doubles after each kept jump (up to MAX_STEP) and falls back to 1 after a refused one. Costs two
 * loss evaluations a sweep.
 */
export class Extrapolation {
  private readonly prev: Float64Array[];
  private readonly trial: Float64Array[];
  private prevMu = NaN;
  private step = 1;
  constructor(notes: number, raters: number) {
    this.prev = [new Float64Array(notes), new Float64Array(notes), new Float64Array(raters), new Float64Array(raters)];
    this.trial = this.prev.map((a) => new Float64Array(a.length));
  }

  /** Takes the parameters after a sweep (in place: they may jump); returns mu and the loss where they end. */
  apply(byNote: Csr, mu: number, li: number, lf: number, params: Float64Array[]): { mu: number; loss: number } {
    const [nI, nF, uI, uF] = params;
    let loss = lossAt(byNote, mu, li, lf, nI, nF, uI, uF);
    if (!Number.isNaN(this.prevMu)) {
      const s = this.step;
      for (let k = 0; k < 4; k++) {
        const to = this.trial[k];
        const at = params[k];
        const from = this.prev[k];
        for (let e = 0; e < at.length; e++) to[e] = at[e] + s * (at[e] - from[e]);
      }
      const trialMu = mu + s * (mu - this.prevMu);
      const trialLoss = lossAt(byNote, trialMu, li, lf, this.trial[0], this.trial[1], this.trial[2], this.trial[3]);
      if (trialLoss < loss) {
        for (let k = 0; k < 4; k++) params[k].set(this.trial[k]);
        mu = trialMu;
        loss = trialLoss;
        this.step = Math.min(2 * s, MAX_STEP);
      } else this.step = 1;
    }
    for (let k = 0; k < 4; k++) this.prev[k].set(params[k]);
    this.prevMu = mu;
    return { mu, loss };
  }
}
