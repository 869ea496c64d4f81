/**
 * The ranking formulas (docs/social-platform.md, "The step", recommend; adding one: docs/architecture.md), each written once. They are pure functions of plain
 * numbers, called by everything that scores posts: the packed post records (records.ts, the
 * user-independent base score of every post, every step), the candidate index (candidates.ts, the
 * order of the per-cluster and trending lists) and the feed kernel (kernels.ts, per user and
 * candidate, ~10^8 calls a step at 1M users: small enough for V8 to inline).
 *
 * Contract: the arithmetic, operation order included, is what runs produce; a change here changes
 * every run's output, so it must be a deliberate one, never a side effect of refactoring.
 */
import { hash } from '../sim-core/rng.ts';
import type { SocialConfig } from '../platform/state.ts';

/** Ranker codes, as the kernels receive them (a number parameter, not a string). */
export const RANKER = { chronological: 0, random: 1, redditHot: 2, xInterest: 3 } as const;
/** Code of each `platform.ranker` name (typed against the config, so a new name must get a code). */
export const RANKER_CODE: Record<SocialConfig['ranker'], number> = {
  chronological: RANKER.chronological,
  random: RANKER.random,
  'reddit-hot': RANKER.redditHot,
  'x-interest': RANKER.xInterest,
};
/** Code of each `platform.recency` name: 0 exp(-age/tau), 1 OASIS's logarithm. */
export const RECENCY_CODE: Record<SocialConfig['recency'], number> = { exp: 0, oasis: 1 };

/** chronological: newer first, and ids are creation ranks, so the score is the id itself. */
export function chronologicalScore(id: number): number {
  return id;
}

/**
 * Reddit's hot score as OASIS uses it: sign(s) * log10(max(|s|, 1)) + (t_created - t0) / 45000, with
 * s = likes - dislikes and t in seconds. socsim's t0 is the start of the run (any fixed epoch gives
 * the same order): newer posts score higher, and a tenfold vote lead is worth 45000 s = 12.5 h.
 */
export function hotScore(likes: number, dislikes: number, createdSeconds: number): number {
  const s = likes - dislikes;
  return Math.sign(s) * Math.log10(Math.max(Math.abs(s), 1)) + createdSeconds / 45000;
}

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
 * round(TOPIC_SCALE x component) (quantise below; the recommend phase quantises interests the same
 * way), so their dot product is an exact integer, TOPIC_SCALE^2 x the cosine; the score is base x
 * dot rounded once to float32, which the GPU's software f32 reproduces bit for bit.
 */
export function xInterestScore(base: number, dot: number): number {
  return Math.fround(base * dot);
}

/** A unit vector's component as int8: round(TOPIC_SCALE x x), x clamped to [-1, 1]. */
export function quantise(x: number): number {
  return Math.round(TOPIC_SCALE * Math.max(-1, Math.min(1, x)));
}

/** The largest int8 dot product of two unit vectors up to quantisation: TOPIC_SCALE^2 (cosine 1). */
export const MAX_DOT = 127 * 127;

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
 * random: a keyed hash of (user, post id) plus 1, in [1, 2^32], so each user gets its own order,
 * fixed within a step and redrawn with the step's key; times the post's rank multiplier m (the
 * downrank intervention); both roundings to float32, as the GPU computes it.
 */
export function randomScore(key: number, user: number, id: number, m = 1): number {
  return Math.fround(Math.fround(hash(key, user, id & 0x7fffffff) + 1) * m);
}

/** Order of the random ranker's trending list: a keyed hash of the post id (one order for all users). */
export function randomListScore(key: number, id: number): number {
  return hash(key, id);
}

/**
 * Post topics are stored as int8 round(TOPIC_SCALE x component) (quantise): a dot product with
 * one is TOPIC_SCALE x the cosine.
 */
export const TOPIC_SCALE = 127;

export interface ScoreOptions {
  ranker: number;
  step: number;
  stepSeconds: number;
  tauHours: number;
  recency: number;
  followers: Int32Array;
  /** The recency factor of the last creation step scored (x-interest); start with step NaN. */
  recencyMemo?: { step: number; value: number };
}

/** The post columns a base score reads. */
export interface ScoreColumns {
  rank: ArrayLike<number>;
  step: ArrayLike<number>;
  author: ArrayLike<number>;
  likes: ArrayLike<number>;
  dislikes: ArrayLike<number>;
  treat_vote: ArrayLike<number>;
}

/**
 * The user-independent part of the score of post row r: the id (chronological), the
 * hot score (reddit-hot), or recency x follower factor at `step` (x-interest; the kernel multiplies
 * by the user's interest cosine), times the post's rank multiplier (the downrank intervention). The
 * random ranker has no base score: the record holds the multiplier alone. `base` is row 0's id.
 */
export function rowBaseScore(c: ScoreColumns, base: number, r: number, o: ScoreOptions): number {
  const m = c.rank[r];
  let b: number;
  switch (o.ranker) {
    case RANKER.chronological:
      b = chronologicalScore(base + r);
      break;
    case RANKER.random:
      // No base score: the record holds the rank multiplier the kernel applies to its hash.
      return m;
    case RANKER.redditHot: {
      // The displayed score: a treatment's artificial vote counts as one more up- or down-vote.
      const tv = c.treat_vote[r];
      b = hotScore(c.likes[r] + (tv > 0 ? tv : 0), c.dislikes[r] + (tv < 0 ? -tv : 0), c.step[r] * o.stepSeconds);
      break;
    }
    default: {
      // R(age) x F(followers), as xInterestBase. Rows come in step order, so with a memo R is
      // computed once per step of creation, not once per post (2.3M a step at 1M agents).
      const st = c.step[r];
      const memo = o.recencyMemo;
      let rf: number;
      if (memo && memo.step === st) rf = memo.value;
      else {
        rf = recencyFactor(((o.step - st) * o.stepSeconds) / 3600, o.recency, o.tauHours);
        if (memo) {
          memo.step = st;
          memo.value = rf;
        }
      }
      b = rf * followerFactor(o.followers[c.author[r]]);
    }
  }
  // The downrank intervention's multiplier (1 for every other post, which keeps their scores exact).
  return m === 1 ? b : b * m;
}
