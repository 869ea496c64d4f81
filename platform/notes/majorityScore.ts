/**
 * Majority-vote scoring, the comparison the bridging algorithm is measured against: a note is
 * shown when it has at least minRatings ratings and its mean rating (Yes 1, Somewhat 0.5, No 0:
 * the helpful share, counting Somewhat as half) reaches `threshold`; it is Not Helpful when the
 * mean is at most 1 - threshold; else it Needs More Ratings. Birdwatch's pilot ranked notes this
 * way ("note ranking done via simply computing the raw ratio of helpful ratings", ranking-notes
 * guide, What's New, January 28, 2021), but no threshold of it is published: the default 2/3 is a
 * free parameter (a two-to-one majority), not a published figure.
 */
import { MIN_RATINGS, STATUS, checkRatings, type RatingColumns } from './noteStatus.ts';

/** The default share of helpful ratings for a shown note (free parameter: see the file's comment). */
export const MAJORITY_THRESHOLD = 2 / 3;

export interface MajorityResult {
  /** Mean rating of each note (NaN: no ratings). */
  share: Float64Array;
  ratings: Int32Array;
  status: Uint8Array;
}

export function majorityScore(r: RatingColumns, notes: number, threshold = MAJORITY_THRESHOLD, minRatings = MIN_RATINGS): MajorityResult {
  checkRatings(r, 0x7fffffff, notes);
  if (!(threshold > 0.5 && threshold <= 1)) throw new Error(`majority threshold ${threshold} must be in (0.5, 1]`);
  const sum = new Float64Array(notes);
  const ratings = new Int32Array(notes);
  for (let k = 0; k < r.count; k++) {
    sum[r.note[k]] += r.value[k];
    ratings[r.note[k]]++;
  }
  const share = new Float64Array(notes);
  const status = new Uint8Array(notes);
  for (let n = 0; n < notes; n++) {
    share[n] = ratings[n] > 0 ? sum[n] / ratings[n] : NaN;
    if (ratings[n] < minRatings) continue;
    if (share[n] >= threshold) status[n] = STATUS.helpful;
    else if (share[n] <= 1 - threshold) status[n] = STATUS.notHelpful;
  }
  return { share, ratings, status };
}
