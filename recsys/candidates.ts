/**
 * The hot candidate structures, rebuilt after every step from the posts inside the window: per
 * topic cluster the best `perCluster` recent original posts and quotes, and a global trending
 * list, both ordered by the ranker's user-independent part (recency x follower factor for
 * x-interest, the hot score for reddit-hot, recency for chronological, a keyed hash for random).
 * Probing a cluster then costs O(perCluster) per user, never a users x posts scan.
 */
import { sharedArray } from '../sim-core/table.ts';
import { FLAG, KIND, type PostTable } from '../platform/posts.ts';
import type { PostRecords } from './records.ts';
import { RANKER, chronologicalScore, randomListScore, xInterestListScore } from './rankers.ts';
import { hash } from '../sim-core/rng.ts';

export interface CandidateIndex {
  perCluster: number;
  /** topics x perCluster post ids, best first; -1 marks empty slots. */
  clusterPosts: Int32Array;
  /** Global trending list, best first; -1 marks empty slots. */
  trending: Int32Array;
}

export function createCandidateIndex(topics: number, perCluster: number, trending: number): CandidateIndex {
  return {
    perCluster,
    clusterPosts: sharedArray('i32', topics * perCluster).fill(-1),
    trending: sharedArray('i32', trending).fill(-1),
  };
}

/**
 * ids[at .. at+cap) descending by (score, tie); -1 marks empty slots. Equal scores are common (posts
 * of one step share their recency, and most authors the follower factor 1), so ties are broken by
 * a keyed hash of the id rather than by creation order, which would hand every list to whichever
 * posts of a step were created first (e.g. the first of two injected sets of stories).
 */
function insertTop(ids: Int32Array, scores: Float64Array, ties: Float64Array, at: number, cap: number, id: number, score: number, tie: number): void {
  const last = at + cap - 1;
  if (ids[last] !== -1 && (score < scores[last] || (score === scores[last] && tie <= ties[last]))) return;
  let i = last;
  while (i > at && (ids[i - 1] === -1 || scores[i - 1] < score || (scores[i - 1] === score && ties[i - 1] < tie))) {
    ids[i] = ids[i - 1];
    scores[i] = scores[i - 1];
    ties[i] = ties[i - 1];
    i--;
  }
  ids[i] = id;
  scores[i] = score;
  ties[i] = tie;
}

/**
 * Rebuilds the cluster lists and the trending list from the posts created since `minStep`, ranked
 * by the base scores in `records` (recsys/records.ts), which must be up to date, through the list
 * orders of rankers.ts: the hot score for reddit-hot, the engagement-boosted base for x-interest,
 * a keyed hash of the id for random, and the id for chronological.
 */
export function rebuildCandidates(idx: CandidateIndex, posts: PostTable, records: PostRecords, o: { ranker: number; minStep: number; key: number }): void {
  const T = idx.clusterPosts.length;
  const cap = idx.trending.length;
  idx.clusterPosts.fill(-1);
  idx.trending.fill(-1);
  const cs = new Float64Array(T);
  const ts = new Float64Array(cap);
  const ct = new Float64Array(T);
  const tt = new Float64Array(cap);
  const c = posts.cols;
  const start = posts.rowsBefore(o.minStep);
  const per = idx.perCluster;
  const S = records.stride;
  for (let r = start; r < posts.count; r++) {
    const kind = c.kind[r];
    if ((kind !== KIND.original && kind !== KIND.quote) || (c.flags[r] & FLAG.removed) !== 0) continue;
    const id = posts.base + r;
    const b = records.recF[r * S];
    // Chronological ranks by the exact id, not its Float32 copy in the records: above 2^24
    // neighbouring ids round to the same float, and equal scores would then be ordered by the tie
    // hash, not by age. (The kernel breaks score ties by the larger id, so it is exact anyway.)
    let score: number;
    // Records hold rank-multiplied base scores; the exact id and the hash get the multiplier here.
    const m = c.rank[r];
    if (o.ranker === RANKER.chronological) score = m === 1 ? chronologicalScore(id) : chronologicalScore(id) * m;
    else if (o.ranker === RANKER.random) score = m === 1 ? randomListScore(o.key, id) : randomListScore(o.key, id) * m;
    else if (o.ranker === RANKER.xInterest) score = xInterestListScore(b, c.likes[r]);
    else score = b;
    const tie = hash(o.key, id, 7);
    if (per > 0) insertTop(idx.clusterPosts, cs, ct, c.cluster[r] * per, per, id, score, tie);
    if (cap > 0) insertTop(idx.trending, ts, tt, 0, cap, id, score, tie);
  }
}
