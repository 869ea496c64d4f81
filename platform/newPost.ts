/**
 * Creating a post one at a time, for the scenario's story (apply) and the inject intervention: the
 * post table row, the author's latest post, cascade and conversation bookkeeping, injected-story
 * tracking and post-level random assignment. The users' posts and reshares take the batched path
 * (postBatch.ts), which shares the trees' bookkeeping (joinTree) and treeOf.
 */
import { uniform } from '../sim-core/rng.ts';
import type { Joins } from './cascades.ts';
import { FLAG, KIND, type NewPost } from './posts.ts';
import type { SocialState } from './state.ts';
import { nearestPrototype } from './topicDots.ts';

export interface PostSpec {
  author: number;
  step: number;
  kind: number;
  /** Parent post id, or -1 for an original post. */
  parent: number;
  stance: number;
  /** Topic vector of an original post (reshares take the parent's). */
  topic?: ArrayLike<number>;
  topicOffset?: number;
  /** Topic cluster of an original post, when already known (else its nearest prototype). */
  cluster?: number;
  flags: number;
  veracity?: number;
  novelty?: number;
  tag?: number;
}

/** Nearest topic prototype of a unit vector. */
export function nearestTopic(s: SocialState, v: ArrayLike<number>): number {
  return nearestPrototype(s.prototypes, s.topics, s.posts.dim, v, 0);
}

const scratch = { buf: new Float32Array(256) };
/**
 * The row addPost hands to PostTable.add, one object refilled for every post: a new literal per
 * post was ~58k short-lived objects a step at 1M agents, for the main thread's collector.
 */
const row: NewPost = { author: 0, step: 0, kind: 0, parent: -1, root: -1, rootAuthor: 0, depth: 0, stance: 0, cluster: 0, flags: 0, prevByAuthor: -1, veracity: 0, novelty: 0, tag: 0, rank: 1 };

const isReshare = (kind: number) => kind === KIND.repost || kind === KIND.quote;

/**
 * The tree a new post of `kind` under the post in row `pr` joins. Reshares (reposts, quotes) form
 * reshare cascades, the trees retweet cascades are measured by; comments form conversations. A
 * post continues its parent's tree when the parent is of the same family, and otherwise starts one
 * rooted at the parent (an original post, or a comment that is reshared, or a reshare commented on).
 */
export function treeOf(s: SocialState, pr: number, kind: number): { root: number; depth: number; rootAuthor: number } {
  const c = s.posts.cols;
  const pk = c.kind[pr];
  const same = pk !== KIND.original && isReshare(pk) === isReshare(kind);
  return same ? { root: c.root[pr], depth: c.depth[pr] + 1, rootAuthor: c.root_author[pr] } : { root: s.posts.base + pr, depth: 1, rootAuthor: c.author[pr] };
}

/** Joins queued for the trees by apply's walk (recorded after it, on the threads: cascades.ts joinAll). */
export interface TreeJoins {
  cascades: Joins;
  conversations: Joins;
}

/**
 * Records a reply (a reshare or comment, at `depth` of the tree of `root`) in its tree: a repost or
 * quote in the reshare cascade, and in the story's aggregate when it carries the story flag and in
 * the injected story's reach when its parent has a tag; a comment in the conversation. With
 * `joins`, the cascade and conversation records are queued there instead (the story's reach is
 * recorded at once).
 */
export function joinTree(s: SocialState, kind: number, root: number, rootAuthor: number, author: number, depth: number, step: number, story: boolean, tagged: boolean, joins?: TreeJoins): void {
  if (!isReshare(kind)) {
    if (joins) joins.conversations.push(root, rootAuthor, author, depth);
    else s.conversations.add(root, rootAuthor, author, depth, step);
    return;
  }
  if (joins) joins.cascades.push(root, rootAuthor, author, depth);
  else s.cascades.add(root, rootAuthor, author, depth, step);
  if (story) {
    if (joins) joins.cascades.push(-1, -1, author, depth);
    else s.cascades.add(-1, -1, author, depth, step);
  }
  if (tagged) s.stories.share(root, author, depth);
}

/**
 * Adds a post and returns its id. Reposts and quotes carry their parent's content: veracity,
 * novelty, story tag, rank multiplier, and the story and fact-check flags (comments carry only the
 * story flag).
 */
export function addPost(s: SocialState, o: PostSpec): number {
  const P = s.posts;
  const D = P.dim;
  const c = P.cols;
  const pr = o.parent >= 0 ? P.rowOf(o.parent) : -1;
  const topicBuf = scratch.buf;
  const src = pr >= 0 ? P.topic : o.topic!;
  const off = pr >= 0 ? pr * D : (o.topicOffset ?? 0);
  for (let d = 0; d < D; d++) topicBuf[d] = src[off + d];
  const content = pr >= 0 && (o.kind === KIND.repost || o.kind === KIND.quote);
  const flags = o.flags | (pr >= 0 ? c.flags[pr] & (content ? FLAG.story | FLAG.factCheck : FLAG.story) : 0);
  // A reshare continues its parent's reshare tree, a comment its parent's conversation; otherwise
  // the parent is the root (treeOf).
  const tree = pr >= 0 ? treeOf(s, pr, o.kind) : undefined;
  const root = tree ? tree.root : -1;
  const depth = tree ? tree.depth : 0;
  const rootAuthor = tree ? tree.rootAuthor : o.author;
  row.author = o.author;
  row.step = o.step;
  row.kind = o.kind;
  row.parent = o.parent;
  row.root = root;
  row.rootAuthor = rootAuthor;
  row.depth = depth;
  row.stance = o.stance;
  row.cluster = pr >= 0 ? c.cluster[pr] : (o.cluster ?? nearestTopic(s, topicBuf));
  row.flags = flags;
  row.prevByAuthor = s.posts.latest[o.author];
  row.veracity = content ? c.veracity[pr] : (o.veracity ?? 0);
  row.novelty = content ? c.novelty[pr] : (o.novelty ?? 0);
  row.tag = content ? c.tag[pr] : (o.tag ?? 0);
  row.rank = content ? c.rank[pr] : 1;
  // Read before the post is added: adding it may move the rows (a compaction) or the columns.
  const tagged = content && c.tag[pr] !== 0;
  const id = P.add(row, topicBuf);
  s.posts.latest[o.author] = id;
  if (pr >= 0) joinTree(s, o.kind, root, rootAuthor, o.author, depth, o.step, (flags & FLAG.story) !== 0, tagged);
  const a = s.moderation.assign;
  if (a && o.step < a.until && (a.kinds & (1 << o.kind)) !== 0) {
    const x = uniform(a.key, id);
    for (let g = 0; g < a.codes.length; g++) {
      if (x < a.cumulative[g]) {
        // P.cols, not `c`: adding the post may have moved the columns to larger buffers.
        const r = P.rowOf(id);
        P.cols.group[r] = a.codes[g];
        P.cols.treat_vote[r] = a.votes[g];
        a.assigned++;
        break;
      }
    }
  }
  return id;
}
