/**
 * A note's status, as Community Notes names them ("Note ranking algorithm", communitynotes.x.com
 * guide, under-the-hood/ranking-notes): every note starts as Needs More Ratings; scoring may move it
 * to Currently Rated Helpful (shown on the post) or Currently Rated Not Helpful, and back.
 */

/** Status codes, in the order of NOTE_STATUS (the Arrow dictionary of notes.arrow and note-status.arrow). */
export const STATUS = { needsMoreRatings: 0, helpful: 1, notHelpful: 2 } as const;
export const NOTE_STATUS = ['needs_more_ratings', 'helpful', 'not_helpful'] as const;

/**
 * Ratings a note needs before it can leave Needs More Ratings: "All Community Notes start with the
 * Needs More Ratings status until they receive at least 5 total ratings" (ranking-notes guide).
 */
export const MIN_RATINGS = 5;

/**
 * The values a rating takes: "Yes maps to 1.0, Somewhat maps to 0.5, No maps to 0.0" (ranking-notes
 * guide, "Helpful Rating Mapping").
 */
export const RATING = { no: 0, somewhat: 0.5, yes: 1 } as const;

/** Ratings as columns: rating k is rater[k]'s value[k] on note[k]; only the first `count` are read. */
export interface RatingColumns {
  rater: Int32Array;
  note: Int32Array;
  value: Float32Array;
  count: number;
}

/** Throws when a rating names a rater or note outside [0, raters) or [0, notes), or has a value outside [0, 1]. */
export function checkRatings(r: RatingColumns, raters: number, notes: number): void {
  if (r.count > r.rater.length || r.count > r.note.length || r.count > r.value.length) {
    throw new Error(`rating columns hold fewer than count ${r.count} rows`);
  }
  for (let k = 0; k < r.count; k++) {
    const u = r.rater[k];
    const n = r.note[k];
    const v = r.value[k];
    if (u < 0 || u >= raters) throw new Error(`rating ${k}: rater ${u} is outside [0, ${raters})`);
    if (n < 0 || n >= notes) throw new Error(`rating ${k}: note ${n} is outside [0, ${notes})`);
    if (!(v >= 0 && v <= 1)) throw new Error(`rating ${k}: value ${v} is outside [0, 1]`);
  }
}
