/**
 * reddit-hot: Reddit's hot score as OASIS uses it, the vote balance on a logarithmic scale plus
 * the creation time, the same for every user.
 */
import type { Recommender } from '../recommender.ts';

/**
 * sign(s) * log10(max(|s|, 1)) + (t_created - t0) / 45000, with s = likes - dislikes and t in
 * seconds. socsim's t0 is the start of the run (any fixed epoch gives the same order): newer posts
 * score higher, and a tenfold vote lead is worth 45000 s = 12.5 h.
 */
export function hotScore(likes: number, dislikes: number, createdSeconds: number): number {
  const s = likes - dislikes;
  return Math.sign(s) * Math.log10(Math.max(Math.abs(s), 1)) + createdSeconds / 45000;
}

export const redditHot: Recommender = {
  name: 'reddit-hot',
  doc: "Reddit's hot score as OASIS uses it: sign(s) log10(max(|s|, 1)) + t / 45000, s = likes - dislikes (a treatment's artificial vote counts as one more), t the creation time in seconds (reddit/r2 _sorts.pyx; OASIS's recsys.py).",
  baseScore(c, _id, r, o) {
    // The displayed score: a treatment's artificial vote counts as one more up- or down-vote.
    const tv = c.treat_vote[r];
    return hotScore(c.likes[r] + (tv > 0 ? tv : 0), c.dislikes[r] + (tv < 0 ? -tv : 0), c.step[r] * o.stepSeconds);
  },
  listScore: (base) => base,
  feed: 'base',
  outOfNetwork: 'clusters',
  // Its base score takes a base-10 logarithm, which the device has no f64 version of: computed on
  // the CPU and uploaded (4 bytes per live post).
  wgsl: { listKey: 'list_key(score[r], 1u)' },
};
