/**
 * The candidate index's lists (recsys/candidateKernels.ts candidateTops, then mergeTops) against a brute-force
 * sort of every eligible post by (list score, tie) descending, under every ranker and several
 * slicings: the lists must not depend on how the rows are sliced.
 */
import { describe, expect, it } from 'vitest';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { hash } from '../../sim-core/rng.ts';
import { RANKER } from './rankerCodes.ts';
import { chronologicalScore } from '../../recsys/rankers/chronological.ts';
import { randomListScore } from '../../recsys/rankers/random.ts';
import { xInterestListScore } from '../../recsys/rankers/xInterest.ts';
import { candidateLists, candidateWorld, type CandidateWorld } from './candidateWorld.ts';

function bruteForce(w: CandidateWorld, o: { ranker: number; base: number; firstRow: number; perCluster: number; trending: number; key: number }) {
  const rows: Array<{ id: number; cluster: number; score: number; tie: number }> = [];
  for (let r = o.firstRow; r < w.kind.length; r++) {
    if ((w.kind[r] !== 0 && w.kind[r] !== 2) || (w.flags[r] & 8) !== 0) continue;
    const id = o.base + r;
    const m = w.rank[r];
    const score =
      o.ranker === RANKER.chronological ? chronologicalScore(id) * m
      : o.ranker === RANKER.random ? randomListScore(o.key, id) * m
      : o.ranker === RANKER.xInterest ? xInterestListScore(w.score[r], w.likes[r])
      : w.score[r];
    rows.push({ id, cluster: w.cluster[r], score, tie: hash(o.key, id, 7) });
  }
  rows.sort((a, b) => (a.score !== b.score ? b.score - a.score : b.tie - a.tie));
  const pad = (ids: number[], n: number) => [...ids.slice(0, n), ...new Array(Math.max(0, n - ids.length)).fill(-1)];
  const clusters: number[] = [];
  for (let t = 0; t < w.topics; t++) clusters.push(...pad(rows.filter((x) => x.cluster === t).map((x) => x.id), o.perCluster));
  return { clusters, trending: pad(rows.map((x) => x.id), o.trending), rows };
}

describe('candidate lists', () => {
  it.each([
    { ranker: 'chronological', code: RANKER.chronological },
    { ranker: 'random', code: RANKER.random },
    { ranker: 'reddit-hot', code: RANKER.redditHot },
    { ranker: 'x-interest', code: RANKER.xInterest },
  ])('$ranker: the best of every eligible post, however the rows are sliced', async ({ code }) => {
    const w = candidateWorld(20_011);
    const exec = createExecutor(2);
    try {
      for (const [sliceRows, perCluster, trending] of [[20_011, 16, 20], [4096, 16, 20], [777, 5, 40], [3000, 0, 9]]) {
        const o = { ranker: code, base: 70_000, firstRow: 1234, sliceRows, perCluster, trending, key: 2 ** 40 + 17 };
        const got = await candidateLists(exec, w, o);
        const want = bruteForce(w, o);
        expect(Array.from(got.clusterPosts), `slices of ${sliceRows}`).toEqual(want.clusters);
        expect(Array.from(got.trending), `slices of ${sliceRows}`).toEqual(want.trending);
        // Equal base scores are common: the lists' order among them comes from the ties.
        const scores = want.rows.map((x) => x.score);
        if (code === RANKER.redditHot || code === RANKER.xInterest) expect(new Set(scores).size).toBeLessThan(scores.length / 2);
      }
    } finally {
      await exec.close();
    }
  });
});
