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
import { insertTop, kernels as K } from './kernels.ts';

/**
 * Post rows per chunk of candidateTops. Every chunk returns its own lists (~1,000 entries of three
 * numbers at the default 64 x 16 + 20), which come back to this thread and are merged here, so
 * chunks are larger than the other per-post kernels' (POST_CHUNK, 32k rows): at 1M agents ~20
 * chunks over a 2.6M-row window instead of ~80. The lists do not depend on the chunking.
 */
const TOP_CHUNK = 1 << 17;

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
 * Rebuilds the cluster lists and the trending list from the posts created since `minStep`, ranked
 * by the base scores in `records` (recsys/records.ts), which must be up to date: the
 * `candidateTops` kernel (recsys/kernels.ts, which has the list orders) finds each chunk's best, and
 * the chunks' lists are merged here in chunk order.
 */
export async function rebuildCandidates(exec: Executor, idx: CandidateIndex, posts: PostTable, records: PostRecords, o: { ranker: number; minStep: number; key: number }): Promise<void> {
  const per = idx.perCluster;
  // Cluster lists (none when perCluster is 0), then the trending list.
  const clusters = per > 0 ? idx.clusterPosts.length / per : 0;
  const cap = idx.trending.length;
  const c = posts.cols;
  const parts = await exec.run(
    K.candidateTops,
    {
      kind: c.kind as Uint8Array,
      flags: c.flags as Uint8Array,
      cluster: c.cluster as Uint8Array,
      rank: c.rank as Float32Array,
      likes: c.likes as Int32Array,
      recF: records.recF,
      base: posts.base,
      stride: records.stride,
      ranker: o.ranker,
      firstRow: posts.rowsBefore(o.minStep),
      topics: clusters,
      perCluster: per,
      trending: cap,
      key: o.key,
    },
    posts.count,
    { chunkRows: TOP_CHUNK },
  );
  idx.clusterPosts.fill(-1);
  idx.trending.fill(-1);
  const cs = new Float64Array(idx.clusterPosts.length);
  const ct = new Float64Array(idx.clusterPosts.length);
  const ts = new Float64Array(cap);
  const tt = new Float64Array(cap);
  for (const part of parts) {
    let p = 0;
    for (let l = 0; l <= clusters; l++) {
      const len = part[p++];
      for (let i = 0; i < len; i++, p += 3) {
        if (l === clusters) insertTop(idx.trending, ts, tt, 0, cap, part[p], part[p + 1], part[p + 2]);
        else insertTop(idx.clusterPosts, cs, ct, l * per, per, part[p], part[p + 1], part[p + 2]);
      }
    }
  }
}
