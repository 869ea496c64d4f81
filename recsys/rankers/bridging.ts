/**
 * bridging: posts approved across the opinion divide first. A bridging-based ranker in the sense
 * of Ovadya and Thorburn ("Bridging Systems", arXiv 2301.09976, 2023: rank by positive feedback
 * from people who usually disagree), as Törnberg et al. ("Simulating social media using large
 * language models to evaluate alternative news feed algorithms", arXiv 2310.05984, 2023) built it
 * for a simulated platform (posts liked by users of opposing political views ranked higher) and
 * Larooij and Törnberg (arXiv 2508.03385, 2025) tested it among their prosocial interventions.
 *
 * The two sides are the voters' opinions when they voted: below 0 (left) and 0 or above (right);
 * the post table counts each side's likes and dislikes (countVotes, platform/kernels.ts).
 */
import type { Recommender, ScoreColumns } from '../recommender.ts';
import { rowRecency } from './xInterest.ts';

/**
 * The up-vote share of one side, smoothed by Laplace's rule of succession: (likes + 1) / (likes +
 * dislikes + 2), 1/2 for a side that has not voted, so a post nobody voted on is neither favoured
 * nor buried and a single vote moves it by a sixth, not all the way.
 */
export function sideApproval(likes: number, dislikes: number): number {
  return (likes + 1) / (likes + dislikes + 2);
}

/**
 * The bridging approval of a post: the smaller of the two sides' smoothed up-vote shares, so a
 * post liked by both sides ranks above one liked more often but by one side only. A treatment's
 * artificial vote (assign) has no side and does not count.
 */
export function bridgingApproval(likes: number, dislikes: number, likesLeft: number, dislikesLeft: number): number {
  const left = sideApproval(likesLeft, dislikesLeft);
  const right = sideApproval(likes - likesLeft, dislikes - dislikesLeft);
  return left < right ? left : right;
}

/** Row r's bridging approval (the post table's per-side counts). */
function rowApproval(c: ScoreColumns, r: number): number {
  return bridgingApproval(c.likes[r], c.dislikes[r], c.likes_left[r], c.dislikes_left[r]);
}

export const bridging: Recommender = {
  name: 'bridging',
  doc:
    "Approval across the opinion divide: the smaller of the two sides' up-vote shares (likes + 1) / (likes + dislikes + 2), sides by the voter's opinion (below 0, or 0 and above), " +
    "x x-interest's recency R(age), x the cosine of the user's interest and the post's topic; out-of-network lists by the same base. " +
    'Bridging-based ranking as Ovadya and Thorburn (2023) define it and Tornberg et al. (2023) and Larooij and Tornberg (2025) simulate it.',
  baseScore: (c, _id, r, o) => rowRecency(c, r, o) * rowApproval(c, r),
  listScore: (base) => base,
  feed: 'interest',
  outOfNetwork: 'clusters',
  bySide: true,
  // No WGSL base score: its base scores are computed on the CPU and uploaded (4 bytes per live
  // post), the vote counts coming back for it; the feed kernel and the lists run on the device.
  wgsl: { listKey: 'list_key(score[r], 1u)' },
};
