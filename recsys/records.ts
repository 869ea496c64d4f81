/**
 * Packed per-post records for the feed kernel. Scoring a candidate post reads its step, author,
 * previous post by the same author, base score and topic; kept as separate columns those are five
 * cache misses per candidate, which dominated the step at 1M users. A record packs them into 32
 * bytes (for D = 16), one cache line: [base score f32, step, author, previous post, topic as int8
 * (round(TOPIC_SCALE x component))]. Static fields are written once per post; base scores every
 * step. Rows follow the post table's rows (shifted when old posts retire).
 */
import { sharedArray } from '../sim-core/table.ts';
import type { PostTable } from '../platform/posts.ts';
import { RANKER, chronologicalScore, hotScore, xInterestBase } from './rankers.ts';

/** Topics are stored as int8 round(TOPIC_SCALE x component): a dot product with one is TOPIC_SCALE x the cosine. */
export const TOPIC_SCALE = 127;

export interface ScoreOptions {
  ranker: number;
  step: number;
  stepSeconds: number;
  tauHours: number;
  recency: number;
  followers: Int32Array;
}

/**
 * The user-independent part of the score of post row r (rankers.ts): the id (chronological), the
 * hot score (reddit-hot), or recency x follower factor at `step` (x-interest; the kernel multiplies
 * by the user's interest cosine), times the post's rank multiplier (the downrank intervention). The
 * random ranker has no base score: the record holds the multiplier alone.
 */
export function baseScore(posts: PostTable, r: number, o: ScoreOptions): number {
  const c = posts.cols;
  const m = c.rank[r];
  let b: number;
  switch (o.ranker) {
    case RANKER.chronological:
      b = chronologicalScore(posts.base + r);
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
    default:
      b = xInterestBase(((o.step - c.step[r]) * o.stepSeconds) / 3600, o.followers[c.author[r]], o.recency, o.tauHours);
  }
  // The downrank intervention's multiplier (1 for every other post, which keeps their scores exact).
  return m === 1 ? b : b * m;
}

export class PostRecords {
  /** Int32 words per record: 4 fields + the int8 topic. */
  readonly stride: number;
  rec: Int32Array;
  recF: Float32Array;
  recQ: Int8Array;
  /** Id of row 0 and rows holding their static fields. */
  private base = 0;
  private built = 0;

  constructor(readonly dim: number) {
    this.stride = 4 + Math.ceil(dim / 4);
    this.rec = sharedArray('i32', 0);
    this.recF = new Float32Array(this.rec.buffer);
    this.recQ = new Int8Array(this.rec.buffer);
  }

  private grow(rows: number): void {
    let cap = Math.max(1024, this.rec.length / this.stride);
    while (cap < rows) cap *= 2;
    const rec = sharedArray('i32', cap * this.stride);
    rec.set(this.rec.subarray(0, this.built * this.stride));
    this.rec = rec;
    this.recF = new Float32Array(rec.buffer);
    this.recQ = new Int8Array(rec.buffer);
  }

  /** Brings the records in line with the post table and recomputes every base score. */
  update(posts: PostTable, o: ScoreOptions): void {
    const S = this.stride;
    const D = this.dim;
    const shift = posts.base - this.base;
    if (shift > 0) {
      this.rec.copyWithin(0, Math.min(shift, this.built) * S, this.built * S);
      this.built = Math.max(0, this.built - shift);
      this.base = posts.base;
    }
    if (this.rec.length < posts.count * S) this.grow(posts.count);
    const c = posts.cols;
    for (let r = this.built; r < posts.count; r++) {
      const at = r * S;
      this.rec[at + 1] = c.step[r];
      this.rec[at + 2] = c.author[r];
      this.rec[at + 3] = c.prev_by_author[r];
      const q = (at + 4) * 4;
      for (let d = 0; d < D; d++) this.recQ[q + d] = Math.round(TOPIC_SCALE * Math.max(-1, Math.min(1, posts.topic[r * D + d])));
    }
    this.built = posts.count;
    for (let r = 0; r < posts.count; r++) this.recF[r * S] = baseScore(posts, r, o);
  }
}
