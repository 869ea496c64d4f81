/**
 * The social step's heuristic phases (docs/social-platform.md, "The step"): activate -> [recommend, in recsys/] ->
 * act -> apply (applyPhase.ts) -> update -> maintain. Heavy per-user work runs in kernels.
 */
import type { ArrowFileAppender } from '../sim-core/io/arrowFile.ts';
import { lazyFollowersGraph } from '../sim-core/csr.ts';
import { compact, releaseArrays } from '../sim-core/exec.ts';
import { foldedEdges, foldsInPlace, newFollowing } from './followFold.ts';
import type { Phase, World } from '../sim-core/phase.ts';
import { sharedArray } from '../sim-core/table.ts';
import { IndexList } from '../sim-core/indexList.ts';
import { HOURLY_PROFILES } from '../population/synthesize.ts';
import { COUNTED_COLUMNS } from './posts.ts';
import { SOCIAL_PROOF, attentionTable, kernels as K } from './kernels.ts';
import { announceHostWrites, feedArgs, reserveActive, USER_CHUNK, windowSteps, type SocialState } from './state.ts';

/** No element written (announceHostWrites). */
const NOTHING = new IndexList();

/** Hourly profiles normalised to mean 1 over the day, so `activity` is the mean hourly rate. */
export function normalisedProfiles(): Float32Array {
  const out = sharedArray('f32', HOURLY_PROFILES.length * 24);
  HOURLY_PROFILES.forEach((p, c) => {
    const mean = p.reduce((x, y) => x + y, 0) / 24;
    for (let h = 0; h < 24; h++) out[c * 24 + h] = p[h] / mean;
  });
  return out;
}

export function activatePhase(s: SocialState): Phase {
  const profiles = normalisedProfiles();
  return {
    name: 'activate',
    state: s,
    reads: ['activity', 'chronotype', 'archetype'],
    writes: [],
    tables: { reads: ['behaviour', 'moderation'], writes: ['feeds', 'events'] },
    metrics: { active_users: 'i32' },
    async run(world, ctx) {
      const c = world.agents.columns;
      const n = world.agents.length;
      const hour = Math.floor(((ctx.time + s.cfg.startHour * 3600) % 86400) / 3600);
      await world.exec.run(
        K.activate,
        { activity: c.activity, chronotype: c.chronotype, archetype: c.archetype, behaviour: s.behaviour.values, profiles, suspended: s.moderation.suspended, hour, stepHours: world.stepSeconds / 3600, key: ctx.key('activate'), out: s.feeds.mask },
        n,
      );
      s.feeds.active = await compact(world.exec, s.feeds.mask, n);
      reserveActive(s, s.feeds.active.length);
      ctx.metric('active_users', s.feeds.active.length);
    },
  };
}

export function actPhase(s: SocialState): Phase {
  // Attention by post age: a pure function of the age, so the table only grows (a new array each
  // time, never rewritten: the GPU's copy stays valid).
  let attention: Float32Array = sharedArray('f32', 0);
  return {
    name: 'act',
    state: s,
    reads: ['opinion', 'interest', 'archetype'],
    writes: [],
    tables: { reads: ['feeds', 'posts', 'behaviour', 'follows'], writes: ['events'] },
    async run(world, ctx) {
      const p = s.posts.cols;
      const G = world.graph.following;
      // Posts are appended in step order: the first live row is the oldest.
      const ages = s.posts.live > 0 ? ctx.step - p.step[s.posts.first] + 1 : 1;
      if (attention.length < ages) attention = attentionTable(Math.max(ages, 2 * attention.length, 64), s.cfg.attention.scale, s.cfg.attention.exponent, world.stepSeconds / 3600);
      await world.exec.run(
        K.act,
        {
          ...feedArgs(s),
          author: p.author,
          stance: p.stance,
          likes: p.likes,
          dislikes: p.dislikes,
          reposts: p.reposts,
          flags: p.flags,
          novelty: p.novelty,
          treatVote: p.treat_vote,
          topic: s.posts.topic,
          count: s.posts.count,
          dim: s.posts.dim,
          opinion: world.agents.columns.opinion,
          interest: world.agents.columns.interest,
          archetype: world.agents.columns.archetype,
          behaviour: s.behaviour.values,
          followers: s.follows.followers,
          offsets: G.offsets,
          targets: G.targets,
          sessions: s.feeds.mask,
          activity: world.agents.columns.activity,
          activityRef: s.behaviour.activityRef,
          postExponent: s.cfg.postExponent,
          postStep: p.step,
          step: ctx.step,
          attention,
          socialProof: SOCIAL_PROOF,
          evAction: s.events.action,
          evTarget: s.events.target,
          evCount: s.events.count,
          maxEvents: s.events.max,
          key: ctx.key('act'),
          labelLike: s.cfg.labels.like,
          labelReshare: s.cfg.labels.reshare,
          labelReport: s.cfg.labels.report,
          noteLike: s.cfg.notes.shown.like,
          noteReshare: s.cfg.notes.shown.reshare,
          herding: s.cfg.votes.herding,
          correction: s.cfg.votes.correction,
          voteScale: s.cfg.votes.scale,
          noveltyWeight: s.cfg.noveltyWeight,
          countsShown: s.cfg.counts === 'shown' ? 1 : 0,
        },
        s.feeds.active.length,
        { chunkRows: USER_CHUNK },
      );
    },
  };
}

/** Opinion dynamics from exposure, plus the feed metrics the update computes on the way. */
export function updatePhase(s: SocialState): Phase {
  return {
    name: 'update',
    state: s,
    reads: ['opinion', 'archetype'],
    writes: ['opinion'],
    tables: { reads: ['feeds', 'posts', 'behaviour'], writes: ['feeds'] },
    metrics: { feed_items: 'i32', feed_stance_distance: 'f64', echo_chamber_index: 'f64', feed_diversity: 'f64', in_network_share: 'f64' },
    async run(world, ctx) {
      const p = s.posts.cols;
      const rows = s.feeds.active.length;
      await world.exec.run(
        K.exposure,
        {
          ...feedArgs(s),
          stance: p.stance,
          opinion: world.agents.columns.opinion,
          archetype: world.agents.columns.archetype,
          behaviour: s.behaviour.values,
          backfireDistance: s.cfg.backfireDistance,
          rowDist: s.feeds.rowDist,
        },
        rows,
        { chunkRows: USER_CHUNK },
      );
      const [users = 0, items = 0, inNet = 0] = await world.exec.reduce(K.feedMix, { ...feedArgs(s), cluster: p.cluster, rowDistinct: s.feeds.rowDistinct }, rows, { chunkRows: USER_CHUNK });
      // Per-user values, added here in user order: the same totals on every backend and thread count.
      const perUser = [s.feeds.rowDist, s.feeds.rowDistinct, s.feeds.len];
      const [rowDist, rowDistinct, feedLen] = world.exec.capture ? await world.exec.capture(perUser) : perUser;
      let dist = 0;
      let div = 0;
      for (let k = 0; k < rows; k++) {
        dist += rowDist[k];
        if (feedLen[k] > 0) div += rowDistinct[k] / feedLen[k];
      }
      const meanDist = items > 0 ? dist / items : 0;
      ctx.metric('feed_items', items);
      ctx.metric('feed_stance_distance', meanDist);
      // 1 when users see only their own stance, 0 at the largest possible distance (2).
      ctx.metric('echo_chamber_index', items > 0 ? 1 - meanDist / 2 : 0);
      ctx.metric('feed_diversity', users > 0 ? div / users : 0);
      ctx.metric('in_network_share', items > 0 ? inNet / items : 0);
    },
  };
}

const TREE_SCHEMA = [
  { name: 'step', type: 'i32' as const, values: new Int32Array(0) },
  { name: 'root', type: 'i32' as const, values: new Int32Array(0) },
  { name: 'scale', type: 'i32' as const, values: new Int32Array(0) },
  { name: 'depth', type: 'i32' as const, values: new Int32Array(0) },
  { name: 'max_breadth', type: 'i32' as const, values: new Int32Array(0) },
  { name: 'size', type: 'i32' as const, values: new Int32Array(0) },
];

/** The trees a run records: reshare cascades and conversations (platform/cascades.ts). */
const TREES = [
  { tracker: 'cascades', file: 'cascades.arrow', metric: 'cascade', changed: 'cascades_changed' },
  { tracker: 'conversations', file: 'conversations.arrow', metric: 'conversation', changed: 'conversations_changed' },
] as const;
const STATS = ['scale', 'depth', 'breadth'] as const;

/**
 * End of step: cascade and conversation rows and metrics, posts leaving the window go to
 * posts.arrow, and every `rebuildEvery` steps the follow deltas are folded into a new CSR.
 */
export function maintainPhase(s: SocialState): Phase {
  let posts: ArrowFileAppender | undefined;
  const files: Array<ArrowFileAppender | undefined> = [];
  // The rows retired go to posts.arrow: a device executor's counts (apply's impressions and
  // countVotes kernels) and topics (writeTopics) come back first, as far as those rows. A
  // compaction moves the rest on the device too (announceHostWrites), where they stay.
  const flush = async (world: World, end: number) => {
    const P = s.posts;
    if (end <= P.first) return;
    await P.forHost([...COUNTED_COLUMNS.map((c) => ({ array: P.cols[c], length: end })), { array: P.topic, length: end * P.dim }]);
    P.retire(end, (cols, r) => posts?.append(cols, r));
  };
  // Carried across steps (and checkpointed): the largest statistics seen so far, per kind of tree.
  const st = { social: s, soFar: TREES.map(() => ({ scale: 0, depth: 0, breadth: 0 })) };
  const metrics: Record<string, 'i32'> = { posts_in_window: 'i32' };
  for (const t of TREES) {
    metrics[t.changed] = 'i32';
    // Over the trees that grew this step, and over every tree of the run so far.
    for (const x of STATS) metrics[`${t.metric}_max_${x}_this_step`] = 'i32';
    for (const x of STATS) metrics[`${t.metric}_max_${x}_so_far`] = 'i32';
  }
  for (const x of ['scale', 'depth', 'max_breadth']) metrics[`story_${x}`] = 'i32';
  metrics.follows_pending = 'i32';
  return {
    name: 'maintain',
    state: st,
    reads: [],
    writes: [],
    tables: { reads: ['posts', 'cascades', 'conversations', 'follows'], writes: ['posts', 'cascades', 'conversations', 'follows'] },
    metrics,
    init(world) {
      if (world.out) {
        posts = world.out.appender('posts.arrow', s.posts.columns(0));
        for (const t of TREES) files.push(world.out.appender(t.file, TREE_SCHEMA));
      }
    },
    async run(world, ctx) {
      TREES.forEach((t, i) => {
        // Negative keys are aggregates without a root post (the scenario's story), not trees.
        const real = s[t.tracker].drainChanged().filter(([r]) => r >= 0);
        const now = { scale: 0, depth: 0, breadth: 0 };
        for (const [, x] of real) {
          now.scale = Math.max(now.scale, x.scale);
          now.depth = Math.max(now.depth, x.depth);
          now.breadth = Math.max(now.breadth, x.maxBreadth);
        }
        if (files[i] && real.length > 0) {
          files[i]!.append(
            [
              { name: 'step', type: 'i32', values: new Int32Array(real.length).fill(ctx.step) },
              { name: 'root', type: 'i32', values: Int32Array.from(real, ([r]) => r) },
              { name: 'scale', type: 'i32', values: Int32Array.from(real, ([, x]) => x.scale) },
              { name: 'depth', type: 'i32', values: Int32Array.from(real, ([, x]) => x.depth) },
              { name: 'max_breadth', type: 'i32', values: Int32Array.from(real, ([, x]) => x.maxBreadth) },
              { name: 'size', type: 'i32', values: Int32Array.from(real, ([, x]) => x.size) },
            ],
            real.length,
          );
        }
        ctx.metric(t.changed, real.length);
        const far = st.soFar[i];
        for (const x of STATS) {
          far[x] = Math.max(far[x], now[x]);
          ctx.metric(`${t.metric}_max_${x}_this_step`, now[x]);
          ctx.metric(`${t.metric}_max_${x}_so_far`, far[x]);
        }
      });
      const story = s.cascades.stats(-1);
      ctx.metric('story_scale', story?.scale ?? 0);
      ctx.metric('story_depth', story?.depth ?? 0);
      ctx.metric('story_max_breadth', story?.maxBreadth ?? 0);

      // Window: posts created before minStep are final.
      const w = windowSteps(s.cfg, world.stepSeconds);
      s.posts.minStep = Math.max(0, ctx.step + 2 - w);
      await flush(world, s.posts.rowsBefore(s.posts.minStep));
      await s.cascades.prune(ctx.step + 1 - w, world.exec);
      await s.conversations.prune(ctx.step + 1 - w, world.exec);
      ctx.metric('posts_in_window', s.posts.live);

      const rebuild = (ctx.step + 1) % s.cfg.rebuildEvery === 0 && s.follows.pending > 0;
      if (rebuild) await rebuildGraph(world, s);
      // Rows moved by a compaction, and the follower counts of a rebuilt graph.
      announceHostWrites(s, { posts: NOTHING, latest: NOTHING, followers: rebuild ? 'any' : NOTHING });
      ctx.metric('follows_pending', s.follows.pending);
    },
    async finish(world) {
      await flush(world, s.posts.count);
      // graph-end.arrow shows the graph as the run left it: the pending follows folded into the
      // following rows as the file is written, not into a new CSR (at 10M agents and 495M edges a
      // second copy of the rows, 2 GB at the run's peak, and their followers' sort).
      if (s.follows.pending > 0) world.endEdges = foldedEdges(world.graph.following, s.follows.added, s.follows.removed);
    },
  };
}

/**
 * Folds the pending follows and unfollows into the following rows (in place where they have room:
 * newFollowing); the followers' rows are built only if read.
 */
async function rebuildGraph(world: World, s: SocialState): Promise<void> {
  const n = world.agents.length;
  // Nothing in a social step reads the followers' rows (follower counts are s.follows.followers), so the
  // new graph builds them only if something else does (withLazyFollowers). Folding into new rows,
  // the old followers go before the new rows are written (meanwhile world.graph holds one CSR in
  // both places) and the old rows after. In place (foldsInPlace) nothing is allocated or freed, so
  // the releases, which collect every thread's heap (~0.8 s a rebuild at 10M agents), are left out.
  const m = world.graph.edges;
  const followerOffsets = world.graph.followers.offsets;
  const inPlace = foldsInPlace(world.graph.following, m + s.follows.added.size);
  world.graph = { nodes: n, edges: m, directed: true, following: world.graph.following, followers: world.graph.following };
  if (!inPlace) await releaseArrays(world.exec);
  const next = await newFollowing(world.exec, world.graph.following, n, s.follows, followerOffsets);
  world.graph = lazyFollowersGraph(n, next.following, next.followerOffsets);
  if (!next.inPlace) await releaseArrays(world.exec);
  const F = next.followerOffsets;
  for (let v = 0; v < n; v++) s.follows.followers[v] = F[v + 1] - F[v];
  s.follows.added.keysA.fill(-1);
  s.follows.added.size = 0;
  s.follows.removed.keysA.fill(-1);
  s.follows.removed.size = 0;
}
