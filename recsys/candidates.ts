/**
 * The hot candidate structures, rebuilt after every step from the posts inside the window: per
 * topic cluster the best `perCluster` recent original posts and quotes, and a global trending
 * list, both ordered by the ranker's user-independent part (recency x follower factor for
 * x-interest, the hot score for reddit-hot, recency for chronological, a keyed hash for random).
 * Probing a cluster then costs O(perCluster) per user, never a users x posts scan.
 */
import type { Executor } from '../sim-core/exec.ts';
import { sharedArray } from '../sim-core/table.ts';
import type { PostTable } from '../platform/posts.ts';
import type { PostRecords } from './records.ts';
import { kernels as K } from './candidateKernels.ts';
import { TOP_WORDS, topWidth } from './topLists.ts';

/**
 * Post rows per slice of candidateTops (a row of that kernel). Each slice's lists go to the
 * `part` buffer (~1,000 entries of four words at the default 64 x 16 + 20, 16 KB) and mergeTops
 * reads them all back per list: at 1M agents ~80 slices over a 2.6M-row window. The lists do not
 * depend on the slicing.
 */
const SLICE_ROWS = 1 << 15;

export interface CandidateIndex {
  perCluster: number;
  /** topics x perCluster post ids, best first; -1 marks empty slots. */
  clusterPosts: Int32Array;
  /** Global trending list, best first; -1 marks empty slots. */
  trending: Int32Array;
  /** The slices' lists (candidateTops), kept between steps. */
  part: Uint32Array;
}

export function createCandidateIndex(topics: number, perCluster: number, trending: number): CandidateIndex {
  return {
    perCluster,
    clusterPosts: sharedArray('i32', topics * perCluster).fill(-1),
    trending: sharedArray('i32', trending).fill(-1),
    part: sharedArray('u32', 0),
  };
}

/**
 * Rebuilds the cluster lists and the trending list from the posts created since `minStep`, ranked
 * by the base scores in `records` (recsys/records.ts), which must be up to date: the
 * `candidateTops` kernel (recsys/candidateKernels.ts, which has the list orders) finds each slice's best,
 * and `mergeTops` the best of those per list.
 */
export async function rebuildCandidates(exec: Executor, idx: CandidateIndex, posts: PostTable, records: PostRecords, o: { ranker: number; minStep: number; key: number }): Promise<void> {
  const per = idx.perCluster;
  // Cluster lists (none when perCluster is 0), then the trending list.
  const topics = per > 0 ? idx.clusterPosts.length / per : 0;
  const cap = idx.trending.length;
  const c = posts.cols;
  const firstRow = posts.rowsBefore(o.minStep);
  const slices = Math.ceil((posts.count - firstRow) / SLICE_ROWS);
  const words = slices * topWidth(topics, per, cap) * TOP_WORDS;
  if (idx.part.length < words) idx.part = sharedArray('u32', Math.ceil(words * 1.25));
  await exec.run(
    K.candidateTops,
    {
      kind: c.kind,
      flags: c.flags,
      cluster: c.cluster,
      rank: c.rank,
      likes: c.likes,
      recF: records.recF,
      score: records.score,
      part: idx.part,
      base: posts.base,
      count: posts.count,
      stride: records.stride,
      ranker: o.ranker,
      firstRow,
      sliceRows: SLICE_ROWS,
      topics,
      perCluster: per,
      trending: cap,
      key: o.key,
    },
    slices,
    { chunkRows: 1 },
  );
  await exec.run(K.mergeTops, { part: idx.part, clusterPosts: idx.clusterPosts, trending: idx.trending, slices, topics, perCluster: per, trendingLen: cap }, topics + 1, { chunkRows: 1 });
}
