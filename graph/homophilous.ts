/**
 * The homophilous preferential follow graph (the social scenarios' default), drawn in user order on
 * one thread or on an executor's threads with the same bytes.
 *
 * Model: users join in id order; user t follows k_t earlier users (k_t proportional to its weight,
 * at most 20 x `meanFollowing`, scaled so the mean is `meanFollowing`), each candidate drawn by
 * preferential attachment on follower count (Price's model) or uniformly, and accepted with
 * probability 1 - homophily * d, where d in [0, 1] averages the opinion distance |o_t - o_j| / 2
 * and whether the primary topics differ. Rejected candidates are redrawn (up to 16 tries, then the
 * last is kept, so sparse similarity cannot stall the build). A followed user follows back with
 * probability `reciprocity`; follow-backs count as followers for later preferential picks. No
 * self-loops, no duplicate edges.
 *
 * The edge list is the attachment list: edge q's target is what position q holds, so a pick by
 * follower count is a uniform position below the current edge count. User t's draws are keyed by
 * (t, draw) and a follow-back by its position, so the edges are a function of the positions at which
 * each user's block of edges starts. Those follow from how many follows each user accepts: all it
 * wants, except when 16 tries in a row meet accounts it already follows (seen only among the first
 * ~2 x cap users). So the first users are drawn in order; the rest get their blocks planned as if
 * none came up short, are drawn in parallel (graph/kernels.ts `attachHomophilous`: a user whose
 * pick lands in a block not yet drawn draws that user first), and if one did come up short after
 * all, everyone after it is planned and drawn again from its real end. Same edges either way.
 */
import { foldRoom } from '../sim-core/csr.ts';
import type { Executor } from '../sim-core/exec.ts';
import { keyOf, streamOf, uniform } from '../sim-core/rng.ts';
import { sharedArray } from '../sim-core/table.ts';
import type { BlockEdgeList } from './edgeList.ts';
import { drawUser, kernels as GK, lastDrawShort, UNDRAWN, type HomophilousArgs } from './kernels.ts';

export interface HomophilousOptions {
  /** Mean number of accounts each user follows (before follow-backs). */
  meanFollowing: number;
  /** 0 = no homophily; 1 = a maximally dissimilar candidate is always rejected. */
  homophily: number;
  /** Share of picks by preferential attachment (by follower count); the rest are uniform. */
  preferential?: number;
  /** Probability that a followed account follows back. */
  reciprocity?: number;
  /** Per-user opinion in [-1, 1] and primary topic, used for similarity. */
  opinion: Float32Array;
  topic: Uint8Array;
  /** Per-user weight for how many accounts it follows (e.g. activity level); mean-normalised. */
  weight?: Float32Array;
}

/** How the threaded draw splits the users (tests shrink it to exercise it on small graphs). */
export interface HomophilousSplit {
  /** Users drawn in order before the threaded draw... */
  prefix: number;
  /** ...and on, up to `grow` x the last user that came up short. */
  grow: number;
  /** Users per chunk of the threaded draw. */
  chunk: number;
}

/**
 * Defaults: at 1M users (mean 45 follows, cap 900) users came up short only between 715 and 1518;
 * 16k users in order take ~0.3 s. Chunks of 1024 users (~45k edges) keep the two threads' current
 * blocks close, so few picks land in a block still being drawn.
 */
const SPLIT: HomophilousSplit = { prefix: 16_384, grow: 4, chunk: 1024 };

/**
 * The divisor s for which a user of weight w follows max(1, min(cap, m x w / s)) accounts on
 * average (what the rounding below gives) and the users average m: the weights' mean when few
 * users sit at 1 or at the cap, else adjusted (a heavy-tailed activity puts users at both), so the
 * mean following stays `meanFollowing`. Bisection on 1/s.
 */
function cappedWeightScale(weight: Float32Array, n: number, m: number, cap: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += weight[i];
  if (!(sum > 0) || m <= 1 || m >= cap) return sum > 0 ? sum / n : 1;
  const meanAt = (inv: number) => {
    let t = 0;
    for (let i = 0; i < n; i++) t += Math.max(1, Math.min(cap, m * weight[i] * inv));
    return t / n;
  };
  let lo = 0;
  let hi = n / sum;
  while (meanAt(hi) < m && hi < (n / sum) * 1e6) hi *= 2;
  for (let k = 0; k < 40; k++) {
    const mid = (lo + hi) / 2;
    if (meanAt(mid) < m) lo = mid;
    else hi = mid;
  }
  return 1 / hi;
}

/** The model's graph, drawn in user order on the calling thread. */
export function homophilousPreferential(n: number, seed: number, o: HomophilousOptions): BlockEdgeList {
  const b = new Build(n, seed, o);
  b.drawInOrder(n, 0);
  return b.edges();
}

/** homophilousPreferential with the users drawn on `exec`'s threads (the same edges). */
export async function homophilousPreferentialOn(exec: Executor, n: number, seed: number, o: HomophilousOptions, split: HomophilousSplit = SPLIT): Promise<BlockEdgeList> {
  const b = new Build(n, seed, o);
  b.drawInOrder(split.prefix, split.grow);
  while (b.next < n) {
    b.plan();
    const parts = await exec.run(GK.attachHomophilous, b.args, n - b.next, { chunkRows: split.chunk });
    // Users that came up short tend to come in runs: after one, the next ones go in order.
    if (b.settle(parts)) b.drawInOrder(b.next + split.prefix, split.grow);
  }
  return b.edges();
}

/** `a` itself when worker threads can read it, else a shared copy. */
function shared<T extends Float32Array | Uint8Array>(a: T): T {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const c = (a instanceof Float32Array ? sharedArray('f32', a.length) : sharedArray('u8', a.length)) as T;
  c.set(a);
  return c;
}

/** One generation: the plan (users' wants, block starts) and the edge arrays, filled user by user. */
class Build {
  readonly n: number;
  args: HomophilousArgs;
  /** The first user not drawn for good (all before it are final). */
  next = 1;
  constructor(n: number, seed: number, o: HomophilousOptions) {
    this.n = n;
    const { meanFollowing, homophily, opinion: Op, topic: Top } = o;
    if (!(Number.isInteger(n) && n >= 0)) throw new Error(`homophilousPreferential needs a whole n >= 0 (got ${n})`);
    if (Op.length < n || Top.length < n || (o.weight && o.weight.length < n)) {
      throw new Error(`homophilousPreferential needs opinion, topic (and weight) for all ${n} users`);
    }
    if (!(meanFollowing > 0)) throw new Error(`homophilousPreferential needs meanFollowing > 0 (got ${meanFollowing})`);
    if (!(homophily >= 0 && homophily <= 1)) throw new Error(`homophilousPreferential needs 0 <= homophily <= 1 (got ${homophily})`);
    const key = keyOf(seed, streamOf('graph.homophilous'), 0);
    const cap = Math.max(1, Math.round(meanFollowing * 20));
    const wMean = o.weight ? cappedWeightScale(o.weight, n, meanFollowing, cap) : 1;
    const want = sharedArray('i32', n);
    for (let t = 1; t < n; t++) {
      const w = o.weight ? o.weight[t] / wMean : 1;
      want[t] = Math.min(t, cap, Math.max(1, Math.round(meanFollowing * w + uniform(key, t, 0) - 0.5)));
    }
    const recip = o.reciprocity ?? 0.1;
    // Room for the users drawn in order; plan() sizes the arrays for the rest.
    const room = Math.ceil(n * meanFollowing * (1 + recip) * 0.05) + 16;
    this.args = {
      starts: sharedArray('f64', n + 1),
      want,
      opinion: shared(Op.subarray(0, n)),
      topic: shared(Top.subarray(0, n)),
      back: sharedArray('i32', (room + 31) >>> 5),
      dst: sharedArray('i32', room),
      done: sharedArray('u8', n),
      first: 1,
      key,
      kRecip: keyOf(seed, streamOf('graph.homophilous.reciprocity'), 0),
      pref: o.preferential ?? 0.8,
      recip,
      homophily,
    };
  }

  /** Draws users in order from `next` up to `upTo`, or `grow` x the last that came up short. */
  drawInOrder(upTo: number, grow: number): void {
    const a = this.args;
    const n = this.n;
    let lastShort = 0;
    let S = a.starts[this.next];
    let t = this.next;
    for (; t < n && (t < upTo || t < grow * lastShort); t++) {
      a.starts[t] = S;
      this.reserve(S, S + 2 * a.want[t]);
      clearBits(this.args.back, S, S + 2 * a.want[t]);
      S = drawUser(this.args, t, S);
      if (lastDrawShort()) lastShort = t;
      a.done[t] = 1;
    }
    this.next = t;
    a.starts[t] = S;
  }

  /**
   * Plans the blocks of users next.. as if each accepts all the follows it wants: a follow takes
   * the next position, and a follow-back follows it where the position's reciprocity draw says so.
   */
  plan(): void {
    const a = this.args;
    const { starts, want, kRecip, recip } = a;
    let q = starts[this.next];
    const from = q;
    for (let t = this.next; t < this.n; t++) {
      starts[t] = q;
      if (recip > 0) {
        for (let c = want[t]; c > 0; c--) if (uniform(kRecip, ++q) < recip) q++;
      } else q += want[t];
    }
    starts[this.n] = q;
    this.reserve(from, q, Math.ceil(q * foldRoom.fraction));
    this.args.dst.fill(UNDRAWN, from, q);
    clearBits(this.args.back, from, q);
    a.done.fill(0, this.next, this.n);
    this.args = { ...this.args, first: this.next };
  }

  /**
   * After a threaded draw: if some user came up short, those up to it are final and everyone after
   * it goes again from its block's real end (returns true); else all are final.
   */
  settle(parts: number[][]): boolean {
    let u = -1;
    let end = 0;
    for (const p of parts) if (p.length > 0 && (u < 0 || p[0] < u)) [u, end] = p;
    if (u < 0) {
      this.next = this.n;
      return false;
    }
    this.next = u + 1;
    this.args.starts[this.next] = end;
    return true;
  }

  /**
   * Grows the edge arrays to hold `need` positions, keeping the first `keep`; a new array gets
   * `spare` more positions, never touched here (the edges become the following rows in place, and
   * the platform's daily fold grows them into that room: platform/followFold.ts; untouched pages
   * cost no memory).
   */
  private reserve(keep: number, need: number, spare = 0): void {
    const a = this.args;
    if (need <= a.dst.length) return;
    const size = Math.ceil(Math.max(need + spare, Math.min(2 * a.dst.length, need * 1.25)));
    const dst = sharedArray('i32', size);
    const back = sharedArray('i32', (size + 31) >>> 5);
    dst.set(a.dst.subarray(0, keep));
    back.set(a.back.subarray(0, (keep + 31) >>> 5));
    this.args = { ...a, back, dst };
  }

  /** The edges: targets, and sources as the users' blocks with the follow-backs marked. */
  edges(): BlockEdgeList {
    const a = this.args;
    const m = this.n > 0 ? a.starts[this.n] : 0;
    return { nodes: this.n, src: { starts: a.starts, back: a.back }, dst: a.dst.subarray(0, m), directed: true };
  }
}

/** Clears bits [from, to) of a bitset (32 per word), keeping the others of the words at the ends. */
function clearBits(bits: Int32Array, from: number, to: number): void {
  if (to <= from) return;
  const w0 = from >>> 5;
  const w1 = (to - 1) >>> 5;
  const head = (1 << (from & 31)) - 1; // bits below `from` in its word: kept
  const tail = (to & 31) === 0 ? 0 : ~0 << (to & 31); // bits from `to` on in its word: kept
  if (w0 === w1) {
    bits[w0] &= head | tail;
    return;
  }
  bits[w0] &= head;
  bits.fill(0, w0 + 1, w1);
  bits[w1] &= tail;
}
