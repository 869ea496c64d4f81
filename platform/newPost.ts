/**
 * Creating a post, shared by the apply phase (users' posts and reshares, the scenario's story) and
 * the inject intervention: the post table row, the author's latest post, cascade bookkeeping,
 * injected-story tracking and post-level random assignment.
 */
import { uniform } from '../sim-core/rng.ts';
import { FLAG, KIND } from './posts.ts';
import type { SocialState } from './state.ts';

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
  flags: number;
  veracity?: number;
  novelty?: number;
  tag?: number;
}

/** Nearest topic prototype of a unit vector. */
export function nearestTopic(s: SocialState, v: ArrayLike<number>): number {
  const D = s.posts.dim;
  let best = 0;
  let bestDot = -Infinity;
  for (let t = 0; t < s.topics; t++) {
    let dot = 0;
    for (let d = 0; d < D; d++) dot += v[d] * s.prototypes[t * D + d];
    if (dot > bestDot) {
      bestDot = dot;
      best = t;
    }
  }
  return best;
}

const scratch = { buf: new Float32Array(256) };

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
  const root = pr >= 0 ? c.root[pr] : -1;
  const depth = pr >= 0 ? c.depth[pr] + 1 : 0;
  const rootAuthor = pr >= 0 ? c.root_author[pr] : o.author;
  const id = P.add(
    {
      author: o.author,
      step: o.step,
      kind: o.kind,
      parent: o.parent,
      root,
      rootAuthor,
      depth,
      stance: o.stance,
      cluster: pr >= 0 ? c.cluster[pr] : nearestTopic(s, topicBuf),
      flags,
      prevByAuthor: s.latest[o.author],
      veracity: content ? c.veracity[pr] : (o.veracity ?? 0),
      novelty: content ? c.novelty[pr] : (o.novelty ?? 0),
      tag: content ? c.tag[pr] : (o.tag ?? 0),
      rank: content ? c.rank[pr] : 1,
    },
    topicBuf,
  );
  s.latest[o.author] = id;
  if (pr >= 0) {
    s.cascades.add(root, rootAuthor, o.author, depth, o.step);
    if ((flags & FLAG.story) !== 0) s.cascades.add(-1, -1, o.author, depth, o.step);
    if (content && c.tag[pr] !== 0) s.stories.share(root, o.author, depth);
  }
  const a = s.assign;
  if (a && o.step < a.until && (a.kinds & (1 << o.kind)) !== 0) {
    const x = uniform(a.key, id);
    for (let g = 0; g < a.codes.length; g++) {
      if (x < a.cumulative[g]) {
        const r = P.rowOf(id);
        c.group[r] = a.codes[g];
        c.treat_vote[r] = a.votes[g];
        a.assigned++;
        break;
      }
    }
  }
  return id;
}
