/** Rating matrices for the notes tests. */
import type { RatingColumns } from '../../../platform/notes/noteStatus.ts';

/** Ratings from a list of [rater, note, value]. */
export function columns(list: Array<[number, number, number]>): RatingColumns {
  return { rater: Int32Array.from(list, (x) => x[0]), note: Int32Array.from(list, (x) => x[1]), value: Float32Array.from(list, (x) => x[2]), count: list.length };
}

/**
 * Two sides, A of 16 raters (0-15) and B of 8 (16-23), rate every note: notes 0-3 are liked by A
 * only and 4-7 by B only (they set the factor axis); note 8 is rated helpful by side A only (two
 * thirds of its ratings: a majority vote shows it), note 9 by both sides, note 10 by neither.
 */
export function twoSides(): RatingColumns {
  const list: Array<[number, number, number]> = [];
  for (let u = 0; u < 24; u++) {
    const a = u < 16;
    for (let n = 0; n < 8; n++) list.push([u, n, (n < 4) === a ? 1 : 0]);
    list.push([u, 8, a ? 1 : 0], [u, 9, 1], [u, 10, 0]);
  }
  return columns(list);
}
