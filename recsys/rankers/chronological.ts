/**
 * chronological: newest first. Post ids are creation ranks, so the score is the id itself: the
 * reverse-chronological timeline of the classic diffusion studies and of Twitter before its 2016
 * algorithmic timeline (with perCluster 0 and trending 0, a timeline of followed accounts only).
 */
import type { Recommender } from '../recommender.ts';

/** The score of post `id`: the id. */
export function chronologicalScore(id: number): number {
  return id;
}

export const chronological: Recommender = {
  name: 'chronological',
  doc: 'Newest first: the score is the post id (ids are creation ranks), the reverse-chronological timeline of the classic diffusion studies.',
  baseScore: (_c, id) => chronologicalScore(id),
  // The exact id times the multiplier (the record's float32 copy ties ids above 2^24).
  listScore: (_base, id, m) => (m === 1 ? chronologicalScore(id) : chronologicalScore(id) * m),
  feed: 'base',
  outOfNetwork: 'clusters',
  wgsl: {
    base: 'd = d_mul(D(0u, 0, 0u, p.base + r), d_from_f32(m));',
    listKey: 'list_key(rank[r], id)',
  },
};
