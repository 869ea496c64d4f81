/**
 * Ranking formulas (DESIGN.md section 7). Pure functions of post and user features; the feed kernel
 * inlines the same arithmetic.
 */
export const RANKERS = ['chronological', 'random', 'reddit-hot', 'x-interest'] as const;
export type Ranker = (typeof RANKERS)[number];
export const RANKER_CODE: Record<Ranker, number> = { chronological: 0, random: 1, 'reddit-hot': 2, 'x-interest': 3 };

export const RECENCY = ['exp', 'oasis'] as const;
export type Recency = (typeof RECENCY)[number];

/**
 * Reddit's hot score as OASIS uses it: sign(s) * log10(max(|s|, 1)) + (t_created - t0) / 45000, with
 * s = likes - dislikes and t in seconds. socsim's t0 is the start of the run (any fixed epoch gives
 * the same order): newer posts score higher, and a tenfold vote lead is worth 45000 s = 12.5 h.
 */
export function hotScore(likes: number, dislikes: number, createdSeconds: number): number {
  const s = likes - dislikes;
  const order = Math.log10(Math.max(Math.abs(s), 1));
  return Math.sign(s) * order + createdSeconds / 45000;
}

/** Recency factor of x-interest: exp(-age/tau) (default), or OASIS's ln((271.8 - age)/100) clipped at 0; age in hours. */
export function recencyFactor(ageHours: number, recency: Recency, tauHours: number): number {
  if (recency === 'exp') return Math.exp(-ageHours / tauHours);
  const v = Math.log((271.8 - ageHours) / 100);
  return v > 0 ? v : 0;
}

/** Follower factor of x-interest: max(1, log_1000(followers + 1)) (OASIS computes it but never applies it). */
export function followerFactor(followers: number): number {
  return Math.max(1, Math.log(followers + 1) / Math.log(1000));
}

/** x-interest score: recency x follower factor x interest cosine (vectors are unit length). */
export function xInterestScore(ageHours: number, followers: number, cosine: number, recency: Recency = 'exp', tauHours = 6): number {
  return recencyFactor(ageHours, recency, tauHours) * followerFactor(followers) * cosine;
}
