/**
 * Packed per-post records for the feed kernel. Scoring a candidate post reads its step, author,
 * previous post by the same author, base score and topic; kept as separate columns those are five
 * cache misses per candidate, which dominated the step at 1M users. A record packs them into 32
 * bytes (for D = 16), one cache line: [base score f32, step, author, previous post, topic as int8
 * (round(TOPIC_SCALE x component))]. Static fields are written once per post; base scores every
 * step. Rows follow the post table's rows (shifted when it compacts).
 *
 * With an executor that keeps device copies (the webgpu backend), the base scores are also written
 * to `score`, a column of their own, and the device reads them from there: its copy of the records
 * then changes only where static fields were written (the step's new rows, or every row after a
 * compaction), so a step uploads 4 bytes per live post instead of the whole 32-byte records (at 10M
 * agents with a full window, ~0.1 GB instead of ~0.9 GB). The base-score words of the device's
 * records are left stale and never read there.
 */
import { releaseArrays, type Executor } from '../sim-core/exec.ts';
import { sharedArray } from '../sim-core/table.ts';
import type { PostTable } from '../platform/posts.ts';
import { TOPIC_SCALE, rowBaseScore, type ScoreOptions } from './rankers.ts';
import { kernels as K, POST_CHUNK } from './kernels.ts';

/** A unit vector's component as int8: round(TOPIC_SCALE x x), x clamped to [-1, 1]. */
export function quantise(x: number): number {
  return Math.round(TOPIC_SCALE * Math.max(-1, Math.min(1, x)));
}

/** rowBaseScore of a post table's row r. */
export function baseScore(posts: PostTable, r: number, o: ScoreOptions): number {
  return rowBaseScore(posts.cols, posts.base, r, o);
}

const NO_SCORES = sharedArray('f32', 0);

export class PostRecords {
  /** Int32 words per record: 4 fields + the int8 topic. */
  readonly stride: number;
  rec: Int32Array;
  recF: Float32Array;
  recQ: Int8Array;
  /**
   * Base scores of the live rows as a column (only with a device executor; empty otherwise): the
   * same float32 values as recF at row x stride, rewritten every step.
   */
  score: Float32Array = sharedArray('f32', 0);
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

  /**
   * Brings the records in line with the post table: rows move with the table's (it compacted when
   * its base moved); the `updateRecords` kernel then writes, in parallel, the static fields of the
   * rows added since the last call and every live post's base score. Returns how many live posts
   * are removed (FLAG.removed).
   */
  async update(exec: Executor, posts: PostTable, o: ScoreOptions): Promise<number> {
    const S = this.stride;
    const shift = posts.base - this.base;
    // Rows whose static fields change: every row when the rows move, else those added.
    const staticFrom = shift > 0 ? 0 : this.built;
    if (shift > 0) {
      this.rec.copyWithin(0, Math.min(shift, this.built) * S, this.built * S);
      this.built = Math.max(0, this.built - shift);
      this.base = posts.base;
    }
    if (this.rec.length < posts.count * S) {
      this.grow(posts.count);
      // The old records go back now (0.5 GB at 2^24 rows), not at some later collection.
      await releaseArrays(exec);
    }
    const device = exec.hostWrote !== undefined;
    if (device && this.score.length * S < this.rec.length) this.score = sharedArray('f32', this.rec.length / S);
    const c = posts.cols;
    const [removed] = await exec.reduce(
      K.updateRecords,
      {
        rank: c.rank as Float32Array,
        step: c.step as Int32Array,
        author: c.author as Int32Array,
        prevByAuthor: c.prev_by_author as Int32Array,
        topic: posts.topic,
        likes: c.likes as Int32Array,
        dislikes: c.dislikes as Int32Array,
        treatVote: c.treat_vote as Int8Array,
        flags: c.flags as Uint8Array,
        followers: o.followers,
        rec: this.rec,
        recF: this.recF,
        recQ: this.recQ,
        score: device ? this.score : NO_SCORES,
        base: posts.base,
        first: posts.first,
        built: this.built,
        dim: this.dim,
        stride: S,
        ranker: o.ranker,
        now: o.step,
        stepSeconds: o.stepSeconds,
        tauHours: o.tauHours,
        recency: o.recency,
      },
      posts.count,
      { chunkRows: POST_CHUNK, announced: true },
    );
    exec.hostWrote?.(this.rec, staticFrom * S, posts.count * S);
    exec.hostWrote?.(this.score, posts.first, posts.count);
    this.built = posts.count;
    return removed ?? 0;
  }
}
