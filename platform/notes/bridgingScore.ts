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
 * and likewise each rater's with the notes fixed, and mu's in closed form; after each sweep the
 * parameters also move to the minimum along the loss's flat directions (factorFit.ts
 * alongSymmetries), which alternating solves alone crawl along, and jump further along their own
 * path where that lowers the loss (factorFit.ts Extrapolation). Every step lowers the loss. A
 * sweep is O(ratings): the ratings are put once into note-major and rater-major order (a stable
 * counting sort), so each solve sums its own ratings in input order. The rater factors
 * start from the leading singular vector of the ratings less their note means (power iteration
 * from draws of the counter-based RNG, sim-core/rng.ts, under `key`): the loss is not convex, and
 * this start finds the same minimum whatever the key. Same input, same bits: float64 throughout
 * and a fixed order.
 *
 * Left out of the published algorithm: the second fit after filtering raters by their helpfulness
 * scores, the pseudo-rater confidence bounds, tag filtering, the loss-threshold refit and the
 * safeguards (net-helpful minimums, baseline intercepts). Kept: the rating pre-filter, the status
 * thresholds, the factor bound and the Helpful inertia.
 */
import { keyOf, streamOf } from '../../sim-core/rng.ts';
import { Extrapolation, alongSymmetries, csr, solveSide, spectralStart } from './factorFit.ts';
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
  /** Converged when no note intercept or factor moved by more than this in a sweep (default 1e-4: a hundredth of the Helpful inertia, the finest step the status rule uses). */
  tolerance?: number;
  /** Random key of the spectral start's first vector (default: seed 0's). */
  key?: number;
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
  /** The regularised loss at the parameters returned. */
  loss: number;
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
  const tolerance = o.tolerance ?? 1e-4;
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
  spectralStart(byNote, byUser, key, raterFactor);
  let mu = 0;
  let loss = NaN;
  let iterations = 0;
  let converged = kept === 0;
  const jump = new Extrapolation(notes, raters);
  const params = [noteIntercept, noteFactor, raterIntercept, raterFactor];
  while (!converged && iterations < maxIterations) {
    iterations++;
    const n = solveSide(byNote, mu, li, lf, noteIntercept, noteFactor, raterIntercept, raterFactor);
    const u = solveSide(byUser, mu, li, lf, raterIntercept, raterFactor, noteIntercept, noteFactor);
    // mu's minimiser with the rest fixed: the residuals' sum is taken at the old mu.
    mu = (u.sumE + kept * mu) / (kept + li);
    mu = alongSymmetries(mu, li, lf, n.moments, u.moments, byNote.start, noteIntercept, noteFactor, byUser.start, raterIntercept, raterFactor);
    ({ mu, loss } = jump.apply(byNote, mu, li, lf, params));
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
