/**
 * Synthetic post columns for the candidate index's kernels (recsys/candidateKernels.ts candidateTops and
 * mergeTops), shared by their CPU test (against a brute-force sort) and their WGSL test (against
 * the CPU): every kind, removed posts, many equal scores, negative, zero, -0 and subnormal base
 * scores, rank multipliers, and like counts up to 2^31 - 2, whose products with a base need
 * rounding to an f64 (55 significant bits).
 */
import type { Executor } from '../../sim-core/exec.ts';
import { hash } from '../../sim-core/rng.ts';
import { sharedArray } from '../../sim-core/table.ts';
import { kernels as K } from '../../recsys/candidateKernels.ts';
import { topWidth, TOP_WORDS } from '../../recsys/topLists.ts';

const BASES = [0.5, 1, 1.5, 3.25, -0.75, 0, -0, 1e-40, (2 ** 24 - 1) / 2 ** 24, 0.1, 7.000001];
const LIKES = [0, 0, 0, 1, 5, 2 ** 30 + 3, 2 ** 31 - 2];
const RANKS = [1, 1, 1, 1, 0.3, 0.7, 1.1];

export function candidateWorld(posts: number, topics = 12) {
  const col = <T extends { [i: number]: number }>(a: T, f: (r: number) => number) => {
    for (let r = 0; r < posts; r++) a[r] = f(r);
    return a;
  };
  const score = col(sharedArray('f32', posts), (r) => BASES[hash(71, r) % BASES.length] * (hash(71, r, 1) % 5 === 0 ? 1 + (hash(71, r, 2) % 97) / 13 : 1));
  return {
    kind: col(sharedArray('u8', posts), (r) => hash(72, r) % 4),
    flags: col(sharedArray('u8', posts), (r) => (hash(73, r) % 19 === 0 ? 8 : hash(73, r) % 19 === 1 ? 4 : 0)),
    cluster: col(sharedArray('u8', posts), (r) => hash(74, r) % topics),
    rank: col(sharedArray('f32', posts), (r) => RANKS[hash(75, r) % RANKS.length]),
    likes: col(sharedArray('i32', posts), (r) => LIKES[hash(76, r) % LIKES.length]),
    // The CPU reads base scores from the records (stride 1 here), the device from `score`.
    recF: score,
    score,
    stride: 1,
    topics,
  };
}

export type CandidateWorld = ReturnType<typeof candidateWorld>;

/** Runs candidateTops over slices of sliceRows rows from firstRow, then mergeTops; returns the lists and the part buffer. */
export async function candidateLists(exec: Executor, w: CandidateWorld, o: { ranker: number; base: number; firstRow: number; sliceRows: number; perCluster: number; trending: number; key: number }) {
  const count = w.kind.length;
  const slices = Math.ceil((count - o.firstRow) / o.sliceRows);
  const part = sharedArray('u32', slices * topWidth(w.topics, o.perCluster, o.trending) * TOP_WORDS + 5).fill(0xdeadbeef);
  const clusterPosts = sharedArray('i32', w.topics * o.perCluster).fill(-7);
  const trending = sharedArray('i32', o.trending).fill(-7);
  const { topics, ...cols } = w;
  await exec.run(K.candidateTops, { ...cols, part, count, topics, ...o }, slices, { chunkRows: 2 });
  await exec.run(K.mergeTops, { part, clusterPosts, trending, slices, topics, perCluster: o.perCluster, trendingLen: o.trending }, topics + 1, { chunkRows: 3 });
  await exec.sync?.();
  return { part, clusterPosts, trending, slices };
}
