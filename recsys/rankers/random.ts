/**
 * random: each user's own order, a keyed hash of (user, post), redrawn every step; out-of-network
 * candidates drawn uniformly from the window, as OASIS's random recommender draws them.
 */
import { hash } from '../../sim-core/rng.ts';
import type { Recommender } from '../recommender.ts';

/**
 * A keyed hash of (user, post id) plus 1, in [1, 2^32], so each user gets its own order, fixed
 * within a step and redrawn with the step's key; times the post's rank multiplier m (the
 * downrank intervention); both roundings to float32, as the GPU computes it.
 */
export function randomScore(key: number, user: number, id: number, m = 1): number {
  return Math.fround(Math.fround(hash(key, user, id & 0x7fffffff) + 1) * m);
}

/** Order of the random ranker's trending list: a keyed hash of the post id (one order for all users). */
export function randomListScore(key: number, id: number): number {
  return hash(key, id);
}

export const random: Recommender = {
  name: 'random',
  doc: "A uniformly random order per user and step (a keyed hash of user and post), with out-of-network candidates drawn uniformly from the window, as OASIS's random recommender draws them.",
  // No base score: the record holds the rank multiplier, which the feed kernel applies to its hash.
  baseScore: () => 1,
  listScore: (_base, id, m, _likes, key) => (m === 1 ? randomListScore(key, id) : randomListScore(key, id) * m),
  feed: 'hash',
  outOfNetwork: 'window',
  wgsl: {
    base: 'd = d_mul(d_from_f32(m), D(0u, 0, 0u, 1u));',
    listKey: 'list_key(rank[r], rng_hash(p.key_lo, p.key_hi, id, 0u))',
  },
};
