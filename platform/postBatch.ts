/**
 * The posts a step's apply phase creates, written to the post table on the threads. Apply walks
 * the actions in user order on the main thread (ids, cascades and follows depend on that order);
 * for each new post it queues only what that walk decides (author, kind, parent, tree, stance, the
 * author's previous post), and `writePosts` then fills the rows side by side (the 24 columns) and
 * `writeTopics` their topics (on a device executor, on the device: postBatch.wgsl.ts), a reshare's
 * or comment's content copied from its parent (as addPost does one post at a time, newPost.ts).
 * At 10M agents a step makes ~620k posts.
 */
import type { Executor } from '../sim-core/exec.ts';
import { kernel, kernelList } from '../sim-core/kernel.ts';
import { writeTopicsGpu } from './postBatch.wgsl.ts';
import { uniform } from '../sim-core/rng.ts';
import { sharedArray } from '../sim-core/table.ts';
import { checkNewPost, FLAG, KIND, SCALAR_COLUMNS } from './posts.ts';
import type { SocialState } from './state.ts';

/**
 * The columns writePosts fills: all but the counters kernels add to (COUNTED_COLUMNS), which a
 * device executor may hold, so that a call on the CPU does not read them back; write() zeroes them.
 */
const { impressions: _i, likes: _l, dislikes: _d, likes_left: _ll, dislikes_left: _dl, ...WRITTEN_COLUMNS } = SCALAR_COLUMNS;

/**
 * Rows [row0 + start, row0 + end) of the post table from queued posts [start, end), but their
 * topics (writeTopics). A post with a parent (id >= 0; a live row) takes its parent's cluster; a
 * repost or quote also its veracity, novelty, tag, rank and story and fact-check flags, a comment
 * the story flag only. An original post takes the cluster of row `src` of postContent's output.
 */
const writePosts = kernel(
  {
    reads: {
      newAuthor: 'i32',
      newKind: 'u8',
      newParent: 'i32',
      newRoot: 'i32',
      newRootAuthor: 'i32',
      newDepth: 'i32',
      newStance: 'f32',
      newSrc: 'i32',
      newPrev: 'i32',
      srcCluster: 'u8',
    },
    writes: WRITTEN_COLUMNS,
    params: ['row0', 'base', 'stepNow'],
  },
  (a, start, end): void => {
    const { newAuthor, newKind, newParent, newRoot, newRootAuthor, newDepth, newStance, newSrc, newPrev, srcCluster } = a;
    const { author, kind, parent, root, root_author, depth, stance, cluster, flags, veracity, novelty, rank, tag } = a;
    const { row0, base, stepNow } = a;
    for (let i = start; i < end; i++) {
      const r = row0 + i;
      const k = newKind[i];
      const pid = newParent[i];
      const pr = pid >= 0 ? pid - base : -1;
      const content = pr >= 0 && (k === KIND.repost || k === KIND.quote);
      author[r] = newAuthor[i];
      a.step[r] = stepNow;
      kind[r] = k;
      parent[r] = pid;
      root[r] = newRoot[i] < 0 ? base + r : newRoot[i];
      root_author[r] = newRoot[i] < 0 ? newAuthor[i] : newRootAuthor[i];
      depth[r] = newDepth[i];
      stance[r] = newStance[i];
      flags[r] = pr >= 0 ? flags[pr] & (content ? FLAG.story | FLAG.factCheck : FLAG.story) : 0;
      veracity[r] = content ? veracity[pr] : 0;
      novelty[r] = content ? novelty[pr] : 0;
      rank[r] = content ? rank[pr] : 1;
      tag[r] = content ? tag[pr] : 0;
      a.group[r] = 0;
      a.treat_vote[r] = 0;
      a.prev_by_author[r] = newPrev[i];
      a.reposts[r] = 0;
      a.quotes[r] = 0;
      a.comments[r] = 0;
      a.reports[r] = 0;
      cluster[r] = pr >= 0 ? cluster[pr] : srcCluster[newSrc[i]];
    }
  },
);

/**
 * The topics of rows [row0 + start, row0 + end) of the post table from queued posts [start, end):
 * a post with a parent (id >= 0; a live row, older than row0) takes its parent's topic, an original
 * post row `src` of postContent's output. A kernel of its own so that on a device executor the
 * topics stay there (postBatch.wgsl.ts): postContent's output need not come back, nor the new rows
 * go up (at 10M agents ~40 MB each way a step).
 */
const writeTopics = kernel(
  {
    reads: { newParent: 'i32', newSrc: 'i32', srcTopic: 'f32' },
    writes: { topic: 'f32' },
    params: ['row0', 'base', 'dim'],
  },
  (a, start, end): void => {
    const { newParent, newSrc, srcTopic, topic, row0, base, dim: D } = a;
    for (let i = start; i < end; i++) {
      const pid = newParent[i];
      const from = pid >= 0 ? topic : srcTopic;
      const off = pid >= 0 ? (pid - base) * D : newSrc[i] * D;
      const to = (row0 + i) * D;
      for (let d = 0; d < D; d++) topic[to + d] = from[off + d];
    }
  },
  writeTopicsGpu,
);

export const kernels = kernelList(import.meta.url, { writePosts, writeTopics });

/** Posts queued in creation order, to be written by `write`. */
export class PostBatch {
  n = 0;
  private cap = 0;
  author = sharedArray('i32', 0);
  kind = sharedArray('u8', 0);
  parent = sharedArray('i32', 0);
  root = sharedArray('i32', 0);
  rootAuthor = sharedArray('i32', 0);
  depth = sharedArray('i32', 0);
  stance = sharedArray('f32', 0);
  src = sharedArray('i32', 0);
  prev = sharedArray('i32', 0);

  /**
   * Queues a post by `author` and returns its id (`s.posts.nextId` counts rows already in the
   * table; nothing else adds posts until `write`). `parent` is a live post's id or -1; `root` -1
   * for a post that roots its own tree (rootAuthor is then unused); `src` the row of the
   * postContent output an original post takes its content from. Sets the author's latest post.
   */
  queue(s: SocialState, author: number, kind: number, parent: number, root: number, rootAuthor: number, depth: number, stance: number, src: number): number {
    const id = s.posts.nextId + this.n;
    checkNewPost(id, depth);
    if (this.n === this.cap) this.grow();
    const i = this.n++;
    this.author[i] = author;
    this.kind[i] = kind;
    this.parent[i] = parent;
    this.root[i] = root;
    this.rootAuthor[i] = rootAuthor;
    this.depth[i] = depth;
    this.stance[i] = stance;
    this.src[i] = src;
    this.prev[i] = s.posts.latest[author];
    s.posts.latest[author] = id;
    return id;
  }

  private grow(): void {
    this.cap = Math.max(1024, this.cap * 2);
    const more = <T extends Int32Array | Uint8Array | Float32Array>(old: T): T => {
      const a = sharedArray(old instanceof Float32Array ? 'f32' : old instanceof Uint8Array ? 'u8' : 'i32', this.cap) as T;
      a.set(old);
      return a;
    };
    this.author = more(this.author);
    this.kind = more(this.kind);
    this.parent = more(this.parent);
    this.root = more(this.root);
    this.rootAuthor = more(this.rootAuthor);
    this.depth = more(this.depth);
    this.stance = more(this.stance);
    this.src = more(this.src);
    this.prev = more(this.prev);
  }

  /**
   * Appends the queued posts to the table and writes their rows on the threads, their topics where
   * the topics are (`srcTopic` and `srcCluster`: postContent's output, `dim` values and one cluster
   * per row), then draws the post-level assignment of those it covers; empties the queue. Returns
   * how many rows it added. The caller announces the new rows to a device executor, but the
   * topics of those added this step, which this does (state.ts announceHostWrites, `kernelTopics`).
   */
  async write(exec: Executor, s: SocialState, step: number, srcTopic: Float32Array, srcCluster: Uint8Array): Promise<number> {
    const n = this.n;
    if (n === 0) return 0;
    const P = s.posts;
    const row0 = P.appendRows(n);
    // The topics first: a device copies parents' topics from rows that must have moved with the
    // table's compaction or growth (appendRows) before, and the queue's arrays changed. The topics
    // the host wrote this step (the scenario's story, before the queued posts) are announced
    // here, before the device's rows after them (announceHostWrites leaves them out).
    P.repeatMoves();
    P.wrote(this.parent, 0, n);
    P.wrote(this.src, 0, n);
    const D = P.dim;
    if (row0 > P.addedFrom) P.wrote(P.topic, P.addedFrom * D, row0 * D);
    const topics = { newParent: this.parent, newSrc: this.src, srcTopic, topic: P.topic, row0, base: P.base, dim: D };
    await exec.run(kernels.writeTopics, topics, n, { wroteRows: [{ array: P.topic, from: row0 * D, to: (row0 + n) * D }] });
    const { impressions, likes, dislikes, likes_left, dislikes_left, ...cols } = P.cols;
    for (const c of [impressions, likes, dislikes, likes_left, dislikes_left]) c.fill(0, row0, row0 + n);
    const args = {
      newAuthor: this.author,
      newKind: this.kind,
      newParent: this.parent,
      newRoot: this.root,
      newRootAuthor: this.rootAuthor,
      newDepth: this.depth,
      newStance: this.stance,
      newSrc: this.src,
      newPrev: this.prev,
      srcCluster,
      ...cols,
      row0,
      base: P.base,
      stepNow: step,
    };
    await exec.run(kernels.writePosts, args, n, { announced: true });
    this.n = 0;
    const a = s.moderation.assign;
    if (!a || step >= a.until) return n;
    const c = P.cols;
    for (let i = 0; i < n; i++) {
      const r = row0 + i;
      if ((a.kinds & (1 << c.kind[r])) === 0) continue;
      const x = uniform(a.key, P.base + r);
      for (let g = 0; g < a.codes.length; g++) {
        if (x < a.cumulative[g]) {
          c.group[r] = a.codes[g];
          c.treat_vote[r] = a.votes[g];
          a.assigned++;
          break;
        }
      }
    }
    return n;
  }
}
