/**
 * Posts: a growable columnar table. A post's id is its creation rank (ids never change); row r holds
 * post `base + r`. Rows [first, count) are the posts still inside the recommendation window. Posts
 * that leave the window can no longer be shown, liked or reposted, so their counters are final:
 * `retire` hands them to the caller (which appends them to posts.arrow) and they leave the live
 * rows; their memory is reused once enough have gone (`compact`), which keeps memory bounded on
 * long runs.
 */
import type { ColumnData } from '../sim-core/io/arrowFile.ts';
import { InputError } from '../sim-core/errors.ts';
import { sharedArray, type ARRAY_OF, type TypedArray } from '../sim-core/table.ts';
import { StateTable, type Written } from '../sim-core/stateTable.ts';
import { IndexList } from '../sim-core/indexList.ts';

export const POST_KINDS = ['original', 'repost', 'quote', 'comment'] as const;
export const KIND = { original: 0, repost: 1, quote: 2, comment: 3 } as const;
/**
 * Bit flags of `flags`: the scenario's news story, a fact-check label (the `label` intervention;
 * reposts and quotes of a labelled post carry it too), many reports, removal (the `remove` and
 * `suspend` interventions: the post leaves every feed), and a shown Community Note (platform/notes/:
 * set while one of the post's notes is rated helpful).
 */
export const FLAG = { story: 1, factCheck: 2, reported: 4, removed: 8, noted: 16 } as const;
/** `veracity` codes: organic posts are unrated; injected posts say whether they are true or false. */
export const VERACITY = ['unrated', 'true', 'false'] as const;

/**
 * The largest post id, 2^31 - 1: ids are Int32 wherever they are stored (posts.arrow's id, parent
 * and root, feeds, the impression ring, each author's latest post, events.arrow, cascades.arrow).
 * A run that would need more posts fails instead of wrapping to negative ids.
 */
export const MAX_POST_ID = 0x7fffffff;
/** The largest reshare depth, 2^16 - 1 (posts.arrow's depth is u16). */
export const MAX_DEPTH = 0xffff;

/**
 * Throws an InputError when a new post would get an id past MAX_POST_ID or a depth past MAX_DEPTH:
 * the typed columns would otherwise wrap silently (a negative id reads as "none" everywhere).
 */
export function checkNewPost(id: number, depth: number): void {
  if (id > MAX_POST_ID) {
    throw new InputError(
      `too many posts: post ${id + 1} would need id ${id}, above ${MAX_POST_ID} (2^31 - 1), the largest id posts.arrow and the feeds store; run fewer --steps or --agents, or lower the posting rates (--set platform.behaviour.post=0.5, also repost, quote, comment)`,
    );
  }
  if (depth > MAX_DEPTH) {
    throw new InputError(`reshare depth ${depth} is above ${MAX_DEPTH}, the largest posts.arrow's u16 depth column stores (a reshare chain runs one level per step at most); run fewer --steps`);
  }
}

/** The post table's columns besides the topic, with their types (also the writePosts kernel's, postBatch.ts). */
export const SCALAR_COLUMNS = {
  author: 'i32',
  step: 'i32',
  kind: 'u8',
  parent: 'i32',
  root: 'i32',
  /** Author of the root post, so a muted author's content is filtered through reposts too. */
  root_author: 'i32',
  depth: 'u16',
  stance: 'f32',
  cluster: 'u8',
  flags: 'u8',
  /** VERACITY code; reposts and quotes inherit it. */
  veracity: 'u8',
  /** Novelty in standard deviations above ordinary content (organic posts: 0); reposts and quotes inherit it. */
  novelty: 'f32',
  /** Ranking score multiplier (1; the `downrank` intervention lowers it); reposts and quotes inherit it. */
  rank: 'f32',
  /** Treatment group of post-level random assignment (index into PostTable.groups; 0: none). */
  group: 'u8',
  /** The artificial vote a treatment gave at creation (+1, -1 or 0), shown in the score, not in likes/dislikes. */
  treat_vote: 'i8',
  /** Injected-story tag (index into PostTable.tags; 0: none); reposts and quotes inherit it. */
  tag: 'u8',
  likes: 'i32',
  dislikes: 'i32',
  /**
   * Of likes and dislikes, those by accounts whose opinion was below 0 when they voted (the right
   * side's are the rest): the bridging ranker's per-side approval (recsys/rankers/bridging.ts).
   * Not in posts.arrow (its columns are listed in `columns`), so runs keep their files' bytes.
   */
  likes_left: 'i32',
  dislikes_left: 'i32',
  reposts: 'i32',
  quotes: 'i32',
  comments: 'i32',
  reports: 'i32',
  impressions: 'i32',
  /** Previous post by the same author (-1: none), for in-network candidate walks. */
  prev_by_author: 'i32',
} as const;

export type PostColumn = keyof typeof SCALAR_COLUMNS;
/** The post table's columns, each its own array type (an i32 column is an Int32Array). */
export type PostColumns = { [K in PostColumn]: InstanceType<(typeof ARRAY_OF)[(typeof SCALAR_COLUMNS)[K]]> };

/**
 * The counters kernels add to (apply's `impressions` and `countVotes`, atomic adds, in the live
 * rows): a device executor holds them there between steps, and the host reads back the rows it
 * retires (phases.ts maintain); a compaction or growth is repeated on the device's copy
 * (PostTable.announceChanges). The host only zeroes a new post's.
 */
export const COUNTED_COLUMNS = ['impressions', 'likes', 'dislikes', 'likes_left', 'dislikes_left'] as const;

/** A post to add; content fields a reshare inherits (veracity, novelty, tag: 0; rank: 1) are optional. */
export interface NewPost {
  author: number;
  step: number;
  kind: number;
  parent: number;
  root: number;
  rootAuthor: number;
  depth: number;
  stance: number;
  cluster: number;
  flags: number;
  prevByAuthor: number;
  veracity?: number;
  novelty?: number;
  tag?: number;
  rank?: number;
}

/**
 * Retired rows are moved out (the live rows copied to the front) once they number a quarter of the
 * live rows: copying the window at every step cost 83 ms of a 0.77 s step at 1M agents (2.3M rows
 * of ~176 bytes with the feed's records), once every ~10 steps costs a tenth of that, for ~25% more
 * rows in memory.
 */
const COMPACT_AT = 4;

/** A post table's arrays. */
export interface PostArrays {
  cols: PostColumns;
  topic: Float32Array;
}

/**
 * A change of the table's rows besides writes: a compaction moved rows [from, from + rows) of
 * `at` to the front, or a growth copied rows [0, rows) of `grow` into the larger `at`.
 */
export type TableMove = { at: PostArrays; from: number; rows: number; grow?: undefined } | { at: PostArrays; grow: PostArrays; rows: number };

/**
 * Post columns the host changes after a post is created: counters (apply), flags (apply,
 * interventions), rank (downrank). Impressions, likes and dislikes (and their left sides) are
 * counted by kernels (COUNTED_COLUMNS), which the executor sees.
 */
const MUTABLE_POST_COLUMNS = new Set<string>(['reposts', 'quotes', 'comments', 'reports', 'flags', 'rank']);

/** announceChanges' rows of the posts written. */
const rowsWritten = new IndexList();

export class PostTable extends StateTable {
  readonly dim: number;
  /** Id of row 0. */
  base = 0;
  /** First live row: rows before it are retired (already handed out, kept until `compact`). */
  first = 0;
  /** Rows in use, live and retired: live rows are [first, count). */
  count = 0;
  capacity: number;
  cols: PostColumns;
  /** count x dim topic vectors. */
  topic: Float32Array;
  /** Names of the `group` codes ('' = no treatment) and the `tag` codes ('' = none), fixed at set-up. */
  groups: readonly string[] = [''];
  tags: readonly string[] = [''];
  /** Latest post id per author (-1: none): set-up sizes it to the users (platform/state.ts). */
  latest = new Int32Array(0);
  /** Oldest step whose posts are still candidates (the window; maintain moves it). */
  minStep = 0;
  /** Rows [changedFrom, count) were added since the last takeChanged() (moves are in `moves`). */
  private changedFrom = 0;
  /** The compactions and growths since the last takeChanged(), in order (for a device's copies). */
  private moves: TableMove[] = [];
  /**
   * Set when `reserve` moved the columns to larger buffers: the old ones (137 B a row) stay
   * allocated until a collection finds them, so the caller releases them (`releaseArrays`) at its
   * next async point and clears this.
   */
  grew = false;

  /**
   * `firstId` is the id the first post gets: 0 in a run (ids are creation ranks); tests start near
   * MAX_POST_ID to reach the id limit without creating 2^31 posts.
   */
  constructor(dim: number, capacity = 1 << 12, firstId = 0) {
    super();
    this.dim = dim;
    this.base = firstId;
    this.capacity = capacity;
    this.cols = PostTable.alloc(capacity);
    this.topic = sharedArray('f32', capacity * dim);
  }

  private static alloc(capacity: number) {
    // Built in one go: an object given its 24 properties one assignment at a time is kept by V8 as
    // a hash table (past ~16 properties), and every `cols.likes` in apply was a lookup in it.
    return Object.fromEntries(Object.entries(SCALAR_COLUMNS).map(([name, type]) => [name, sharedArray(type, capacity)])) as PostColumns;
  }

  /** Next id to be assigned. */
  get nextId(): number {
    return this.base + this.count;
  }

  /** Live rows: posts in the window. */
  get live(): number {
    return this.count - this.first;
  }

  /**
   * What changed since the last call, for an executor that keeps a device copy of the columns
   * (announceChanges): the compactions and growths in order (`moves`: the
   * device repeats them on its copy), then the first row added (`from`): rows before it hold what
   * the moves left there, except the counters, flags and rank of live posts, which change after
   * creation.
   */
  takeChanged(): { moves: TableMove[]; from: number } {
    const from = this.addedFrom;
    this.changedFrom = this.count;
    return { moves: this.takeMoves(), from };
  }

  /** The first row added since the last takeChanged(). */
  get addedFrom(): number {
    return Math.min(this.changedFrom, this.count);
  }

  /** The compactions and growths since the last call (or takeChanged), in order; the rows added stay counted. */
  takeMoves(): TableMove[] {
    const moves = this.moves;
    this.moves = [];
    return moves;
  }

  /**
   * Tells an executor that keeps device copies what host code changed since the last call: the
   * compactions and growths (repeated on the device: repeatMoves), the rows added (but the topics
   * of the last `kernelTopics` of them, which a kernel wrote on the device: postBatch.ts), and of
   * the older live rows the changing columns (MUTABLE_POST_COLUMNS) at the post ids in `posts`
   * ('any': any live row). Taken on every executor: a growth's record holds the old arrays.
   */
  announceChanges(posts: Written, kernelTopics = 0): void {
    const { moves, from } = this.takeChanged();
    if (!this.onDevice) return;
    this.repeatMoves(moves);
    // The posts written, by id, as rows now (those still live and older than the rows added).
    if (posts !== 'any') {
      rowsWritten.clear();
      for (let k = 0; k < posts.n; k++) {
        const r = posts.at[k] - this.base;
        if (r >= this.first && r < from) rowsWritten.push(r);
      }
      posts = rowsWritten;
    }
    for (const [name, col] of Object.entries(this.cols)) {
      if (this.count > from) this.wrote(col, from, this.count);
      if (MUTABLE_POST_COLUMNS.has(name)) this.wroteWhere(col, posts, this.first, Math.min(from, this.count));
    }
    // Topics of the rows a kernel wrote are the device's, and those before them were announced
    // before it ran.
    if (!kernelTopics && this.count > from) this.wrote(this.topic, from * this.dim, this.count * this.dim);
  }

  /**
   * The compactions and growths since they were last taken, repeated on a device executor's
   * copies as the host made them (a compaction at 10M agents moves ~23M rows, 2.5 GB of columns
   * that would otherwise go up again). announceChanges calls it; so does a kernel that reads the
   * table's rows on the device between a move and that call (postBatch.ts).
   */
  repeatMoves(moves: TableMove[] = this.takeMoves()): void {
    if (!this.onDevice) return;
    const D = this.dim;
    for (const m of moves) {
      const names = Object.keys(m.at.cols) as PostColumn[];
      if (m.grow) {
        for (const k of names) this.copied(m.at.cols[k], m.grow.cols[k], m.rows);
        this.copied(m.at.topic, m.grow.topic, m.rows * D);
      } else {
        for (const k of names) this.moved(m.at.cols[k], m.from, 0, m.rows);
        this.moved(m.at.topic, m.from * D, 0, m.rows * D);
      }
    }
  }

  /** Row of a live post's id, or -1. */
  rowOf(id: number): number {
    const r = id - this.base;
    return r >= this.first && r < this.count ? r : -1;
  }

  /**
   * Makes room for `extra` more rows: retired rows are reused first, then the buffers double (new
   * shared buffers; old views become stale).
   */
  reserve(extra: number): void {
    if (this.count + extra > this.capacity) this.compact();
    const need = this.count + extra;
    if (need <= this.capacity) return;
    let cap = this.capacity;
    while (cap < need) cap *= 2;
    const cols = PostTable.alloc(cap);
    for (const k of Object.keys(cols) as PostColumn[]) cols[k].set(this.cols[k].subarray(0, this.count));
    const topic = sharedArray('f32', cap * this.dim);
    topic.set(this.topic.subarray(0, this.count * this.dim));
    this.moves.push({ at: { cols, topic }, grow: { cols: this.cols, topic: this.topic }, rows: this.count });
    this.cols = cols;
    this.topic = topic;
    this.capacity = cap;
    this.grew = true;
  }

  /**
   * Appends one post; returns its id. Counters start at 0. Throws (checkNewPost), before changing
   * anything, when the id would pass MAX_POST_ID or the depth MAX_DEPTH.
   */
  add(p: NewPost, topic: ArrayLike<number>, topicOffset = 0): number {
    const id = this.base + this.count;
    checkNewPost(id, p.depth);
    this.reserve(1);
    const r = this.count++;
    const c = this.cols;
    c.author[r] = p.author;
    c.step[r] = p.step;
    c.kind[r] = p.kind;
    c.parent[r] = p.parent;
    c.root[r] = p.root < 0 ? this.base + r : p.root;
    c.root_author[r] = p.root < 0 ? p.author : p.rootAuthor;
    c.depth[r] = p.depth;
    c.stance[r] = p.stance;
    c.cluster[r] = p.cluster;
    c.flags[r] = p.flags;
    c.veracity[r] = p.veracity ?? 0;
    c.novelty[r] = p.novelty ?? 0;
    c.rank[r] = p.rank ?? 1;
    c.group[r] = 0;
    c.treat_vote[r] = 0;
    c.tag[r] = p.tag ?? 0;
    c.prev_by_author[r] = p.prevByAuthor;
    c.likes[r] = 0;
    c.dislikes[r] = 0;
    c.likes_left[r] = 0;
    c.dislikes_left[r] = 0;
    c.reposts[r] = 0;
    c.quotes[r] = 0;
    c.comments[r] = 0;
    c.reports[r] = 0;
    c.impressions[r] = 0;
    const D = this.dim;
    for (let d = 0; d < D; d++) this.topic[r * D + d] = topic[topicOffset + d];
    return id;
  }

  /**
   * Appends `n` rows for the caller to fill whole (platform/postBatch.ts writes them on the
   * threads); returns the first. The caller has checked their ids and depths (checkNewPost).
   */
  appendRows(n: number): number {
    this.reserve(n);
    const r = this.count;
    this.count += n;
    return r;
  }

  /** The first row created at or after `step` (live rows are in creation order; at least `first`). */
  rowsBefore(step: number): number {
    const S = this.cols.step;
    let lo = this.first;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (S[mid] < step) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Arrow columns for rows [from, from + rows) (the posts.arrow schema). */
  columns(rows: number, from = this.first): ColumnData[] {
    const c = this.cols;
    const id = sharedArray('i32', rows);
    for (let r = 0; r < rows; r++) id[r] = this.base + from + r;
    const at = (v: TypedArray) => v.subarray(from, from + rows);
    const col = (name: PostColumn, type: ColumnData['type']): ColumnData => ({ name, type, values: at(c[name]) });
    return [
      { name: 'id', type: 'i32', values: id },
      col('author', 'i32'),
      col('step', 'i32'),
      { name: 'kind', type: 'u8', values: at(c.kind), dictionary: POST_KINDS },
      col('parent', 'i32'),
      col('root', 'i32'),
      col('root_author', 'i32'),
      col('depth', 'u16'),
      col('stance', 'f32'),
      col('cluster', 'u8'),
      col('flags', 'u8'),
      { name: 'veracity', type: 'u8', values: at(c.veracity), dictionary: VERACITY },
      col('novelty', 'f32'),
      col('rank', 'f32'),
      { name: 'group', type: 'u8', values: at(c.group), dictionary: this.groups },
      col('treat_vote', 'i8'),
      { name: 'tag', type: 'u8', values: at(c.tag), dictionary: this.tags },
      col('likes', 'i32'),
      col('dislikes', 'i32'),
      col('reposts', 'i32'),
      col('quotes', 'i32'),
      col('comments', 'i32'),
      col('reports', 'i32'),
      col('impressions', 'i32'),
      { name: 'topic', type: 'f32', values: this.topic.subarray(from * this.dim, (from + rows) * this.dim), width: this.dim },
    ];
  }

  /**
   * Retires the live rows before row `end` (posts that left the window) after `sink` has taken
   * their columns (synchronously: the rows are reused later). Ids are unchanged.
   */
  retire(end: number, sink: (cols: ColumnData[], rows: number) => void): void {
    const rows = end - this.first;
    if (rows <= 0) return;
    sink(this.columns(rows), rows);
    this.first = end;
    if (this.first * COMPACT_AT >= this.live) this.compact();
  }

  /**
   * Moves the live rows to the front, dropping the retired ones; ids are unchanged. The columns
   * stay the same objects: views from a moving head row instead (tried, and measured) gave every
   * kernel new arrays each step, which cost the workers more than the copy.
   */
  compact(): void {
    const f = this.first;
    if (f === 0) return;
    for (const k of Object.keys(this.cols) as PostColumn[]) this.cols[k].copyWithin(0, f, this.count);
    this.topic.copyWithin(0, f * this.dim, this.count * this.dim);
    this.moves.push({ at: { cols: this.cols, topic: this.topic }, from: f, rows: this.count - f });
    this.count -= f;
    this.base += f;
    this.first = 0;
    this.changedFrom = Math.max(0, this.changedFrom - f);
  }
}
