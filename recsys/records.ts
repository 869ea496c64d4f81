/**
 * Packed per-post records for the feed kernel. Scoring a candidate post reads its step, author,
 * previous post by the same author, base score and topic; kept as separate columns those are five
 * cache misses per candidate, which dominated the step at 1M users. A record packs them into 32
 * bytes (for D = 16), one cache line: [base score f32, step, author, previous post, topic as int8
 * (round(TOPIC_SCALE x component))]. Static fields are written once per post; base scores every
 * step. Rows follow the post table's rows (shifted when it compacts).
 *
 * With an executor that keeps device copies (the webgpu backend), the base scores go to `score`, a
 * column of their own, instead of the records' recF words (left unwritten), and every kernel reads
 * them from there: the device's copy of the records then changes only where static fields were
 * written (the step's new rows; a compaction's move and a growth's copy are made on the device,
 * Executor.hostMoved and hostCopied). The `baseScores` kernel runs on the device for the rankers
 * with a WGSL base score (recsys/baseScores.wgsl.ts; x-interest's reads two f64 tables made here:
 * the recency of each creation step in the window, the follower factor of each count from 999),
 * so the scores never cross the bus; the others' (reddit-hot's log10) are computed on the CPU and
 * go up, 4 bytes per live post.
 */
import { releaseArrays } from '../sim-core/exec.ts';
import { sharedArray } from '../sim-core/table.ts';
import { StateTable } from '../sim-core/stateTable.ts';
import type { PostTable } from '../platform/posts.ts';
import { rankedBase, type ScoreOptions } from './recommender.ts';
import { followerFactor, recencyFactor } from './rankers/xInterest.ts';
import { BUNDLED_RANKERS } from './rankerRegistry.ts';
import { kernels as K, POST_CHUNK } from './kernels.ts';

/** The base score of a post table's row r, rank multiplier applied (recommender.ts rankedBase). */
export function baseScore(posts: PostTable, r: number, o: ScoreOptions): number {
  return rankedBase(BUNDLED_RANKERS[o.ranker], posts.cols, posts.base + r, r, o);
}

const NO_SCORES = sharedArray('f32', 0);
const NO_TABLE = sharedArray('f64', 0);
const NO_COUNTS = sharedArray('i32', 0);
/** The smallest follower count whose factor is above 1 (rankers/xInterest.ts followerFactor). */
const FACTOR_FROM = 999;

export class PostRecords extends StateTable {
  readonly dim: number;
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

  constructor(dim: number) {
    super();
    this.dim = dim;
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

  /** x-interest's R(age) of creation steps firstStep .. now (a device executor's `baseScores`). */
  private recencies = sharedArray('f64', 0);
  /** The follower factor of counts FACTOR_FROM .. FACTOR_FROM + length - 1. */
  private factors = sharedArray('f64', 0);

  /**
   * Brings the records in line with the post table: rows move with the table's (it compacted when
   * its base moved); the `recordStatics` kernel then writes the static fields of the rows added
   * since the last call, and `baseScores` every live post's base score. Returns how many live
   * posts are removed (FLAG.removed).
   */
  async update(posts: PostTable, o: ScoreOptions): Promise<number> {
    const exec = this.exec;
    const S = this.stride;
    const shift = posts.base - this.base;
    if (shift > 0) {
      // The rows move with the table's (a device executor moves its copy on the device).
      const from = Math.min(shift, this.built);
      this.rec.copyWithin(0, from * S, this.built * S);
      if (this.built > from) this.moved(this.rec, from * S, 0, (this.built - from) * S);
      this.built -= from;
      this.base = posts.base;
    }
    // Rows whose static fields are written below: those added.
    const staticFrom = this.built;
    if (this.rec.length < posts.count * S) {
      const old = this.rec;
      this.grow(posts.count);
      this.copied(this.rec, old, this.built * S);
      // The old records go back now (0.5 GB at 2^24 rows), not at some later collection.
      await releaseArrays(exec);
    }
    const device = this.onDevice;
    if (device && this.score.length * S < this.rec.length) this.score = sharedArray('f32', this.rec.length / S);
    // The kernels read the column when it is there: a run resumed on the CPU from a device run's
    // checkpoint has it restored, stale, and scores into recF.
    if (!device && this.score.length > 0) this.score = NO_SCORES;
    const c = posts.cols;
    const fresh = posts.count - this.built;
    if (fresh > 0) {
      // On a device executor, on the device (recordStatics.wgsl.ts), where apply's new topics are;
      // on the CPU those rows go up.
      const args = { step: c.step, author: c.author, prevByAuthor: c.prev_by_author, topic: posts.topic, rec: this.rec, recQ: this.recQ, from: this.built, dim: this.dim, stride: S };
      await exec.run(K.recordStatics, args, fresh, { chunkRows: POST_CHUNK, wroteRows: [{ array: this.rec, from: staticFrom * S, to: posts.count * S }] });
    }
    this.built = posts.count;
    const firstStep = posts.count > posts.first ? (c.step[posts.first] as number) : o.step;
    if (device) this.tables(o, firstStep, FACTOR_FROM);
    const out = device ? this.score : this.recF;
    const bySide = BUNDLED_RANKERS[o.ranker].bySide === true;
    const args = {
      rank: c.rank,
      step: c.step,
      author: c.author,
      likes: c.likes,
      dislikes: c.dislikes,
      // Only a ranker that reads them gets them (a device executor would bring them back for it).
      likesLeft: bySide ? c.likes_left : NO_COUNTS,
      dislikesLeft: bySide ? c.dislikes_left : NO_COUNTS,
      treatVote: c.treat_vote,
      flags: c.flags,
      followers: o.followers,
      recencies: device ? this.recencies : NO_TABLE,
      factors: device ? this.factors : NO_TABLE,
      out,
      base: posts.base,
      first: posts.first,
      outStride: device ? 1 : S,
      ranker: o.ranker,
      now: o.step,
      stepSeconds: o.stepSeconds,
      tauHours: o.tauHours,
      recency: o.recency,
      firstStep,
    };
    const rows = posts.count - posts.first;
    const wrote = { array: out, from: posts.first * args.outStride, to: posts.count * args.outStride };
    for (;;) {
      const [removed, missing] = await exec.reduce(K.baseScores, args, rows, { chunkRows: POST_CHUNK, wroteRows: [wrote] });
      if (!missing) return removed ?? 0;
      // Authors with more followers than the table covers (the device's kernel): extend it to the most any user has, and score again.
      let most = 0;
      for (let v = 0; v < o.followers.length; v++) most = Math.max(most, o.followers[v]);
      if (most < FACTOR_FROM + this.factors.length) throw new Error(`baseScores: ${missing} posts' authors have more followers on the device than the most on the host (${most}): a host write to the follower counts was not announced`);
      this.tables(o, firstStep, most + 1);
      args.factors = this.factors;
    }
  }

  /**
   * The device kernel's tables (x-interest's values, rankers/xInterest.ts): R(age) for creation steps firstStep .. o.step,
   * rewritten every step, and the follower factors of counts FACTOR_FROM .. `upTo` - 1 at least,
   * kept and extended (the values do not change).
   */
  private tables(o: ScoreOptions, firstStep: number, upTo: number): void {
    const steps = o.step - firstStep + 1;
    if (this.recencies.length < steps) this.recencies = sharedArray('f64', Math.ceil(steps * 1.25));
    for (let i = 0; i < steps; i++) this.recencies[i] = recencyFactor(((o.step - (firstStep + i)) * o.stepSeconds) / 3600, o.recency, o.tauHours);
    this.wrote(this.recencies, 0, steps);
    const had = this.factors.length;
    if (FACTOR_FROM + had < upTo) {
      const factors = sharedArray('f64', Math.ceil((upTo - FACTOR_FROM) * 1.25));
      factors.set(this.factors);
      for (let i = had; i < factors.length; i++) factors[i] = followerFactor(FACTOR_FROM + i);
      this.factors = factors;
    }
  }
}
