/**
 * Bridging scores for notes: the matrix factorisation Community Notes publishes ("Note ranking
 * algorithm", communitynotes.x.com guide, under-the-hood/ranking-notes; Wojcik et al., "Birdwatch:
 * Crowd Wisdom and Bridging Algorithms can Inform Understanding and Reduce the Spread of
 * Misinformation", arXiv:2210.15723, 2022). Each rating is predicted as
 *
 *   r_un ~ mu + i_u + i_n + f_u f_n          (one-dimensional factors, as the guide says X uses)
 *
 * and the fit minimises  sum (r_un - prediction)^2 + lambda_i (i_u^2 + i_n^2 + mu^2)
 * + lambda_f (f_u^2 + f_n^2), each parameter regularised once. The intercepts are regularised five
 * times harder than the factors, so agreement within one side of the factor axis is explained by
 * the factors and only approval across sides raises a note's intercept i_n, its helpfulness score.
 *
 * The fit here is alternating least squares, written from the loss above: with the raters fixed,
 * each note's (i_n, f_n) is the exact minimiser of a two-by-two regularised least-squares problem,
 * and likewise each rater's with the notes fixed, and mu's in closed form; every step lowers the
 * loss. A sweep is O(ratings): the ratings are put once into note-major and rater-major order (a
 * stable counting sort), so each solve sums its own ratings in input order. Same input, same
 * bits: float64 throughout, a fixed order, and rater factors initialised from the counter-based
 * RNG (sim-core/rng.ts) under `key`.
 *
 * Left out of the published algorithm: the second fit after filtering raters by their helpfulness
 * scores, the pseudo-rater confidence bounds, tag filtering, the loss-threshold refit and the
 * safeguards (net-helpful minimums, baseline intercepts). Kept: the rating pre-filter, the status
 * thresholds, the factor bound and the Helpful inertia.
 */
import { keyOf, normal, streamOf } from '../../sim-core/rng.ts';
import { MIN_RATINGS, STATUS, checkRatings, type RatingColumns } from './noteStatus.ts';

/** The published constants (ranking-notes guide), each with where it is stated. */
export const BRIDGING = {
  /** "lambda_i = 0.15, the regularization on the intercept terms" (guide, Matrix Factorization). */
  lambdaIntercept: 0.15,
  /** "5 times higher than lambda_f = 0.03, the regularization on the factors" (same sentence). */
  lambdaFactor: 0.03,
  /** "we set the thresholds to achieve a Helpful status at 0.40" (guide, Matrix Factorization). */
  helpfulThreshold: 0.4,
  /** "We also require that Helpful notes have abs(f_n) < 0.50" (same section). */
  factorBound: 0.5,
  /** Not Helpful below "-0.05 - 0.8 * abs(f_n)" (guide, Note Status and Matrix Factorization). */
  notHelpfulBase: -0.05,
  notHelpfulSlope: 0.8,
  /**
   * "the note intercept i_n drops below the applicable threshold by more than 0.01 before the note
   * loses Helpful status" (guide, CRH Inertia).
   */
  inertia: 0.01,
  /** "only raters with at least 10 ratings and notes with at least 5 ratings are included" (guide, Complete Algorithm Steps, 1). */
  minRaterRatings: 10,
} as const;

/** Standard deviation of the initial rater factors (a free choice: the fit's scale is set by the regularisation, not by this). */
const INIT_SCALE = 0.1;

export interface BridgingOptions {
  lambdaIntercept?: number;
  lambdaFactor?: number;
  helpfulThreshold?: number;
  factorBound?: number;
  notHelpfulBase?: number;
  notHelpfulSlope?: number;
  inertia?: number;
  /** Ratings a note needs for a status (and to enter the fit); default MIN_RATINGS. */
  minRatings?: number;
  /** Ratings a rater needs to enter the fit; default BRIDGING.minRaterRatings. */
  minRaterRatings?: number;
  /** Sweeps at most (default 200). */
  maxIterations?: number;
  /** Converged when no note intercept or factor moved by more than this in a sweep (default 1e-3: a tenth of the Helpful inertia, the finest step the status rule uses). */
  tolerance?: number;
  /** Random key of the initial rater factors (default: seed 0's). */
  key?: number;
  /**
   * Start from an earlier fit (a previous scoring round's result; notes and raters it lacks start
   * as usual) instead of from scratch: far fewer sweeps when few ratings changed. X retrains from
   * scratch ("re-trained from scratch every hour", guide); the two agree to within the tolerance
   * where the loss has one minimum.
   */
  init?: Pick<BridgingResult, 'mu' | 'noteIntercept' | 'noteFactor' | 'raterIntercept' | 'raterFactor'>;
  /** Each note's status before this scoring (for the Helpful inertia); default: none was Helpful. */
  previous?: Uint8Array;
}

export interface BridgingResult {
  mu: number;
  noteIntercept: Float64Array;
  noteFactor: Float64Array;
  raterIntercept: Float64Array;
  raterFactor: Float64Array;
  /** All ratings of each note (before the pre-filter). */
  ratings: Int32Array;
  /** STATUS code of each note. */
  status: Uint8Array;
  /** Ratings that entered the fit. */
  fitted: number;
  iterations: number;
  converged: boolean;
  /** The regularised loss at the last sweep. */
  loss: number;
}

/** Ratings in one entity's order: entity e's are [start[e], start[e + 1]) of other (the other side's index) and value. */
interface Csr {
  start: Int32Array;
  other: Int32Array;
  value: Float64Array;
}

/** Stable counting sort of the kept ratings by `by` (note or rater). */
function csr(by: Int32Array, other: Int32Array, value: Float32Array, keep: Uint8Array, count: number, size: number, kept: number): Csr {
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
 * change, the sums of squared intercepts and factors, and (for the loss and mu) the sum and the sum
 * of squares of the residuals after the solve.
 */
function solveSide(m: Csr, mu: number, li: number, lf: number, icpt: Float64Array, fac: Float64Array, oIcpt: Float64Array, oFac: Float64Array) {
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
interface Moments {
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
function alongSymmetries(mu: number, li: number, lf: number, n: Moments, u: Moments, nStart: Int32Array, nI: Float64Array, nF: Float64Array, uStart: Int32Array, uI: Float64Array, uF: Float64Array): number {
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
 * Fits the model to `r` (raters in [0, raters), notes in [0, notes), values in [0, 1]) and gives
 * each note its status. Notes with fewer than minRatings ratings stay Needs More Ratings (their
 * intercept and factor are 0: they are not fitted).
 */
export function bridgingScore(r: RatingColumns, raters: number, notes: number, o: BridgingOptions = {}): BridgingResult {
  checkRatings(r, raters, notes);
  const li = o.lambdaIntercept ?? BRIDGING.lambdaIntercept;
  const lf = o.lambdaFactor ?? BRIDGING.lambdaFactor;
  const minRatings = o.minRatings ?? MIN_RATINGS;
  const minRater = o.minRaterRatings ?? BRIDGING.minRaterRatings;
  const maxIterations = o.maxIterations ?? 200;
  const tolerance = o.tolerance ?? 1e-3;
  const key = o.key ?? keyOf(0, streamOf('notes.bridging'), 0);

  // The pre-filter (not repeated until nothing changes, as the guide says of X's).
  const count = r.count;
  const ratings = new Int32Array(notes);
  const byRater = new Int32Array(raters);
  for (let k = 0; k < count; k++) {
    ratings[r.note[k]]++;
    byRater[r.rater[k]]++;
  }
  const keep = new Uint8Array(count);
  let kept = 0;
  for (let k = 0; k < count; k++) {
    if (ratings[r.note[k]] >= minRatings && byRater[r.rater[k]] >= minRater) {
      keep[k] = 1;
      kept++;
    }
  }
  const byNote = csr(r.note, r.rater, r.value, keep, count, notes, kept);
  const byUser = csr(r.rater, r.note, r.value, keep, count, raters, kept);

  const noteIntercept = new Float64Array(notes);
  const noteFactor = new Float64Array(notes);
  const raterIntercept = new Float64Array(raters);
  const raterFactor = new Float64Array(raters);
  for (let u = 0; u < raters; u++) raterFactor[u] = INIT_SCALE * normal(key, u);
  let mu = 0;
  if (o.init) {
    const copy = (to: Float64Array, from: Float64Array) => to.set(from.subarray(0, Math.min(from.length, to.length)));
    mu = o.init.mu;
    copy(noteIntercept, o.init.noteIntercept);
    copy(noteFactor, o.init.noteFactor);
    copy(raterIntercept, o.init.raterIntercept);
    copy(raterFactor, o.init.raterFactor);
  }

  let loss = NaN;
  let iterations = 0;
  let converged = kept === 0;
  while (!converged && iterations < maxIterations) {
    iterations++;
    const n = solveSide(byNote, mu, li, lf, noteIntercept, noteFactor, raterIntercept, raterFactor);
    const u = solveSide(byUser, mu, li, lf, raterIntercept, raterFactor, noteIntercept, noteFactor);
    loss = u.sumE2 + li * (u.sumI2 + n.sumI2 + mu * mu) + lf * (u.sumF2 + n.sumF2);
    // mu's minimiser with the rest fixed: the residuals' sum is taken at the old mu.
    mu = (u.sumE + kept * mu) / (kept + li);
    mu = alongSymmetries(mu, li, lf, n.moments, u.moments, byNote.start, noteIntercept, noteFactor, byUser.start, raterIntercept, raterFactor);
    converged = n.delta <= tolerance;
  }

  const status = noteStatuses(noteIntercept, noteFactor, ratings, o);
  return { mu, noteIntercept, noteFactor, raterIntercept, raterFactor, ratings, status, fitted: kept, iterations, converged, loss };
}

/**
 * The published status rule on fitted intercepts and factors: Helpful when i_n reaches the
 * threshold (less the inertia for a note that was Helpful) and |f_n| is under the factor bound;
 * Not Helpful when i_n < notHelpfulBase - notHelpfulSlope |f_n|; else, and for every note with
 * fewer than minRatings ratings, Needs More Ratings.
 */
export function noteStatuses(intercept: Float64Array, factor: Float64Array, ratings: Int32Array, o: BridgingOptions = {}): Uint8Array {
  const minRatings = o.minRatings ?? MIN_RATINGS;
  const threshold = o.helpfulThreshold ?? BRIDGING.helpfulThreshold;
  const bound = o.factorBound ?? BRIDGING.factorBound;
  const base = o.notHelpfulBase ?? BRIDGING.notHelpfulBase;
  const slope = o.notHelpfulSlope ?? BRIDGING.notHelpfulSlope;
  const inertia = o.inertia ?? BRIDGING.inertia;
  const status = new Uint8Array(intercept.length);
  for (let n = 0; n < intercept.length; n++) {
    if (ratings[n] < minRatings) continue;
    const i = intercept[n];
    const f = Math.abs(factor[n]);
    const bar = o.previous?.[n] === STATUS.helpful ? threshold - inertia : threshold;
    if (i >= bar && f < bound) status[n] = STATUS.helpful;
    else if (i < base - slope * f) status[n] = STATUS.notHelpful;
  }
  return status;
}
