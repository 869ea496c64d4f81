/**
 * The recommend phase: rebuild the candidate structures from the posts in the window, then build
 * every active user's feed with the `recommend` kernel (recsys/kernels.ts).
 */
import type { Phase } from '../sim-core/phase.ts';
import { sharedArray } from '../sim-core/table.ts';
import { IndexList } from '../sim-core/indexList.ts';
import { feedArgs, USER_CHUNK, type SocialState } from '../platform/state.ts';
import { createCandidateIndex, rebuildCandidates, type CandidateIndex } from './candidates.ts';
import { PostRecords } from './records.ts';
import { kernels as K, type PLUGIN_FEED } from './kernels.ts';
import type { Kernel } from '../sim-core/kernel.ts';
import { rankerOf } from './rankerRegistry.ts';
import { RECENCY_CODE } from './rankers/xInterest.ts';
import { markDominant } from './prosocial.ts';

export function recommendPhase(s: SocialState): Phase {
  // Carried across steps (and saved in checkpoints): the candidate index, the packed post records
  // (built incrementally) and the bitset of authors with posts in the window.
  const st: { social: SocialState; idx?: CandidateIndex; records: PostRecords; recent: Uint8Array } = {
    social: s,
    records: new PostRecords(s.posts.dim),
    recent: sharedArray('u8', 0),
  };
  // Bit per user: has muted someone (most users have not, and they skip the feed kernel's two
  // mute-set probes per candidate); the bytes set this step.
  let muters = sharedArray('u8', 0);
  const newMuters = new IndexList();
  // Interests as int8, as the records hold topics (the feed kernel's interest term); interests are static.
  let interestQ = sharedArray('i8', 0);
  // Byte per user: among the dominant voices this step (platform.dominant; rewritten every step it is on).
  let dominant = sharedArray('u8', 0);
  return {
    name: 'recommend',
    state: st,
    // opinion: a plugin ranker's feature (defineRanker.ts).
    reads: ['interest', 'opinion'],
    writes: [],
    tables: { reads: ['posts', 'readers', 'follows', 'feeds', 'records'], writes: ['feeds', 'readers', 'records'] },
    async init(world) {
      st.records.bind(world.exec);
      st.idx = createCandidateIndex(s.topics, s.cfg.perCluster, s.cfg.trending);
      const D = s.posts.dim;
      const interest = world.agents.columns.interest as Float32Array;
      interestQ = sharedArray('i8', interest.length);
      await world.exec.run(K.quantiseInterests, { interest, out: interestQ }, interest.length);
      await world.exec.run(
        K.nearestClusters,
        { interest: world.agents.columns.interest, prototypes: s.prototypes, topics: s.topics, dim: D, probe: s.cfg.probe, out: s.readers.clusters },
        world.agents.length,
      );
    },
    async run(world, ctx) {
      const key = ctx.key('recommend');
      // Read every step: the setRanker and setParam interventions change them during a run.
      const { code: ranker, plugin } = rankerOf(s.cfg.ranker);
      const recency = RECENCY_CODE[s.cfg.recency];
      const { records } = st;
      const idx = st.idx!;
      const removed = await records.update(s.posts, { ranker, step: ctx.step, stepSeconds: world.stepSeconds, tauHours: s.cfg.tauHours, recency, followers: s.follows.followers });
      await rebuildCandidates(world.exec, idx, s.posts, records, { ranker, minStep: s.posts.minStep, key });
      const p = s.posts.cols;
      const boosting = s.cfg.outPartisan !== 1;
      // Downranking dominant voices: who they are now (the host keeps the follower counts).
      const demoting = s.cfg.dominant.factor !== 1;
      if (demoting) {
        if (dominant.length !== world.agents.length) dominant = sharedArray('u8', world.agents.length);
        markDominant(s.follows.followers, s.cfg.dominant.share, dominant);
        s.follows.wrote(dominant);
      }
      const G = world.graph.following;
      // Authors with posts in the window, so the feed kernel skips silent followees cheaply.
      if (st.recent.length === 0) st.recent = sharedArray('u8', (world.agents.length + 7) >> 3);
      const recent = st.recent;
      await world.exec.run(K.recentAuthors, { latest: s.posts.latest, recent, firstId: s.posts.base + s.posts.rowsBefore(s.posts.minStep) }, world.agents.length);
      if (muters.length === 0) muters = sharedArray('u8', recent.length);
      // Mutes are never lifted: only bits of new muters are set, and a device's copy gets those.
      const muteA = s.follows.mutes.keysA;
      newMuters.clear();
      for (let i = 0; i < muteA.length; i++) {
        const u = muteA[i];
        if (u !== -1 && (muters[u >> 3] & (1 << (u & 7))) === 0) {
          muters[u >> 3] |= 1 << (u & 7);
          newMuters.push(u >> 3);
        }
      }
      s.follows.wroteAt(muters, newMuters.at, newMuters.n);
      const args = {
        ...feedArgs(s),
        offsets: G.offsets,
        targets: G.targets,
        latest: s.posts.latest,
        recent,
        count: s.posts.count,
        rootAuthor: p.root_author,
        flags: p.flags,
        rec: records.rec,
        recF: records.recF,
        recQ: records.recQ,
        score: records.score,
        stride: records.stride,
        followers: s.follows.followers,
        interestQ,
        userClusters: s.readers.clusters,
        clusterPosts: idx.clusterPosts,
        trending: idx.trending,
        muteA: s.follows.mutes.keysA,
        muters,
        muteB: s.follows.mutes.keysB,
        seen: s.readers.seen,
        seenAt: s.readers.seenAt,
        dim: s.posts.dim,
        probe: s.cfg.probe,
        perCluster: s.cfg.perCluster,
        seenSize: s.cfg.seenSize,
        inNetwork: s.cfg.inNetwork,
        ranker,
        minStep: s.posts.minStep,
        minRow: s.posts.rowsBefore(s.posts.minStep),
        perAuthor: s.cfg.perAuthor,
        maxScan: s.cfg.maxScan,
        removed,
        key,
        // The prosocial terms (prosocial.ts); their arrays only where they are read (a device
        // executor would bring them back for nothing).
        outBoost: s.cfg.outPartisan,
        stance: boosting || plugin ? p.stance : NO_F32,
        opinion: boosting || plugin ? world.agents.columns.opinion : NO_F32,
        demote: s.cfg.dominant.factor,
        dominant: demoting ? dominant : NO_U8,
      };
      if (!plugin) {
        for (const [on, what] of [[boosting, 'platform.outPartisan'], [demoting, 'platform.dominant.factor']] as const) {
          if (on && s.feeds.onDevice) saysOnCpu(what, `${what} is not 1: the feed kernel runs on the CPU (the prosocial terms have no WGSL); the other kernels stay on the device`);
        }
        await world.exec.run(K.recommend, args, s.feeds.active.length, { chunkRows: USER_CHUNK });
        return;
      }
      if (s.feeds.onDevice) saysOnCpu(plugin.name, `ranker ${plugin.name} is a plugin's: its feed kernel runs on the CPU (user scoring has no WGSL); the other kernels stay on the device`);
      // A plugin's feed kernel reads the post and user features its score function receives.
      const features = { likes: p.likes, dislikes: p.dislikes, reposts: p.reposts, cluster: p.cluster, now: ctx.step, stepSeconds: world.stepSeconds };
      await world.exec.run(plugin.feed as Kernel<typeof PLUGIN_FEED>, { ...args, ...features }, s.feeds.active.length, { chunkRows: USER_CHUNK });
    },
  };
}

const toldCpu = new Set<string>();
const NO_F32 = sharedArray('f32', 0);
const NO_U8 = sharedArray('u8', 0);

/** Says once per cause (a plugin's ranker, a prosocial feed term) that the feed kernel runs on the CPU beside a device's kernels. */
function saysOnCpu(cause: string, message: string): void {
  if (toldCpu.has(cause)) return;
  toldCpu.add(cause);
  process.stderr.write(`socsim: ${message}\n`);
}
