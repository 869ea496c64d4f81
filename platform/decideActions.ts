/**
 * What apply's walk (applyPhase.ts) needs to know of each action that depends on no other user,
 * decided per active user on the threads before the walk: the walk itself then reads these dense
 * outputs in user order and does only what that order decides (post ids, the trees' joins in
 * order, the follow sets). At 10M agents the walk had been 0.17-0.33 s of one thread a step on
 * the 2-core machine (~0.45 s on the H100 host), about half of it cache misses on the post rows
 * and the cascade tracker, which this moves to the threads (CHANGELOG.md, "Where the time goes").
 */
import { kernel, kernelList } from '../sim-core/kernel.ts';
import { trackHas } from './cascadeShards.ts';
import { A } from './events.ts';
import { FLAG, KIND } from './posts.ts';

/** outAction of an action that does not happen: a second reshare of one cascade by one user. */
export const DROPPED = 255;
/** outBits of a reply: its parent carries the story flag; its parent has an injected story's tag. */
export const STORY = 1;
export const TAGGED = 2;

/**
 * For active user k's actions (evAction and evTarget from k * maxEvents, or from evStart[k] when
 * `packed`), writes from evStart[k] on: the action (DROPPED for a reshare that does not happen)
 * and target; for a reply (repost, quote, comment) kept, the tree it joins (newPost.ts treeOf:
 * root, root's author, depth), its stance and outBits.
 *
 * As on X, where an account can repost a post only once, a user joins a reshare cascade at most
 * once (by a repost or a quote), and the root's author is in it from the start: a second reshare
 * is dropped, decided against the cascade tracker as the step found it (read-only here; the walk's
 * joins are recorded after it) plus the user's own reshares before it in this step. Only the user
 * can add (root, user), so this is the decision a walk in user order makes.
 *
 * The kept replies' and the reports' counters are added to their posts here, with atomic adds
 * (integer sums: the same whatever the order; a post is flagged `reported` once its count reaches
 * reportThreshold, whichever add gets it there). Targets are live posts (the step's feeds).
 */
const decideActions = kernel(
  {
    reads: {
      active: 'i32',
      evCount: 'u16',
      evAction: 'num',
      evTarget: 'i32',
      evStart: 'i32',
      kind: 'u8',
      root: 'i32',
      root_author: 'i32',
      author: 'i32',
      depth: 'u16',
      stance: 'f32',
      tag: 'u8',
      userOpinion: 'f32',
      index: 'i32',
      recs: 'i32',
      entries: 'i32',
      head: 'i32',
    },
    writes: {
      reports: 'i32',
      flags: 'u8',
      reposts: 'i32',
      quotes: 'i32',
      comments: 'i32',
      outAction: 'u8',
      outTarget: 'i32',
      outRoot: 'i32',
      outRootAuthor: 'i32',
      outDepth: 'i32',
      outStance: 'f32',
      outBits: 'u8',
    },
    params: ['maxEvents', 'packed', 'base', 'capI', 'capR', 'reportThreshold'],
  },
  (a, start, end): void => {
    const { active, evCount, evAction, evTarget, evStart, kind, root, root_author, author, depth, stance, tag, userOpinion, reports, flags } = a;
    const { outAction, outTarget, outRoot, outRootAuthor, outDepth, outStance, outBits, maxEvents: E, base } = a;
    const tracks = { index: a.index, recs: a.recs, entries: a.entries, head: a.head, capI: a.capI, capR: a.capR };
    // The cascades the user reshared in this step, before the current action.
    const mine: number[] = [];
    for (let k = start; k < end; k++) {
      const u = active[k];
      mine.length = 0;
      const from = a.packed ? evStart[k] : k * E;
      for (let e = 0; e < evCount[k]; e++) {
        const act = evAction[from + e];
        const o = evStart[k] + e;
        const r = evTarget[from + e] - base;
        outAction[o] = act;
        outTarget[o] = evTarget[from + e];
        if (act === A.report) {
          if (Atomics.add(reports, r, 1) + 1 >= a.reportThreshold) Atomics.or(flags, r, FLAG.reported);
          continue;
        }
        if (act !== A.repost && act !== A.quote && act !== A.comment) continue;
        // The tree the reply joins (newPost.ts treeOf, here without its object).
        const reshare = act !== A.comment;
        const pk = kind[r];
        const same = pk !== KIND.original && (pk === KIND.repost || pk === KIND.quote) === reshare;
        const tRoot = same ? root[r] : base + r;
        const tRootAuthor = same ? root_author[r] : author[r];
        if (reshare) {
          if (tRootAuthor === u || mine.includes(tRoot) || trackHas(tracks, tRoot, u)) {
            outAction[o] = DROPPED;
            continue;
          }
          mine.push(tRoot);
        }
        Atomics.add(act === A.repost ? a.reposts : act === A.quote ? a.quotes : a.comments, r, 1);
        outRoot[o] = tRoot;
        outRootAuthor[o] = tRootAuthor;
        outDepth[o] = same ? depth[r] + 1 : 1;
        const ps = stance[r];
        outStance[o] = act === A.repost ? ps : act === A.quote ? (ps + userOpinion[k]) / 2 : userOpinion[k];
        outBits[o] = ((flags[r] & FLAG.story) !== 0 ? STORY : 0) | (tag[r] !== 0 ? TAGGED : 0);
      }
    }
  },
);

export const kernels = kernelList(import.meta.url, { decideActions });
