/**
 * Kernels of the social platform's heuristic phases (activate, act, exposure update), declared
 * with their inputs and outputs (sim-core/kernel.ts). Per-active-user kernels take rows of the
 * active list: row k writes only user active[k]'s slots. Randomness is keyed by the user's row and
 * a per-row draw number.
 */
import { kernel, kernelList, type ArgsOf } from '../sim-core/kernel.ts';
import { uniform } from '../sim-core/rng.ts';
import { NPARAMS, P } from './behaviour.ts';

/** Action codes, as in events.arrow's `action` dictionary. */
export const ACTIONS = ['refresh', 'like', 'dislike', 'repost', 'quote', 'comment', 'report', 'mute', 'unfollow', 'follow', 'post', 'nothing'] as const;
export const A = Object.fromEntries(ACTIONS.map((x, i) => [x, i])) as Record<(typeof ACTIONS)[number], number>;

/**
 * The activity clock: an agent with hourly activity rate q = activity x profile[chronotype][hour] x
 * archetype factor is online in a step of h hours with probability 1 - (1 - q)^h (at least one
 * session at the same hourly rate), so 1-hour and 3-minute steps agree on activity per day.
 */
const activate = kernel(
  { reads: { activity: 'f32', chronotype: 'u8', archetype: 'u16', behaviour: 'f32', profiles: 'f32', suspended: 'u8' }, writes: { out: 'u8' }, params: ['hour', 'stepHours', 'key'] },
  (a, start, end): number[] => {
  const { activity: Act, chronotype: Chr, archetype: Arch, behaviour: B, profiles: Prof, suspended: Sus, hour, stepHours, key, out: Out } = a;
  let c = 0;
  for (let i = start; i < end; i++) {
    let q = Act[i] * Prof[Chr[i] * 24 + hour] * B[Arch[i] * NPARAMS + P.activity];
    if (q > 0.999) q = 0.999;
    const p = 1 - Math.pow(1 - q, stepHours);
    // Suspended accounts draw too, so everyone else's draws are the same with or without a suspension.
    const on = uniform(key, i) < p && Sus[i] === 0 ? 1 : 0;
    Out[i] = on;
    c += on;
  }
  return [c];
  },
);

/** What every per-active-user kernel reads: who is online and what each was shown (state.ts `feedArgs`). */
export const FEED_READS = {
  active: 'i32',
  feed: 'i32',
  /** 1 where the item came from a followed account. */
  feedFlags: 'u8',
  feedLen: 'u8',
} as const;
/** feedSize: items per feed slot; base: id of the post table's row 0. */
export const FEED_PARAMS = ['feedSize', 'base'] as const;
export type FeedRows = ArgsOf<{ reads: typeof FEED_READS; writes: {}; params: typeof FEED_PARAMS }>;

const ACT = {
  reads: {
    ...FEED_READS,
    author: 'i32',
    stance: 'f32',
    likes: 'i32',
    dislikes: 'i32',
    reposts: 'i32',
    flags: 'u8',
    novelty: 'f32',
    treatVote: 'i8',
    topic: 'f32',
    opinion: 'f32',
    interest: 'f32',
    archetype: 'u16',
    behaviour: 'f32',
    followers: 'i32',
    offsets: 'offsets',
    targets: 'i32',
  },
  writes: { evAction: 'u8', evTarget: 'i32', evCount: 'u16' },
  params: [...FEED_PARAMS, 'dim', 'maxEvents', 'key', 'labelLike', 'labelReshare', 'labelReport', 'herding', 'correction', 'voteScale', 'noveltyWeight'],
} as const;
type ActArgs = ArgsOf<typeof ACT>;

const clamp01 = (x: number) => (x < 0 ? 0 : x > 1 ? 1 : x);

/** Writes one event into the user's slot of the event buffer; returns the slot's new count. */
function emit(a: ActArgs, slot: number, count: number, action: number, target: number): number {
  a.evAction[slot + count] = action;
  a.evTarget[slot + count] = target;
  return count + 1;
}

/** Whether the followee row targets[lo .. lo + deg) contains v. */
function follows(targets: Int32Array, lo: number, deg: number, v: number): boolean {
  for (let j = 0; j < deg; j++) if (targets[lo + j] === v) return true;
  return false;
}

/**
 * Each active user reads its feed and samples actions per item from its archetype's parameters x
 * item features: stance agreement a = 1 - |opinion - stance| / 2, topic match m = (1 + cos) / 2,
 * social proof from visible counters, whether the author is followed, the displayed score (herding
 * and correction on votes, platform.votes), novelty (reshares x exp(noveltyWeight x novelty)), and
 * flags (a fact-check label or many reports scale likes, reshares and reports by platform.labels;
 * state.ts gives the sources of these parameters). Per session it may post and may
 * follow the best who-to-follow candidate (preferential attachment: most followers among two
 * friends-of-friends and the out-of-network authors in its feed). Actions go to the user's slot of
 * the event buffer, applied later in user order.
 */
const act = kernel(ACT, (a, start, end): number[] => {
  const F = a.feedSize;
  const D = a.dim;
  const B = a.behaviour;
  let events = 0;
  for (let k = start; k < end; k++) {
    const u = a.active[k];
    const pb = a.archetype[u] * NPARAMS;
    const x = a.opinion[u];
    const eb = k * a.maxEvents;
    let ne = 0;
    const len = a.feedLen[k];
    let draw = 0;
    let bestFollow = -1;
    let bestFollowers = -1;
    const lo = a.offsets[u];
    const deg = a.offsets[u + 1] - lo;
    for (let s = 0; s < len; s++) {
      const id = a.feed[k * F + s];
      const r = id - a.base;
      const au = a.author[r];
      const agree = 1 - Math.abs(x - a.stance[r]) / 2;
      let dot = 0;
      for (let d = 0; d < D; d++) dot += a.interest[u * D + d] * a.topic[r * D + d];
      const m = (1 + dot) / 2;
      const sp = Math.min(1, Math.log10(1 + a.likes[r] + 2 * a.reposts[r]) / 3);
      const followed = a.feedFlags[k * F + s] === 1;
      // Fact-check label (2) or many reports (4).
      const flagged = (a.flags[r] & 6) !== 0;
      const lLike = flagged ? a.labelLike : 1;
      const lShare = flagged ? a.labelReshare : 1;
      // Displayed score -> herding (follow its sign) and correction (counter a negative score).
      let g = (a.likes[r] - a.dislikes[r] + a.treatVote[r]) / a.voteScale;
      g = g > 1 ? 1 : g < -1 ? -1 : g;
      const up = g > 0 ? 1 + a.herding * g : 1 - a.correction * g;
      const down = g < 0 ? 1 - a.herding * g : 1;
      const nov = a.novelty[r] === 0 ? 1 : Math.exp(a.noveltyWeight * a.novelty[r]);
      const dis = (1 - agree) * (1 - agree) * 4;
      const u0 = draw;
      draw += 8;
      if (uniform(a.key, u, u0) < clamp01(B[pb + P.like] * (0.5 + agree) * (0.5 + m) * (1 + sp) * lLike * up)) ne = emit(a, eb, ne, 1, id);
      else if (uniform(a.key, u, u0 + 1) < clamp01(B[pb + P.dislike] * (1.5 - agree) * (0.5 + m) * down)) ne = emit(a, eb, ne, 2, id);
      if (uniform(a.key, u, u0 + 2) < clamp01(B[pb + P.repost] * 2 * agree * agree * (0.5 + m) * (1 + sp) * (followed ? 1.2 : 1) * lShare * nov)) ne = emit(a, eb, ne, 3, id);
      if (uniform(a.key, u, u0 + 3) < clamp01(B[pb + P.quote] * (0.5 + m) * (1 + sp) * lShare * nov)) ne = emit(a, eb, ne, 4, id);
      if (uniform(a.key, u, u0 + 4) < clamp01(B[pb + P.comment] * (0.5 + m) * (1 + sp))) ne = emit(a, eb, ne, 5, id);
      if (uniform(a.key, u, u0 + 5) < clamp01(B[pb + P.report] * dis * (flagged ? a.labelReport : 1))) ne = emit(a, eb, ne, 6, id);
      if (uniform(a.key, u, u0 + 6) < clamp01(B[pb + P.mute] * dis)) ne = emit(a, eb, ne, 7, au);
      if (followed && uniform(a.key, u, u0 + 7) < clamp01(B[pb + P.unfollow] * dis)) ne = emit(a, eb, ne, 8, au);
      // Out-of-network items are by accounts the user does not follow (the recommender checks).
      if (!followed && au !== u && a.followers[au] > bestFollowers) {
        bestFollow = au;
        bestFollowers = a.followers[au];
      }
    }
    if (uniform(a.key, u, draw++) < B[pb + P.post]) ne = emit(a, eb, ne, 10, -1);
    if (uniform(a.key, u, draw++) < B[pb + P.follow]) {
      // Two friends-of-friends join the feed authors; the most-followed one not yet followed wins.
      for (let t = 0; t < 2 && deg > 0; t++) {
        const v = a.targets[lo + Math.floor(uniform(a.key, u, draw++) * deg)];
        const vlo = a.offsets[v];
        const vdeg = a.offsets[v + 1] - vlo;
        if (vdeg === 0) continue;
        const w = a.targets[vlo + Math.floor(uniform(a.key, u, draw++) * vdeg)];
        if (w !== u && (a.followers[w] > bestFollowers || (a.followers[w] === bestFollowers && w > bestFollow)) && !follows(a.targets, lo, deg, w)) {
          bestFollow = w;
          bestFollowers = a.followers[w];
        }
      }
      if (bestFollow >= 0) ne = emit(a, eb, ne, 9, bestFollow);
    }
    a.evCount[k] = ne;
    events += ne;
  }
  return [events];
});

/**
 * Opinion update from exposure (bounded confidence with optional backfire): an active user moves
 * toward the mean of the items it read whose stance is within its archetype's eps, at rate mu, and
 * away from the mean of items farther than `backfireDistance`, at rate `backfire`; clamped to
 * [-1, 1]. Reads only the user's own row and posts, so rows update in place. Returns feed metrics:
 * [users with a feed, items, sum |stance - opinion| before the update, in-network items, sum over
 * users of distinct clusters / items].
 */
const exposure = kernel(
  { reads: { ...FEED_READS, stance: 'f32', cluster: 'u8', archetype: 'u16', behaviour: 'f32' }, writes: { opinion: 'f32' }, params: [...FEED_PARAMS, 'backfireDistance'] },
  (a, start, end): number[] => {
  const F = a.feedSize;
  const B = a.behaviour;
  let users = 0;
  let items = 0;
  let dist = 0;
  let inNet = 0;
  let diversity = 0;
  for (let k = start; k < end; k++) {
    const len = a.feedLen[k];
    if (len === 0) continue;
    const u = a.active[k];
    const pb = a.archetype[u] * NPARAMS;
    const eps = B[pb + P.eps];
    const x = a.opinion[u];
    let pull = 0;
    let np = 0;
    let push = 0;
    let nb = 0;
    let distinct = 0;
    for (let s = 0; s < len; s++) {
      const r = a.feed[k * F + s] - a.base;
      const d = a.stance[r] - x;
      const ad = d < 0 ? -d : d;
      dist += ad;
      if (ad < eps) {
        pull += d;
        np++;
      } else if (ad > a.backfireDistance) {
        push += d;
        nb++;
      }
      inNet += a.feedFlags[k * F + s];
      const c = a.cluster[r];
      let seen = false;
      for (let t = 0; t < s; t++) if (a.cluster[a.feed[k * F + t] - a.base] === c) seen = true;
      if (!seen) distinct++;
    }
    let nx = x + (np > 0 ? (B[pb + P.mu] * pull) / np : 0) - (nb > 0 ? (B[pb + P.backfire] * push) / nb : 0);
    if (nx < -1) nx = -1;
    else if (nx > 1) nx = 1;
    a.opinion[u] = nx;
    users++;
    items += len;
    diversity += distinct / len;
  }
  return [users, items, dist, inNet, diversity];
  },
);

export const kernels = kernelList(import.meta.url, { activate, act, exposure });
