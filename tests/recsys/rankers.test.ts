/**
 * The production code that uses the rankers' formulas (the packed records, the candidate index,
 * the feed kernel) checked against hand-computed numbers, never against a second copy of a
 * formula (each ranker's own test, tests/recsys/rankers/, checks its formulas).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { KIND, PostTable } from '../../platform/posts.ts';
import { RANKER } from './rankerCodes.ts';
import { TOPIC_SCALE, quantise } from '../../recsys/recommender.ts';
import { randomListScore, randomScore } from '../../recsys/rankers/random.ts';
import { MAX_DOT, RECENCY_CODE } from '../../recsys/rankers/xInterest.ts';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { PostRecords } from '../../recsys/records.ts';
import { createCandidateIndex, rebuildCandidates } from '../../recsys/candidates.ts';
import { scoreOf, type FeedArgs } from '../../recsys/kernels.ts';

/** Runs the record and candidate kernels in this thread. */
const inline = createExecutor(1);
afterAll(() => inline.close());
const EXP = RECENCY_CODE.exp;
const OASIS = RECENCY_CODE.oasis;
const D = 16;

/** A unit topic vector along axis `k`, and one with cosine `w` to it (in the k, k+1 plane). */
function axis(k: number, w = 1): Float32Array {
  const v = new Float32Array(D);
  v[k] = w;
  v[k + 1] = Math.sqrt(1 - w * w);
  return v;
}

/**
 * A post table of hand-made originals in topic cluster 0; `firstId` sets the first id. Each post:
 * [author, step, likes, dislikes, reposts].
 */
function table(posts: number[][], firstId = 0, topic = axis(0)): PostTable {
  const t = new PostTable(D, 4, firstId).bind(inline);
  for (const [author, step, likes, dislikes, reposts] of posts) {
    const id = t.add({ author, step, kind: KIND.original, parent: -1, root: -1, rootAuthor: author, depth: 0, stance: 0, cluster: 0, flags: 0, prevByAuthor: -1 }, topic);
    const r = t.rowOf(id);
    t.cols.likes[r] = likes;
    t.cols.dislikes[r] = dislikes;
    t.cols.reposts[r] = reposts;
  }
  return t;
}

// Authors 1, 2, 3 with 999, 999_999 and 0 followers: follower factors 1, 2 and 1.
const followers = Int32Array.from([0, 999, 999_999, 0]);
const HAND = [
  [1, 0, 100, 0, 0],
  [2, 10, 5, 0, 0],
  [3, 20, 0, 10, 0],
];

async function baseScores(posts: PostTable, ranker: number, step: number, recency: number = EXP): Promise<number[]> {
  const records = new PostRecords(D).bind(inline);
  await records.update(posts, { ranker, step, stepSeconds: 3600, tauHours: 6, recency, followers });
  return Array.from({ length: posts.count }, (_, r) => records.recF[r * records.stride]);
}

describe('packed records: base scores as the formulas give them', async () => {
  const f32 = (xs: number[]) => xs.map(Math.fround);

  it('reddit-hot: the hot score of each post, from its votes and creation time', async () => {
    // 2 + 0; log10 5 + 36000/45000; -1 + 72000/45000.
    expect(await baseScores(table(HAND), RANKER.redditHot, 20)).toEqual(f32([2, 0.6989700043360189 + 0.8, 0.6]));
  });

  it('x-interest: recency at the current step x follower factor, for both recency forms', async () => {
    // Ages 20, 10 and 0 hours at step 20; tau = 6 h.
    const exp = await baseScores(table(HAND), RANKER.xInterest, 20);
    [Math.exp(-20 / 6), 2 * Math.exp(-10 / 6), 1].forEach((x, i) => expect(exp[i]).toBeCloseTo(x, 6));
    const oasis = await baseScores(table(HAND), RANKER.xInterest, 20, OASIS);
    [Math.log(2.518), 2 * Math.log(2.618), Math.log(2.718)].forEach((x, i) => expect(oasis[i]).toBeCloseTo(x, 6));
    // Past 271.8 h OASIS's logarithm has no value; the score is 0, not NaN.
    expect(await baseScores(table(HAND), RANKER.xInterest, 300, OASIS)).toEqual([0, 0, 0]);
  });

  it('chronological is the id; random has no base, its record holds the rank multiplier', async () => {
    expect(await baseScores(table(HAND, 40), RANKER.chronological, 20)).toEqual([40, 41, 42]);
    expect(await baseScores(table(HAND), RANKER.random, 20)).toEqual([1, 1, 1]);
  });

  it('a downranked post scores its base times the multiplier, under every ranker', async () => {
    for (const ranker of [RANKER.chronological, RANKER.random, RANKER.redditHot, RANKER.xInterest]) {
      const plain = await baseScores(table(HAND, 40), ranker, 20);
      const t = table(HAND, 40);
      t.cols.rank[1] = 0.25;
      const down = await baseScores(t, ranker, 20);
      expect(down[0]).toBe(plain[0]);
      expect(down[1]).toBeCloseTo(plain[1] * 0.25, 5);
    }
  });

  it('topics are stored as round(TOPIC_SCALE x component)', async () => {
    const records = new PostRecords(D).bind(inline);
    await records.update(table(HAND, 0, axis(0, 0.6)), { ranker: RANKER.xInterest, step: 20, stepSeconds: 3600, tauHours: 6, recency: EXP, followers });
    const q = (records.stride + 4) * 4;
    expect(Array.from(records.recQ.subarray(q, q + 3))).toEqual([Math.round(TOPIC_SCALE * 0.6), Math.round(TOPIC_SCALE * 0.8), 0]);
  });
});

describe('candidate index: list orders', async () => {
  const lists = async (posts: PostTable, ranker: number, step: number, perCluster: number) => {
    const records = new PostRecords(D).bind(inline);
    await records.update(posts, { ranker, step, stepSeconds: 3600, tauHours: 6, recency: EXP, followers });
    const idx = createCandidateIndex(2, perCluster, perCluster);
    await rebuildCandidates(inline, idx, posts, records, { ranker, minStep: 0, key: 9 });
    return { cluster: Array.from(idx.clusterPosts.subarray(0, perCluster)), trending: Array.from(idx.trending) };
  };

  it('x-interest lists rank by base x (1 + likes): liked posts first, reposts do not count', async () => {
    // At step 1, tau = 6 h, follower factor 1. Post 0 (step 1, nothing): 1 x 1 = 1. Post 1 (step 0,
    // 3 likes, 2 reposts): e^(-1/6) x 4 = 3.386. Post 2 (step 0, 1 like, 1 repost): e^(-1/6) x 2 =
    // 1.693. Post 3 (step 0, no likes, 5 reposts): e^(-1/6) x 1 = 0.8465, behind the newer post 0.
    const posts = table([
      [3, 1, 0, 0, 0],
      [3, 0, 3, 0, 2],
      [3, 0, 1, 0, 1],
      [3, 0, 0, 0, 5],
    ]);
    expect(await lists(posts, RANKER.xInterest, 1, 4)).toEqual({ cluster: [1, 2, 0, 3], trending: [1, 2, 0, 3] });
  });

  it('reddit-hot lists rank by the hot score', async () => {
    expect((await lists(table(HAND), RANKER.redditHot, 20, 3)).cluster).toEqual([0, 1, 2]);
  });

  it('chronological lists keep the newest ids, also above 2^24 where Float32 would tie them', async () => {
    // As Float32, 2^24 and 2^24 + 1 are the same number; the list must still keep 2^24 + 1.
    const first = 2 ** 24;
    expect(Math.fround(first + 1)).toBe(first);
    const posts = table([HAND[0], HAND[0], HAND[0]], first);
    expect((await lists(posts, RANKER.chronological, 0, 2)).cluster).toEqual([first + 2, first + 1]);
  });

  it('random lists follow the keyed hash of the id', async () => {
    const ids = [0, 1, 2, 3, 4, 5];
    const { trending } = await lists(table(ids.map(() => HAND[0])), RANKER.random, 0, 6);
    expect([...trending].sort()).toEqual(ids);
    for (let i = 1; i < trending.length; i++) expect(randomListScore(9, trending[i - 1])).toBeGreaterThan(randomListScore(9, trending[i]));
  });
});

describe('feed kernel: per-user scores', async () => {
  const args = async (posts: PostTable, ranker: number, interest: Float32Array): Promise<FeedArgs> => {
    const interestQ = Int8Array.from(interest, quantise);
    const records = new PostRecords(D).bind(inline);
    await records.update(posts, { ranker, step: 0, stepSeconds: 3600, tauHours: 6, recency: EXP, followers });
    return { ranker, dim: D, interestQ, rec: records.rec, recF: records.recF, recQ: records.recQ, stride: records.stride, base: posts.base, key: 5 } as unknown as FeedArgs;
  };

  it('x-interest multiplies the base by the cosine of (int8) interest and (int8) topic, times TOPIC_SCALE^2', async () => {
    // Author 2: follower factor 2, age 0: base 2. Topic along axis 0 is stored exactly (127).
    const posts = table([[2, 0, 0, 0, 0]]);
    expect(scoreOf(await args(posts, RANKER.xInterest, axis(0)), 0, 0)).toBe(2 * MAX_DOT);
    // 0.6 x 127 = 76.2 is stored as 76.
    expect(scoreOf(await args(posts, RANKER.xInterest, axis(0, 0.6)), 0, 0)).toBe(2 * 76 * 127);
    expect(scoreOf(await args(posts, RANKER.xInterest, axis(2)), 0, 0)).toBe(0);
  });

  it('reddit-hot and chronological use the base; random a hash per (user, post)', async () => {
    const posts = table(HAND, 10);
    const chrono = await args(posts, RANKER.chronological, axis(0));
    expect([0, 1, 2].map((r) => scoreOf(chrono, 0, r))).toEqual([10, 11, 12]);
    expect(scoreOf(await args(posts, RANKER.redditHot, axis(0)), 0, 0)).toBe(2);
    const a = await args(posts, RANKER.random, axis(0));
    expect(scoreOf(a, 0, 1)).toBe(randomScore(5, 0, 11));
    expect(scoreOf(a, 1, 1)).toBe(randomScore(5, 1, 11));
    expect(scoreOf(a, 0, 1)).not.toBe(scoreOf(a, 1, 1));
  });

});
