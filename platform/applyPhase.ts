/**
 * The social step's apply phase (docs/social-platform.md, "The step"; the other phases are in phases.ts). Heavy
 * per-user work runs in kernels; the walk of the event buffer runs in user order in the main
 * thread, so post ids and event order never depend on threads. Before it, on the threads: the
 * content of new original posts (the postContent kernel), the impression, like and dislike counts
 * (the impressions and countVotes kernels: sums, whatever their order), and what each user's
 * actions do that depends on that user alone (decideActions.ts). After it, on the threads: the new
 * posts' rows, from what the walk queued (postBatch.ts), and the trees' joins (cascades.ts joinAll).
 */
import type { ArrowFileAppender } from '../sim-core/io/arrowFile.ts';
import { releaseArrays } from '../sim-core/exec.ts';
import { pairSetAdd, pairSetHas } from '../sim-core/pairSet.ts';
import type { Phase } from '../sim-core/phase.ts';
import { keyOf, streamOf } from '../sim-core/rng.ts';
import { sharedArray, type TypedArray } from '../sim-core/table.ts';
import { IndexList } from '../sim-core/indexList.ts';
import { FLAG, KIND } from './posts.ts';
import { addPost, joinTree, type PostSpec, type TreeJoins } from './newPost.ts';
import { DROPPED, STORY, TAGGED, kernels as KD } from './decideActions.ts';
import { Joins } from './cascades.ts';
import { PostBatch } from './postBatch.ts';
import { selectSeeds, type SeedStrategy } from '../models/seeds.ts';
import { kernels as K } from './kernels.ts';
import { ACTIONS, A } from './events.ts';
import { kernels as CK } from '../sim-core/kernels.ts';
import { announceHostWrites, feedArgs, USER_CHUNK, type SocialState } from './state.ts';

export interface StoryOptions {
  seeds: SeedStrategy;
  count: number;
  step: number;
  stance: number;
  topic: number;
}

/** decideActions' outputs, one per action (applyPhase's walk reads them). */
function decisions(cap: number) {
  return {
    action: sharedArray('u8', cap),
    target: sharedArray('i32', cap),
    root: sharedArray('i32', cap),
    rootAuthor: sharedArray('i32', cap),
    depth: sharedArray('i32', cap),
    stance: sharedArray('f32', cap),
    bits: sharedArray('u8', cap),
  };
}

const EVENT_SCHEMA = [
  { name: 'step', type: 'i32' as const, values: new Int32Array(0) },
  { name: 'agent', type: 'i32' as const, values: new Int32Array(0) },
  { name: 'action', type: 'u8' as const, values: new Uint8Array(0), dictionary: ACTIONS },
  { name: 'target', type: 'i32' as const, values: new Int32Array(0) },
];

/**
 * Applies the step's actions in user order: impressions, counters, new posts (original posts,
 * reposts, quotes, comments, and the scenario's story), mutes, follow deltas and cascades.
 */
export function applyPhase(s: SocialState, story?: StoryOptions): Phase {
  const counts = Object.fromEntries(ACTIONS.map((a) => [`actions_${a}`, 'i32' as const]));
  let events: ArrowFileAppender | undefined;
  // Per active row: the content of the user's original posts this step (the postContent kernel).
  let postTopic = sharedArray('f32', 0);
  let postStance = sharedArray('f32', 0);
  let postCluster = sharedArray('u8', 0);
  // Per active row: the user's opinion (quotes' and comments' stance), gathered where the opinions
  // are (on a device executor, so that only these rows come back, not the column).
  let userOpinion = sharedArray('f32', 0);
  // Where each active user's actions start when packed (on a device executor, the packed actions)
  // and in decideActions' outputs.
  let evStart = sharedArray('i32', 1);
  let packedAction = sharedArray('u32', 0);
  let packedTarget = sharedArray('i32', 0);
  let decided = decisions(0);
  // What the step's actions wrote besides new post rows: the rows whose counters or flags moved,
  // the authors of new posts (their latest post), the users followed or unfollowed (their
  // follower counts), the mute set's slots, and the new rows whose topics a kernel wrote
  // (batch.write), for a device executor's copies (state.ts announceHostWrites).
  const wrote = { posts: new IndexList(), latest: new IndexList(), followers: new IndexList(), mutes: new IndexList(), kernelTopics: 0 };
  const batch = new PostBatch();
  const joins: TreeJoins = { cascades: new Joins(), conversations: new Joins() };
  return {
    name: 'apply',
    state: s,
    reads: ['opinion', 'interest'],
    writes: [],
    tables: { reads: ['feeds', 'events', 'posts', 'follows', 'moderation', 'cascades', 'conversations', 'stories'], writes: ['posts', 'follows', 'cascades', 'conversations', 'stories'] },
    metrics: { ...counts, posts_original: 'i32', posts_repost: 'i32', posts_quote: 'i32', posts_comment: 'i32' },
    init(world) {
      if (story && story.count > 0) {
        s.stories.seeds = selectSeeds(world.graph.followers, world.agents.length, story.seeds, story.count, keyOf(world.seed, streamOf('story.seeds'), 0));
      }
      if (world.out?.events) events = world.out.appender('events.arrow', EVENT_SCHEMA);
    },
    async run(world, ctx) {
      const P = s.posts;
      const D = P.dim;
      const opinion = world.agents.columns.opinion as Float32Array;
      const n = s.feeds.active.length;
      const F = s.cfg.feedSize;
      if (postStance.length < n) {
        const cap = Math.ceil(n * 1.25);
        postTopic = sharedArray('f32', cap * D);
        postStance = sharedArray('f32', cap);
        postCluster = sharedArray('u8', cap);
        userOpinion = sharedArray('f32', cap);
      }
      await world.exec.run(
        K.postContent,
        {
          active: s.feeds.active,
          evAction: s.events.action,
          evCount: s.events.count,
          interest: world.agents.columns.interest as Float32Array,
          opinion,
          prototypes: s.prototypes,
          topic: postTopic,
          stance: postStance,
          cluster: postCluster,
          dim: D,
          topics: s.topics,
          maxEvents: s.events.max,
          key: ctx.key('apply'),
        },
        n,
        { chunkRows: USER_CHUNK },
      );
      await world.exec.run(CK.gather, { src: opinion, index: s.feeds.active, out: userOpinion }, n);
      // On a device executor the counts stay there (in the live rows; the host appends new rows
      // beside them): see the table's growth below and maintain's retirement.
      await world.exec.run(K.impressions, { ...feedArgs(s), impressions: P.cols.impressions, first: P.first, count: P.count }, n, { chunkRows: USER_CHUNK });
      // So are the likes and dislikes (the walk below only logs them). The columns are passed in
      // the call, not kept in this frame: a growth below replaces them (releaseArrays).
      await world.exec.run(
        K.countVotes,
        {
          evCount: s.events.count,
          evAction: s.events.action,
          evTarget: s.events.target,
          voterOpinion: userOpinion,
          likes: P.cols.likes,
          dislikes: P.cols.dislikes,
          likesLeft: P.cols.likes_left,
          dislikesLeft: P.cols.dislikes_left,
          maxEvents: s.events.max,
          base: P.base,
          first: P.first,
          count: P.count,
        },
        n,
        { chunkRows: USER_CHUNK },
      );
      // What follows reads in plain JavaScript who is active (compacted on the device), the
      // actions, the new posts' stance and cluster, the feeds (stories' reach, only with tagged
      // posts) and the active users' opinions (quotes' and comments' stance): device copies of
      // those come back first, the rows of this step's active users only (not the rest: the users'
      // impression rings and the opinion column stay on the device, and the new posts' topics,
      // which writeTopics copies where they are: postBatch.ts).
      const E = s.events.max;
      const rows = (array: TypedArray, width: number) => ({ array, length: n * width });
      // User k's actions: evAction and evTarget from k * maxEvents on. On a device executor they
      // come back packed, from evStart[k] on (packEvents: the action buffers hold maxEvents slots
      // a user, ~30 times what is used), after the counts.
      let evAction: Uint8Array | Uint32Array = s.events.action;
      let evTarget = s.events.target;
      await s.events.forHost([rows(s.events.count, 1)]);
      if (evStart.length < n + 1) evStart = sharedArray('i32', Math.ceil((n + 1) * 1.25));
      for (let k = 0; k < n; k++) evStart[k + 1] = evStart[k] + s.events.count[k];
      const total = evStart[n];
      if (decided.action.length < total) decided = decisions(Math.ceil(total * 1.25));
      if (s.events.onDevice) {
        s.events.wrote(evStart, 0, n + 1);
        if (packedAction.length < total) {
          packedAction = sharedArray('u32', Math.ceil(total * 1.25));
          packedTarget = sharedArray('i32', packedAction.length);
        }
        if (total > 0) {
          await world.exec.run(K.packEvents, { evAction: s.events.action, evTarget: s.events.target, evStart, packedAction, packedTarget, users: n, maxEvents: E }, total);
          await s.events.forHost([{ array: packedAction, length: total }, { array: packedTarget, length: total }]);
        }
        [evAction, evTarget] = [packedAction, packedTarget];
        // The step's posts may make the table compact or grow: the device repeats the move or the
        // copy on its copies (announceHostWrites), so the counts kernels add to stay there.
      }
      // Injected stories count the users they reach (only posts with a tag; none without injections).
      const tagged = P.tags.length > 1;
      await s.feeds.forHost([s.feeds.active, rows(postStance, 1), rows(postCluster, 1), ...(tagged ? [rows(s.feeds.items, F), rows(s.feeds.len, 1)] : []), rows(userOpinion, 1)]);
      const tally = new Array<number>(ACTIONS.length).fill(0);
      const made = [0, 0, 0, 0];
      const evStep: number[] = [];
      const evAgent: number[] = [];
      const evAct: number[] = [];
      const evTgt: number[] = [];
      const log = (u: number, a: number, t: number) => {
        tally[a]++;
        if (events) {
          evStep.push(ctx.step);
          evAgent.push(u);
          evAct.push(a);
          evTgt.push(t);
        }
      };
      // One spec refilled per post (a literal per post was garbage for the main thread's collector).
      const spec: PostSpec = { author: 0, step: ctx.step, kind: 0, parent: -1, stance: 0, topic: undefined, topicOffset: undefined, cluster: undefined, flags: 0 };
      for (const list of [wrote.posts, wrote.latest, wrote.followers, wrote.mutes]) list.clear();
      wrote.kernelTopics = 0;
      const newPost = (u: number, kind: number, parent: number, stance: number, topic: ArrayLike<number> | undefined, flags: number, offset?: number, cluster?: number) => {
        made[kind]++;
        wrote.latest.push(u);
        spec.author = u;
        spec.kind = kind;
        spec.parent = parent;
        spec.stance = stance;
        spec.topic = topic;
        spec.topicOffset = offset;
        spec.cluster = cluster;
        spec.flags = flags;
        return addPost(s, spec);
      };
      // The users' posts, queued in order and written after the walk (postBatch.ts).
      const queue = (u: number, kind: number, parent: number, root: number, rootAuthor: number, depth: number, stance: number, src: number) => {
        made[kind]++;
        wrote.latest.push(u);
        return batch.queue(s, u, kind, parent, root, rootAuthor, depth, stance, src);
      };
      // Story: the scenario's news item, posted by its seed accounts.
      if (story && ctx.step === story.step) {
        const pt = s.prototypes.subarray(story.topic * D, story.topic * D + D);
        for (const u of s.stories.seeds) {
          newPost(u, KIND.original, -1, story.stance, pt, FLAG.story);
          s.cascades.add(-1, -1, u, 0, ctx.step);
          log(u, A.post, P.nextId - 1);
        }
      }
      // What depends on no other user's actions, decided on the threads (decideActions.ts): the
      // reshares that happen, the trees replies join, their stances, and the counters.
      // In a function of its own, as the walk below, so that this frame does not hold the columns.
      const { action, target, root, rootAuthor, depth, stance, bits } = decided;
      const decide = (T = s.cascades, c0 = P.cols) =>
        world.exec.run(
          KD.decideActions,
          {
            active: s.feeds.active,
            evCount: s.events.count,
            evAction,
            evTarget,
            evStart,
            kind: c0.kind,
            root: c0.root,
            root_author: c0.root_author,
            author: c0.author,
            depth: c0.depth,
            stance: c0.stance,
            tag: c0.tag,
            userOpinion,
            index: T.index,
            recs: T.recs,
            entries: T.entries,
            head: T.head,
            reports: c0.reports,
            flags: c0.flags,
            reposts: c0.reposts,
            quotes: c0.quotes,
            comments: c0.comments,
            outAction: action,
            outTarget: target,
            outRoot: root,
            outRootAuthor: rootAuthor,
            outDepth: depth,
            outStance: stance,
            outBits: bits,
            maxEvents: E,
            packed: evAction === s.events.action ? 0 : 1,
            base: P.base,
            capI: T.capI,
            capR: T.capR,
            reportThreshold: s.cfg.reportThreshold,
          },
          n,
          { chunkRows: USER_CHUNK, announced: true },
        );
      await decide();
      // The walk in its own (synchronous) function: the async run's frame, kept across the await
      // below, would otherwise hold the walk's last registers, among them the post columns a
      // growth in batch.write replaces, past releaseArrays.
      const walk = (): void => {
        for (let k = 0; k < n; k++) {
          const u = s.feeds.active[k];
          log(u, A.refresh, -1);
          for (let i = 0; tagged && i < s.feeds.len[k]; i++) {
            const r = P.rowOf(s.feeds.items[k * F + i]);
            if (r >= 0 && P.cols.tag[r] !== 0) s.stories.expose(P.cols.root[r], u, ctx.step);
          }
          if (s.events.count[k] === 0) log(u, A.nothing, -1);
          for (let o = evStart[k]; o < evStart[k + 1]; o++) {
            const act = action[o];
            const t = target[o];
            switch (act) {
              case DROPPED:
                continue;
              case A.report:
                wrote.posts.push(t);
                break;
              case A.repost:
              case A.quote:
              case A.comment: {
                const kind = act === A.repost ? KIND.repost : act === A.quote ? KIND.quote : KIND.comment;
                wrote.posts.push(t);
                queue(u, kind, t, root[o], rootAuthor[o], depth[o], stance[o], -1);
                joinTree(s, kind, root[o], rootAuthor[o], u, depth[o], ctx.step, (bits[o] & STORY) !== 0, (bits[o] & TAGGED) !== 0, joins);
                break;
              }
              case A.mute:
                pairSetAdd(s.follows.mutes, u, t, wrote.mutes);
                break;
              case A.follow:
                if (pairSetHas(s.follows.removed.keysA, s.follows.removed.keysB, u, t)) break;
                if (pairSetAdd(s.follows.added, u, t)) s.follows.followers[t]++;
                wrote.followers.push(t);
                break;
              case A.unfollow:
                if (pairSetAdd(s.follows.removed, u, t)) s.follows.followers[t]--;
                wrote.followers.push(t);
                break;
              case A.post: {
                // An original post: the user's interest plus noise as topic, its opinion plus noise
                // as stance (computed above, postContent).
                log(u, act, queue(u, KIND.original, -1, -1, u, 0, postStance[k], k));
                continue;
              }
            }
            log(u, act, t);
          }
        }
      };
      // Posts queued before an error (the id limit) are still written: the authors' latest posts
      // point at them.
      try {
        walk();
      } finally {
        wrote.kernelTopics = await batch.write(world.exec, s, ctx.step, postTopic, postCluster);
        await s.cascades.joinAll(world.exec, joins.cascades, ctx.step);
        await s.conversations.joinAll(world.exec, joins.conversations, ctx.step);
      }
      announceHostWrites(s, wrote);
      // The post table doubled: its old columns go back now, not at some later collection (10M
      // agents: 2.3 GB at 2^24 rows, which otherwise lingered into the full window's peak).
      if (P.grew) {
        P.grew = false;
        await releaseArrays(world.exec);
      }
      for (let a = 0; a < ACTIONS.length; a++) ctx.metric(`actions_${ACTIONS[a]}`, tally[a]);
      ctx.metric('posts_original', made[KIND.original]);
      ctx.metric('posts_repost', made[KIND.repost]);
      ctx.metric('posts_quote', made[KIND.quote]);
      ctx.metric('posts_comment', made[KIND.comment]);
      if (events && evStep.length > 0) {
        events.append(
          [
            { name: 'step', type: 'i32', values: Int32Array.from(evStep) },
            { name: 'agent', type: 'i32', values: Int32Array.from(evAgent) },
            { name: 'action', type: 'u8', values: Uint8Array.from(evAct), dictionary: ACTIONS },
            { name: 'target', type: 'i32', values: Int32Array.from(evTgt) },
          ],
          evStep.length,
        );
      }
    },
  };
}

