/**
 * The feed kernel's prosocial terms (recsys/kernels.ts feedLoop), two of the interventions
 * Larooij and Tornberg test on a simulated platform ("Can we fix social media? Testing prosocial
 * interventions using generative social simulation", arXiv 2508.03385, 2025):
 * - boosting out-partisan content (platform.outPartisan): the feed score of a post whose stance is
 *   on the other side of 0 from the reader's opinion, times a multiplier;
 * - downranking dominant voices (platform.dominant): the feed score of a post by one of the
 *   most-followed accounts (a top share by follower count, recomputed every step), times a factor.
 * Both scale each user's score of a candidate after the ranker's (or a plugin's) score: they
 * change which candidates fill a feed, not which enter the candidate lists. A multiplier of 1
 * turns a term off, and the kernel then reads nothing for it.
 */

/**
 * A feed score scaled by m: score x m, a negative score (x-interest and bridging give one to a post
 * whose topic points away from the user's interests) divided by m instead, so that m above 1 always
 * raises a score and m below 1 always lowers it; rounded to float32 as feed scores are. With m = 0
 * a positive score becomes 0 and a negative one -Infinity (last).
 */
export function scaleScore(score: number, m: number): number {
  return Math.fround(score >= 0 ? score * m : score / m);
}

/** Whether a post of this stance is out-partisan for a reader of this opinion: one below 0, the other not. */
export function outPartisan(stance: number, opinion: number): boolean {
  return stance < 0 !== opinion < 0;
}

/**
 * Marks in `mask` (1) the ceil(share x n) accounts with the most followers, ties going to the lower
 * id, and clears the rest; returns how many it marked. The follower count T of the last one taken
 * comes from a histogram of the counts; every account above T and the first of those at T (by id)
 * are taken: O(n + the largest count), cheap enough for every step.
 */
export function markDominant(followers: ArrayLike<number>, share: number, mask: Uint8Array): number {
  const n = followers.length;
  const k = Math.min(n, Math.ceil(share * n));
  let most = 0;
  for (let v = 0; v < n; v++) if (followers[v] > most) most = followers[v];
  const hist = new Int32Array(most + 1);
  for (let v = 0; v < n; v++) hist[followers[v] > 0 ? followers[v] : 0]++;
  // T: the largest count at or above which at least k accounts are.
  let T = most;
  let above = 0;
  while (T > 0 && above + hist[T] < k) above += hist[T--];
  let atT = k - above;
  for (let v = 0; v < n; v++) {
    const f = followers[v] > 0 ? followers[v] : 0;
    mask[v] = k > 0 && (f > T || (f === T && atT-- > 0)) ? 1 : 0;
  }
  return k;
}
