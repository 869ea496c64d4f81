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

function insertTop(ids: Int32Array, scores: Float64Array, at: number, cap: number, id: number, score: number): void {
  // ids[at .. at+cap) descending by score; -1 marks empty slots.
  if (ids[at + cap - 1] !== -1 && score <= scores[at + cap - 1]) return;
  let i = at + cap - 1;
  while (i > at && (ids[i - 1] === -1 || scores[i - 1] < score)) {
    ids[i] = ids[i - 1];
    scores[i] = scores[i - 1];
    i--;
  }
  ids[i] = id;
  scores[i] = score;
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
    // neighbouring ids round to the same float, and a full list keeps the first of equal scores,
    // i.e. the older post. (The kernel breaks score ties by the larger id, so it is exact anyway.)
    let score: number;
    // Records hold rank-multiplied base scores; the exact id and the hash get the multiplier here.
    const m = c.rank[r];
    if (o.ranker === RANKER.chronological) score = m === 1 ? chronologicalScore(id) : chronologicalScore(id) * m;
    else if (o.ranker === RANKER.random) score = m === 1 ? randomListScore(o.key, id) : randomListScore(o.key, id) * m;
    else if (o.ranker === RANKER.xInterest) score = xInterestListScore(b, c.likes[r], c.reposts[r]);
    else score = b;
    insertTop(idx.clusterPosts, cs, c.cluster[r] * per, per, id, score);
    if (cap > 0) insertTop(idx.trending, ts, 0, cap, id, score);
  }
}
