/**
 * x-interest, the default: X's "For You" ranking as OASIS models it, recency x follower factor x
 * the cosine of the user's interest and the post's topic; its out-of-network lists hold the posts
 * with the most likes, decayed by age, as X's SimClusters index tweets.
 */
import { TOPIC_SCALE, type Recommender, type ScoreOptions, type ScoreColumns } from '../recommender.ts';

/** Code of each `platform.recency` name: 0 exp(-age/tau), 1 OASIS's logarithm. */
export const RECENCY_CODE = { exp: 0, oasis: 1 } as const;

/**
 * x-interest recency R(age), age in hours: exp(-age/tau) (recency code 0, the default), or OASIS's
 * ln((271.8 - age)/100) (code 1) clipped at 0, which also covers ages past 271.8 h where the
 * logarithm's argument is negative (NaN would make every comparison with the score false).
 */
export function recencyFactor(ageHours: number, recency: number, tauHours: number): number {
  if (recency === RECENCY_CODE.exp) return Math.exp(-ageHours / tauHours);
  const v = Math.log((271.8 - ageHours) / 100);
  return v > 0 ? v : 0;
}

const LN_1000 = Math.log(1000);

/**
 * x-interest follower factor F = max(1, log_1000(followers + 1)) (OASIS computes it but never
 * applies it). Below 999 followers the logarithm is below ln 1000, so F is 1 without computing it
 * (most authors; the base scores of every post in the window are recomputed every step).
 */
export function followerFactor(followers: number): number {
  if (followers < 999) return 1;
  const f = Math.log(followers + 1) / LN_1000;
  return f > 1 ? f : 1;
}

/** The user-independent part of x-interest, R(age) x F(followers); recomputed every step. */
export function xInterestBase(ageHours: number, followers: number, recency: number, tauHours: number): number {
  return recencyFactor(ageHours, recency, tauHours) * followerFactor(followers);
}

/**
 * x-interest for one user, as the feed orders posts: base x S up to a constant factor, with S the
 * cosine between the user's interest and the post's topic. Both are stored as int8
 * round(TOPIC_SCALE x component) (records.ts; the recommend phase quantises interests the same
 * way), so their dot product is an exact integer, TOPIC_SCALE^2 x the cosine; the score is base x
 * dot rounded once to float32, which the GPU's software f32 reproduces bit for bit.
 */
export function xInterestScore(base: number, dot: number): number {
  return Math.fround(base * dot);
}

/** The largest int8 dot product of two unit vectors up to quantisation: TOPIC_SCALE^2 (cosine 1). */
export const MAX_DOT = TOPIC_SCALE * TOPIC_SCALE;

/**
 * Order of the x-interest out-of-network lists (per topic cluster, and trending): base x (1 +
 * likes), so liked posts fill them and rank by their likes, decayed by age. Modelled on X's
 * SimClusters, the source of most out-of-network candidates (Satuluri et al., KDD 2020;
 * twitter/the-algorithm, simclusters_v2): a tweet's cluster embedding is empty when it is created
 * and grows by the liker's interest vector with every like, and each cluster's candidate index holds
 * the tweets with the largest (time-decayed) scores in it. The 1 lets a post nobody has liked yet
 * fill a list that liked posts leave empty (without it a platform with no in-network slots could
 * never show, so never get liked, any post). The feed itself ranks by xInterestScore.
 */
export function xInterestListScore(base: number, likes: number): number {
  return base * (1 + likes);
}

/**
 * R(age) of row r, as recencyFactor at the row's age now. Rows come in step order, so with a memo
 * R is computed once per step of creation, not once per post (2.3M a step at 1M agents).
 */
export function rowRecency(c: ScoreColumns, r: number, o: ScoreOptions): number {
  const st = c.step[r];
  const memo = o.recencyMemo;
  if (memo && memo.step === st) return memo.value;
  const rf = recencyFactor(((o.step - st) * o.stepSeconds) / 3600, o.recency, o.tauHours);
  if (memo) {
    memo.step = st;
    memo.value = rf;
  }
  return rf;
}

/** R(age) x F(followers) of row r, as xInterestBase. */
function rowBase(c: ScoreColumns, r: number, o: ScoreOptions): number {
  return rowRecency(c, r, o) * followerFactor(o.followers[c.author[r]]);
}

export const xInterest: Recommender = {
  name: 'x-interest',
  doc: "X's For You ranking as OASIS models it: recency exp(-age/tau) (or OASIS's ln((271.8 - age)/100)) x follower factor max(1, log_1000(followers + 1)) x the cosine of the user's interest and the post's topic; out-of-network lists by base x (1 + likes), after X's SimClusters (Satuluri et al., KDD 2020; twitter/the-algorithm).",
  baseScore: (c, _id, r, o) => rowBase(c, r, o),
  listScore: (base, _id, _m, likes) => xInterestListScore(base, likes),
  feed: 'interest',
  outOfNetwork: 'clusters',
  wgsl: {
    // R from the table of creation steps, F from the table of follower counts (records.ts makes
    // both with the functions above: the device has no f64 exponential or logarithm); F is 1 below
    // 999 followers and a multiplier of 1 is not applied, as on the CPU. A row whose author's
    // count is past the factor table is counted in `missing` (records.ts extends it and reruns).
    base: `d = table(p.o_recencies + 2u * u32(step[r] - p.first_step));
      let f = followers[author[r]];
      if (f >= 999) {
        let j = u32(f - 999);
        if (j < p.factors) { d = d_mul(d, table(p.o_factors + 2u * j)); } else { atomicAdd(&missing, 1u); }
      }
      if (m != 0x3f800000u) { d = d_mul(d, d_from_f32(m)); }`,
    listKey: 'list_key(score[r], 1u + likes[r])',
  },
};
