/**
 * The hot candidate structures, rebuilt after every step from the posts inside the window: per
 * topic cluster the best `perCluster` recent original posts and quotes, and a global trending
 * list, both ordered by the ranker's user-independent part (recency x follower factor for
 * x-interest, the hot score for reddit-hot, recency for chronological, a keyed hash for random).
 * Probing a cluster then costs O(perCluster) per user, never a users x posts scan.
 */
import { hash } from '../sim-core/rng.ts';
import { sharedArray } from '../sim-core/table.ts';
import { KIND, type PostTable } from '../platform/posts.ts';
import type { PostRecords } from './records.ts';

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

export interface ScoreOptions {
  ranker: number;
  step: number;
  stepSeconds: number;
  tauHours: number;
  recency: number;
  followers: Int32Array;
  key: number;
}

/**
 * The user-independent part of a post's score: the id (chronological), the hot score
 * (reddit-hot), or recency x follower factor (x-interest, recomputed every step; the kernel
 * multiplies by the user's interest cosine). The random ranker has none (0).
 */
export function baseScore(posts: PostTable, r: number, o: ScoreOptions): number {
  const c = posts.cols;
  switch (o.ranker) {
    case 0:
      return posts.base + r;
    case 1:
      return 0;
    case 2: {
      const s = c.likes[r] - c.dislikes[r];
      return Math.sign(s) * Math.log10(Math.max(Math.abs(s), 1)) + (c.step[r] * o.stepSeconds) / 45000;
    }
    default: {
      const age = ((o.step - c.step[r]) * o.stepSeconds) / 3600;
      const v = o.recency === 0 ? Math.exp(-age / o.tauHours) : Math.max(0, Math.log((271.8 - age) / 100));
      const f = Math.log(o.followers[c.author[r]] + 1) / Math.log(1000);
      return v * (f > 1 ? f : 1);
    }
  }
}

/**
 * Rebuilds the cluster lists and the trending list from the posts created since `minStep`, ranked
 * by the base scores in `records` (recsys/records.ts), which must be up to date.
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
    if (kind !== KIND.original && kind !== KIND.quote) continue;
    const id = posts.base + r;
    const b = records.recF[r * S];
    // Lists rank by the base score; x-interest adds an engagement boost so popular posts surface.
    const score = o.ranker === 1 ? hash(o.key, id) : o.ranker === 3 ? b * (1 + Math.log1p(c.likes[r] + 2 * c.reposts[r]) / 10) : b;
    insertTop(idx.clusterPosts, cs, c.cluster[r] * per, per, id, score);
    if (cap > 0) insertTop(idx.trending, ts, 0, cap, id, score);
  }
}
