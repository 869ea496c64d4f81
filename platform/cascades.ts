import type { Executor } from '../sim-core/exec.ts';
import { StateTable } from '../sim-core/stateTable.ts';
import { sharedArray } from '../sim-core/table.ts';
import { DEPTH, E_BASE, E_CAP, ENT, HEAD, LIVE, MARKED, MAX_BREADTH, REC, SCALE, SHARDS, SIZE, TAKEN, USED, findTrack, joinTrack, kernels as K, liveEntries, markTrack, moveShard, pruneShard, shardOf, trackHas, type Shards } from './cascadeShards.ts';

/**
 * Tree statistics as OASIS measures cascades: for a root post and the posts of its tree at any
 * depth, the scale is the number of unique users taking part (the root's author included), the
 * depth is the largest depth reached (root = 0), and the max breadth is the largest number of posts
 * at any one depth. The platform keeps two kinds of tree (newPost.ts): reshare cascades (reposts
 * and quotes, as retweet cascades are measured) and conversations (comments).
 */
export interface CascadeStats {
  scale: number;
  depth: number;
  maxBreadth: number;
  /** Posts in the cascade, root included. */
  size: number;
}

/** Statistics of one cascade from its posts' depths and authors (root included, depth 0). */
export function cascadeStats(depths: ArrayLike<number>, authors: ArrayLike<number>): CascadeStats {
  const users = new Set<number>();
  const breadth: number[] = [];
  let depth = 0;
  for (let i = 0; i < depths.length; i++) {
    users.add(authors[i]);
    breadth[depths[i]] = (breadth[depths[i]] ?? 0) + 1;
    if (depths[i] > depth) depth = depths[i];
  }
  let maxBreadth = 0;
  for (const b of breadth) if ((b ?? 0) > maxBreadth) maxBreadth = b;
  return { scale: users.size, depth, maxBreadth, size: depths.length };
}

/** Reshares or comments to record in their trees, in walk order (apply's walk queues them). */
export class Joins {
  n = 0;
  root = new Int32Array(1024);
  rootAuthor = new Int32Array(1024);
  user = new Int32Array(1024);
  depth = new Int32Array(1024);
  /** Bucketed by shard for the kernel (joinAll). */
  start = sharedArray('i32', SHARDS + 1);
  byShard = { root: sharedArray('i32', 0), rootAuthor: sharedArray('i32', 0), user: sharedArray('i32', 0), depth: sharedArray('i32', 0) };

  push(root: number, rootAuthor: number, user: number, depth: number): void {
    if (this.n === this.root.length) {
      for (const f of ['root', 'rootAuthor', 'user', 'depth'] as const) {
        const a = new Int32Array(this.n * 2);
        a.set(this[f]);
        this[f] = a;
      }
    }
    const i = this.n++;
    this.root[i] = root;
    this.rootAuthor[i] = rootAuthor;
    this.user[i] = user;
    this.depth[i] = depth;
  }
}

/** Shards per chunk of the tracker's kernels: 16 chunks, for the threads to share. */
const CHUNK_SHARDS = SHARDS / 16;
/** Entry slots of a new shard. */
const FIRST_ENTRIES = 128;

/** A head for new shards: no records, FIRST_ENTRIES entry slots each. */
function firstHead(): Int32Array {
  const head = sharedArray('i32', SHARDS * HEAD);
  for (let p = 0; p < SHARDS; p++) {
    head[p * HEAD + E_BASE] = p * FIRST_ENTRIES;
    head[p * HEAD + E_CAP] = FIRST_ENTRIES;
  }
  return head;
}

/**
 * Incremental version for a running simulation: cascades are opened lazily at their first reshare
 * (with the root's author at depth 0) and forgotten once idle for longer than the caller's window.
 *
 * The tracks live in typed arrays split into shards by root (cascadeShards.ts), not in a Map of
 * objects, so that a step's joins and the prune run on the threads, a shard at a time: at 1M
 * agents apply's walk spent half its time adding to the Map (~9k joins a step at ~1 us each, each
 * a few cache misses), on one thread. The arrays are plain data, so a checkpoint saves them as
 * they are. Its fields are the `Shards` the kernels take.
 */
export class CascadeTracker extends StateTable implements Shards {
  capI = 64;
  capR = 32;
  index = sharedArray('i32', SHARDS * this.capI);
  recs = sharedArray('i32', SHARDS * this.capR * REC);
  entries = sharedArray('i32', SHARDS * FIRST_ENTRIES * ENT);
  head = firstHead();
  free = sharedArray('i32', SHARDS * this.capR);
  marked = sharedArray('i32', SHARDS * this.capR);
  private epoch = 1;

  /** Records a post at `depth` by `user` in the cascade of `root` (authored by rootAuthor). */
  add(root: number, rootAuthor: number, user: number, depth: number, step: number): void {
    const p = shardOf(root);
    if (!this.fits(p, 1)) {
      const counts = new Int32Array(SHARDS);
      counts[p] = 1;
      this.relayoutHere(counts);
    }
    joinTrack(this, p, root, rootAuthor, user, depth, step, this.epoch);
  }

  /** Records joins[0, n) (as `add` would one by one) on the threads, a shard at a time; empties the list. */
  async joinAll(exec: Executor, joins: Joins, step: number): Promise<void> {
    const n = joins.n;
    if (n === 0) return;
    const { start } = joins;
    const counts = new Int32Array(SHARDS);
    for (let j = 0; j < n; j++) counts[shardOf(joins.root[j])]++;
    await this.reserve(counts, exec);
    start[0] = 0;
    for (let p = 0; p < SHARDS; p++) start[p + 1] = start[p] + counts[p];
    let b = joins.byShard;
    if (b.root.length < n) {
      const cap = Math.ceil(n * 1.25);
      b = joins.byShard = { root: sharedArray('i32', cap), rootAuthor: sharedArray('i32', cap), user: sharedArray('i32', cap), depth: sharedArray('i32', cap) };
    }
    const at = start.slice(0, SHARDS);
    for (let j = 0; j < n; j++) {
      const i = at[shardOf(joins.root[j])]++;
      b.root[i] = joins.root[j];
      b.rootAuthor[i] = joins.rootAuthor[j];
      b.user[i] = joins.user[j];
      b.depth[i] = joins.depth[j];
    }
    joins.n = 0;
    await exec.run(K.joinTracks, { start, ...b, ...this.arrays(), step, epoch: this.epoch }, SHARDS, { chunkRows: CHUNK_SHARDS });
  }

  /** Whether `user` is in the tracked cascade of `root` (its root's author counts). */
  has(root: number, user: number): boolean {
    return trackHas(this, root, user);
  }

  stats(root: number): CascadeStats | undefined {
    const p = shardOf(root);
    const k = findTrack(this, p, root);
    if (k < 0) return undefined;
    const o = (p * this.capR + k) * REC;
    const R = this.recs;
    return { scale: R[o + SCALE], depth: R[o + DEPTH], maxBreadth: R[o + MAX_BREADTH], size: R[o + SIZE] };
  }

  /** Roots changed since the last call, in increasing root order, with their current statistics. */
  drainChanged(): Array<[number, CascadeStats]> {
    const roots: number[] = [];
    for (let p = 0; p < SHARDS; p++) {
      const o = p * this.capR;
      for (let i = 0; i < this.head[p * HEAD + MARKED]; i++) roots.push(this.marked[o + i]);
      this.head[p * HEAD + MARKED] = 0;
    }
    this.epoch++;
    return roots.sort((a, b) => a - b).map((r) => [r, this.stats(r)!]);
  }

  /**
   * Forgets cascades with no activity since `step` (their last cascades.arrow row is final), on the
   * threads with an executor. An aggregate without a root post (negative key: the scenario's story)
   * is kept, so the story_* metrics report its totals for the whole run instead of dropping to 0
   * once it goes quiet. Call it after drainChanged, not between a change and the drain.
   */
  async prune(step: number, exec?: Executor): Promise<void> {
    if (exec) await exec.run(K.pruneTracks, { ...this.arrays(), step }, SHARDS, { chunkRows: CHUNK_SHARDS });
    else for (let p = 0; p < SHARDS; p++) pruneShard(this, p, step);
  }

  get size(): number {
    let n = 0;
    for (let p = 0; p < SHARDS; p++) n += this.head[p * HEAD + LIVE];
    return n;
  }

  private arrays() {
    const { index, recs, entries, head, free, marked, capI, capR } = this;
    return { index, recs, entries, head, free, marked, capI, capR };
  }

  /**
   * Room for counts[p] joins in each shard p: each may open a record (an index slot, a record and a
   * mark) and take three entries (the root's author's, the user's and a breadth). Otherwise every
   * shard moves to arrays with four times the room the fullest shard needs, its stale entries left out.
   */
  private async reserve(counts: Int32Array, exec: Executor): Promise<void> {
    for (let p = 0; p < SHARDS; p++) {
      if (!this.fits(p, counts[p])) return this.relayout(counts, exec);
    }
  }

  private fits(p: number, J: number): boolean {
    const h = p * HEAD;
    const H = this.head;
    return (H[h + LIVE] + J) * 2 <= this.capI && H[h + USED] + J <= this.capR && H[h + MARKED] + J <= this.capR && (H[h + TAKEN] + 3 * J) * 2 <= H[h + E_CAP];
  }

  /**
   * Moves every shard to arrays with room for counts[p] more joins in shard p (grown), on the
   * threads with an executor (at 10M agents a move is ~100 MB, and it was most of a step).
   */
  private async relayout(counts: Int32Array, exec: Executor): Promise<void> {
    const { recs, entries, head, free, marked, capR } = this;
    const live = (await exec.run(K.countLiveEntries, { recs, entries, head, capR }, SHARDS, { chunkRows: CHUNK_SHARDS })).flat();
    const next = this.grown(counts, live);
    // The new arrays' pages are faulted in on this thread first: faulting them in from the kernel
    // on two threads measured about twice as slow as filling them here and moving the shards.
    for (const a of [next.index, next.recs, next.entries, next.free, next.marked]) a.fill(0);
    await exec.run(K.moveShards, { ...next, oldRecs: recs, oldEntries: entries, oldHead: head, oldFree: free, oldMarked: marked, oldCapR: capR }, SHARDS, { chunkRows: CHUNK_SHARDS });
    Object.assign(this, next);
  }

  /** relayout on this thread. */
  private relayoutHere(counts: Int32Array): void {
    const next = this.grown(counts, Array.from({ length: SHARDS }, (_, p) => liveEntries(this, p)));
    for (let p = 0; p < SHARDS; p++) moveShard(this, next, p);
    Object.assign(this, next);
  }

  /**
   * Empty arrays with room for counts[p] more joins in shard p beside `live[p]` live entries: four
   * times what is needed (the index and records: what the fullest shard needs, for every shard;
   * the entries shard by shard). A new head with the new entry slots.
   */
  private grown(counts: Int32Array, live: readonly number[]): Shards {
    const { capI, capR, head: H } = this;
    const pow2 = (x: number, min: number) => {
      let c = min;
      while (c < x) c *= 2;
      return c;
    };
    let needI = 0;
    let needR = 0;
    const head = sharedArray('i32', H.length);
    head.set(H);
    let slots = 0;
    for (let p = 0; p < SHARDS; p++) {
      const J = counts[p];
      const h = p * HEAD;
      needI = Math.max(needI, H[h + LIVE] + J);
      needR = Math.max(needR, H[h + USED] + J, H[h + MARKED] + J);
      const needE = live[p] + 3 * J;
      head[h + E_BASE] = slots;
      // Every shard to a quarter full at most, not only the one that lacked room: shards grow
      // alike, and at 10M one of the 64 then lacked room at every step (a relayout a step).
      head[h + E_CAP] = needE * 4 <= H[h + E_CAP] ? H[h + E_CAP] : pow2(needE * 4, FIRST_ENTRIES);
      slots += head[h + E_CAP];
    }
    const nI = needI * 2 <= capI ? capI : pow2(needI * 4, capI);
    const nR = needR <= capR ? capR : pow2(needR * 2, capR);
    return {
      index: sharedArray('i32', SHARDS * nI),
      recs: sharedArray('i32', SHARDS * nR * REC),
      entries: sharedArray('i32', slots * ENT),
      head,
      free: sharedArray('i32', SHARDS * nR),
      marked: sharedArray('i32', SHARDS * nR),
      capI: nI,
      capR: nR,
    };
  }
}
