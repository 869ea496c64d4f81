/**
 * Kernels of the social platform's heuristic phases (activate, act, exposure update, feed mix), declared
 * with their inputs and outputs (sim-core/kernel.ts). Per-active-user kernels take rows of the
 * active list: row k writes only user active[k]'s slots. Randomness is keyed by the user's row and
 * a per-row draw number.
 */
import { kernel, kernelList, type ArgsOf } from '../sim-core/kernel.ts';
import { normalPair32, rowDraw, rowHash, rowSeed, splitKey } from '../sim-core/rng.ts';
import { expf32, powf32, sqrtf32 } from '../sim-core/f32math.ts';
import { sharedArray } from '../sim-core/table.ts';
import { NPARAMS, P } from './behaviour.ts';
import { A, MAX_POSTS_PER_STEP, STANCE_NOISE, TOPIC_NOISE } from './events.ts';
import { FLAG } from './posts.ts';
import { actGpu } from './act.wgsl.ts';
import { activateGpu, countVotesGpu, exposureGpu, feedMixGpu, impressionsGpu, packEventsGpu, postContentGpu } from './kernels.wgsl.ts';
import { dotf32, dots4f32, maxRowNorm, nearestPrototype } from './topicDots.ts';

/**
 * The activity clock: an agent with hourly session rate q = activity x profile[chronotype][hour] x
 * archetype factor has a Poisson(q x h) number of sessions in a step of h hours (inverse CDF of one
 * draw, at most 255), and is online when it has at least one, so 1-hour and 15-minute steps agree
 * on sessions per day. `out` holds the count: the act kernel reads it.
 *
 * The arithmetic is float32, each operation rounded as the GPU's software f32 rounds it
 * (platform/kernels.wgsl.ts runs this kernel on the device with the same bytes): lambda is the
 * product in the order written, and `poissonCount32` gives the count.
 */
const activate = kernel(
  { reads: { activity: 'f32', chronotype: 'u8', archetype: 'u16', behaviour: 'f32', profiles: 'f32', suspended: 'u8' }, writes: { out: 'u8' }, params: ['hour', 'stepHours', 'key'] },
  (a, start, end): number[] => {
  const { activity: Act, chronotype: Chr, archetype: Arch, behaviour: B, profiles: Prof, suspended: Sus, hour, out: Out } = a;
  const f = Math.fround;
  const h = f(a.stepHours);
  const [klo, khi] = splitKey(a.key); // rowHash(klo, khi, i) = hash(key, i, 0)
  let c = 0;
  for (let i = start; i < end; i++) {
    const lambda = f(f(f(Act[i] * Prof[Chr[i] * 24 + hour]) * B[Arch[i] * NPARAMS + P.activity]) * h);
    // Suspended accounts draw too, so everyone else's draws are the same with or without a suspension.
    const n = Sus[i] === 0 ? poissonCount32(lambda, rowHash(klo, khi, i)) : 0;
    Out[i] = n;
    if (n > 0) c++;
  }
  return [c];
  },
  activateGpu,
);

/**
 * The Poisson(lambda) count whose float32 CDF first exceeds u = hash / 2^32 (at most 255), for a
 * float32 lambda: p0 = expf32(-lambda), p(n) = p(n-1) x (lambda / n) and the CDF summed in float32;
 * 0 for lambda <= 0 or NaN, 255 from lambda = 88 on (there expf32 is 0, so every CDF term is). The
 * GPU's twin is POISSON_COUNT_WGSL (platform/kernels.wgsl.ts).
 */
export function poissonCount32(lambda: number, hash: number): number {
  if (!(lambda > 0)) return 0;
  if (lambda >= 88) return 255;
  const u = hash / 4294967296;
  // Most agents are offline in a step: expf32(-lambda) >= e^-lambda - 2e-7 >= 1 - lambda - 2e-7
  // (f32math.ts gives its accuracy), so below this bar the count is 0 without the exp.
  if (u < 1 - lambda - 1e-6) return 0;
  const f = Math.fround;
  let p = expf32(-lambda);
  let cdf = p;
  let n = 0;
  while (u >= cdf && n < 255) {
    n++;
    p = f(p * f(lambda / n));
    cdf = f(cdf + p);
  }
  return n;
}

/**
 * The probability that an event of per-session probability p (float32, in [0, 1]) happens in at
 * least one of n sessions: 1 - (1 - p)^n, the power by repeated float32 multiplication (n is small:
 * most users have one session in a step), as the GPU's act computes it.
 */
export function inSessions32(p: number, n: number): number {
  if (n === 1 || p <= 0) return p;
  if (p >= 1) return 1;
  const f = Math.fround;
  const q = f(1 - p);
  let r = q;
  for (let i = 1; i < n; i++) r = f(r * q);
  return f(1 - r);
}

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
  // In the order the WGSL version packs them (act.wgsl.ts), interest first.
  reads: {
    interest: 'f32',
    opinion: 'f32',
    archetype: 'u16',
    /** Activity levels and, below, sessions this step per user (the activate kernel's output). */
    activity: 'f32',
    offsets: 'offsets',
    targets: 'i32',
    behaviour: 'f32',
    followers: 'i32',
    sessions: 'u8',
    /** Attention by post age in steps (attentionTable); covers every post in the table. */
    attention: 'f32',
    /** SOCIAL_PROOF. */
    socialProof: 'f32',
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
    postStep: 'i32',
  },
  writes: { evAction: 'u8', evTarget: 'i32', evCount: 'u16' },
  /** count: rows of the post columns in use (the feeds' posts are among them). */
  params: [...FEED_PARAMS, 'count', 'dim', 'maxEvents', 'key', 'activityRef', 'postExponent', 'step', 'labelLike', 'labelReshare', 'labelReport', 'noteLike', 'noteReshare', 'herding', 'correction', 'voteScale', 'noveltyWeight', 'countsShown'],
} as const;
type ActArgs = ArgsOf<typeof ACT>;

const clamp01 = (x: number) => (x < 0 ? 0 : x > 1 ? 1 : x);

/**
 * The attention a post draws at an age of t steps, for t = 0 .. ages - 1, as float32: exp(-scale x
 * h^exponent) at h = (t - 0.5) x stepHours hours (from the middle of the step it was posted in; 0
 * for t = 0), 1 when scale is 0 (platform.attention). A table of the host's, read by act on either
 * backend, so Math's exp and pow are fine here.
 */
export function attentionTable(ages: number, scale: number, exponent: number, stepHours: number): Float32Array {
  const out = sharedArray('f32', ages);
  for (let t = 0; t < ages; t++) {
    const h = (t - 0.5) * stepHours;
    out[t] = scale === 0 ? 1 : Math.exp(-scale * Math.pow(h > 0 ? h : 0, exponent));
  }
  return out;
}

/**
 * Social proof from an item's visible counters, sp = min(1, log10(1 + c) / 3) for c = likes + 2
 * reposts, as float32 for c < 999 (from c = 999 on it is 1): act reads this table on either backend.
 */
export const SOCIAL_PROOF = sharedArray('f32', 999);
for (let c = 0; c < SOCIAL_PROOF.length; c++) SOCIAL_PROOF[c] = Math.min(1, Math.log10(1 + c) / 3);

/** Post flags that scale likes, reshares and reports (platform.labels): a fact-check label or many reports. */
const LABELLED = FLAG.factCheck | FLAG.reported;

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
 * social proof from visible counters (SOCIAL_PROOF), whether the author is followed, the displayed
 * score (herding and correction on votes, platform.votes; with `countsShown` 0, platform.counts
 * hidden, both read as counts of 0), novelty (reshares x exp(noveltyWeight x
 * novelty)), and flags (a fact-check label or many reports scale likes, reshares and reports by
 * platform.labels, a shown Community Note likes and reshares by platform.notes.shown; state.ts and
 * notes/notesConfig.ts give the sources of these parameters), all scaled by the attention an
 * item still draws at its age (attentionTable). A user reads one feed per step; with n sessions
 * in the step each item's probabilities are per session, so an action happens with probability
 * 1 - (1 - p)^n. It makes Poisson(n x min(1, post x (activity / activityRef)^postExponent)) original
 * posts (at most MAX_POSTS_PER_STEP): per session more active users post more (state.ts gives the
 * calibration), and with probability 1 - (1 - follow)^n it follows the best who-to-follow candidate
 * (preferential attachment: most followers among two friends-of-friends and the out-of-network
 * authors in its feed). Actions go to the user's slot of the event buffer, applied later in user
 * order.
 *
 * The arithmetic is float32, each operation rounded as the GPU's software f32 rounds it, products
 * taken left to right as written (platform/act.wgsl.ts runs this kernel on the device with the
 * same bytes); a draw is taken when hash / 2^32 is below the float32 probability.
 */
const act = kernel(ACT, (a, start, end): number[] => {
  const f = Math.fround;
  const F = a.feedSize;
  const D = a.dim;
  const B = a.behaviour;
  const Att = a.attention;
  const SP = a.socialProof;
  const labelLike = f(a.labelLike);
  const labelReshare = f(a.labelReshare);
  const labelReport = f(a.labelReport);
  const noteLike = f(a.noteLike);
  const noteReshare = f(a.noteReshare);
  const herding = f(a.herding);
  const correction = f(a.correction);
  const voteScale = f(a.voteScale);
  const noveltyWeight = f(a.noveltyWeight);
  const activityRef = f(a.activityRef);
  const postExponent = f(a.postExponent);
  const followedShare = f(1.2);
  const shown = a.countsShown !== 0;
  // The feed items' post fields, gathered per user before the draws (see below).
  const gRow = new Int32Array(F);
  const gAuthor = new Int32Array(F);
  const gStance = new Float32Array(F);
  const gDot = new Float32Array(F);
  const gProof = new Int32Array(F);
  const gScore = new Int32Array(F);
  const gFlags = new Uint8Array(F);
  const gNovelty = new Float32Array(F);
  const gSteps = new Int32Array(F);
  let events = 0;
  for (let k = start; k < end; k++) {
    const u = a.active[k];
    // uniform(key, u, d) = rowDraw(rs, d) / 2^32
    const rs = rowSeed(a.key, u);
    const pb = a.archetype[u] * NPARAMS;
    const x = a.opinion[u];
    const n = a.sessions[u];
    const eb = k * a.maxEvents;
    let ne = 0;
    const len = a.feedLen[k];
    let draw = 0;
    let bestFollow = -1;
    let bestFollowers = -1;
    const lo = a.offsets[u];
    const deg = a.offsets[u + 1] - lo;
    // Each item's fields sit in ten post columns, most reads missing the cache at 1M users: read
    // in a loop of their own (no draws between them), the processor overlaps the misses.
    for (let s = 0; s < len; s++) {
      const r = a.feed[k * F + s] - a.base;
      gRow[s] = r;
      gAuthor[s] = a.author[r];
      gStance[s] = a.stance[r];
      // Hidden counts (platform.counts) read as none: no social proof, a score of 0 (no herding).
      gProof[s] = shown ? a.likes[r] + 2 * a.reposts[r] : 0;
      gScore[s] = shown ? a.likes[r] - a.dislikes[r] + a.treatVote[r] : 0;
      gFlags[s] = a.flags[r];
      gNovelty[s] = a.novelty[r];
      gSteps[s] = a.step - a.postStep[r];
    }
    // Topic match: each item's dot product summed in dimension order, four items at a time so
    // that their chains of dependent float32 additions (and their topic reads) overlap.
    const I = a.interest;
    const T = a.topic;
    const ui = u * D;
    let s4 = 0;
    for (; s4 + 4 <= len; s4 += 4) dots4f32(I, ui, T, gRow[s4] * D, gRow[s4 + 1] * D, gRow[s4 + 2] * D, gRow[s4 + 3] * D, D, gDot, s4);
    for (; s4 < len; s4++) gDot[s4] = dotf32(I, ui, T, gRow[s4] * D, D);
    for (let s = 0; s < len; s++) {
      const id = a.feed[k * F + s];
      const au = gAuthor[s];
      const d = f(x - gStance[s]);
      const agree = f(1 - f((d < 0 ? -d : d) * 0.5));
      const m05 = f(0.5 + f(f(1 + gDot[s]) * 0.5));
      const c = gProof[s];
      const sp1 = f(1 + (c >= 0 && c < SP.length ? SP[c] : 1));
      const followed = a.feedFlags[k * F + s] === 1;
      const flagged = (gFlags[s] & LABELLED) !== 0;
      // A shown note multiplies in on top of a label (platform.notes.shown).
      const noted = (gFlags[s] & FLAG.noted) !== 0;
      const lLike = noted ? f((flagged ? labelLike : 1) * noteLike) : flagged ? labelLike : 1;
      const lShare = noted ? f((flagged ? labelReshare : 1) * noteReshare) : flagged ? labelReshare : 1;
      // Displayed score -> herding (follow its sign) and correction (counter a negative score).
      let g = f(gScore[s] / voteScale);
      g = g > 1 ? 1 : g < -1 ? -1 : g;
      const up = g > 0 ? f(1 + f(herding * g)) : f(1 - f(correction * g));
      const down = g < 0 ? f(1 - f(herding * g)) : 1;
      const nov = gNovelty[s] === 0 ? 1 : expf32(f(noveltyWeight * gNovelty[s]));
      const ag1 = f(1 - agree);
      const dis = f(f(ag1 * ag1) * 4);
      const steps = gSteps[s];
      if (!(steps >= 0 && steps < Att.length)) throw new Error(`act: attention table of ${Att.length} ages misses a post ${steps} steps old`);
      const att = Att[steps];
      const u0 = draw;
      draw += 8;
      // Each probability is a float32 product taken left to right.
      const pLike = f(f(f(f(f(f(att * B[pb + P.like]) * f(0.5 + agree)) * m05) * sp1) * lLike) * up);
      const pDislike = f(f(f(f(att * B[pb + P.dislike]) * f(1.5 - agree)) * m05) * down);
      const pRepost = f(f(f(f(f(f(f(f(f(att * B[pb + P.repost]) * 2) * agree) * agree) * m05) * sp1) * (followed ? followedShare : 1)) * lShare) * nov);
      const pQuote = f(f(f(f(f(att * B[pb + P.quote]) * m05) * sp1) * lShare) * nov);
      const pComment = f(f(f(att * B[pb + P.comment]) * m05) * sp1);
      const pReport = f(f(f(att * B[pb + P.report]) * dis) * (flagged ? labelReport : 1));
      const pMute = f(f(att * B[pb + P.mute]) * dis);
      const pUnfollow = f(f(att * B[pb + P.unfollow]) * dis);
      if (rowDraw(rs, u0) / 4294967296 < inSessions32(clamp01(pLike), n)) ne = emit(a, eb, ne, A.like, id);
      else if (rowDraw(rs, u0 + 1) / 4294967296 < inSessions32(clamp01(pDislike), n)) ne = emit(a, eb, ne, A.dislike, id);
      if (rowDraw(rs, u0 + 2) / 4294967296 < inSessions32(clamp01(pRepost), n)) ne = emit(a, eb, ne, A.repost, id);
      if (rowDraw(rs, u0 + 3) / 4294967296 < inSessions32(clamp01(pQuote), n)) ne = emit(a, eb, ne, A.quote, id);
      if (rowDraw(rs, u0 + 4) / 4294967296 < inSessions32(clamp01(pComment), n)) ne = emit(a, eb, ne, A.comment, id);
      if (rowDraw(rs, u0 + 5) / 4294967296 < inSessions32(clamp01(pReport), n)) ne = emit(a, eb, ne, A.report, id);
      if (rowDraw(rs, u0 + 6) / 4294967296 < inSessions32(clamp01(pMute), n)) ne = emit(a, eb, ne, A.mute, au);
      if (followed && rowDraw(rs, u0 + 7) / 4294967296 < inSessions32(clamp01(pUnfollow), n)) ne = emit(a, eb, ne, A.unfollow, au);
      // Out-of-network items are by accounts the user does not follow (the recommender checks).
      if (!followed && au !== u && a.followers[au] > bestFollowers) {
        bestFollow = au;
        bestFollowers = a.followers[au];
      }
    }
    const perSession = f(B[pb + P.post] * powf32(f(a.activity[u] / activityRef), postExponent));
    const posts = poissonCount32(f(n * (perSession < 1 ? perSession : 1)), rowDraw(rs, draw++));
    for (let j = 0; j < posts && j < MAX_POSTS_PER_STEP; j++) ne = emit(a, eb, ne, A.post, -1);
    if (rowDraw(rs, draw++) / 4294967296 < inSessions32(B[pb + P.follow], n)) {
      // Two friends-of-friends join the feed authors; the most-followed one not yet followed wins.
      for (let t = 0; t < 2 && deg > 0; t++) {
        const v = a.targets[lo + Math.floor(rowDraw(rs, draw++) / 4294967296 * deg)];
        const vlo = a.offsets[v];
        const vdeg = a.offsets[v + 1] - vlo;
        if (vdeg === 0) continue;
        const w = a.targets[vlo + Math.floor(rowDraw(rs, draw++) / 4294967296 * vdeg)];
        if (w !== u && (a.followers[w] > bestFollowers || (a.followers[w] === bestFollowers && w > bestFollow)) && !follows(a.targets, lo, deg, w)) {
          bestFollow = w;
          bestFollowers = a.followers[w];
        }
      }
      if (bestFollow >= 0) ne = emit(a, eb, ne, A.follow, bestFollow);
    }
    a.evCount[k] = ne;
    events += ne;
  }
  return [events];
}, actGpu);

/**
 * Opinion update from exposure (bounded confidence with optional backfire): an active user moves
 * toward the mean of the items it read whose stance is within its archetype's eps, at rate mu, and
 * away from the mean of items farther than `backfireDistance`, at rate `backfire`; clamped to
 * [-1, 1]. Reads only the user's own row and posts, so rows update in place. `rowDist[k]` gets the
 * sum of |stance - opinion| over row k's items before the update (0 without a feed), for the
 * feed's stance-distance metric.
 *
 * The arithmetic is float32 in the order written, each operation rounded as the GPU's software f32
 * rounds it (platform/kernels.wgsl.ts runs this kernel on the device with the same bytes).
 */
const exposure = kernel(
  // archetype first: the WGSL version packs the reads in this order, and keeps the pack per first member.
  { reads: { archetype: 'u16', behaviour: 'f32', stance: 'f32', ...FEED_READS }, writes: { opinion: 'f32', rowDist: 'f32' }, params: [...FEED_PARAMS, 'backfireDistance'] },
  (a, start, end): void => {
  const f = Math.fround;
  const F = a.feedSize;
  const B = a.behaviour;
  const far = f(a.backfireDistance);
  for (let k = start; k < end; k++) {
    const len = a.feedLen[k];
    if (len === 0) {
      a.rowDist[k] = 0;
      continue;
    }
    const u = a.active[k];
    const pb = a.archetype[u] * NPARAMS;
    const eps = B[pb + P.eps];
    const x = a.opinion[u];
    let pull = 0;
    let np = 0;
    let push = 0;
    let nb = 0;
    let dist = 0;
    for (let s = 0; s < len; s++) {
      const d = f(a.stance[a.feed[k * F + s] - a.base] - x);
      const ad = d < 0 ? -d : d;
      dist = f(dist + ad);
      if (ad < eps) {
        pull = f(pull + d);
        np++;
      } else if (ad > far) {
        push = f(push + d);
        nb++;
      }
    }
    let nx = x;
    if (np > 0) nx = f(nx + f(f(B[pb + P.mu] * pull) / np));
    if (nb > 0) nx = f(nx - f(f(B[pb + P.backfire] * push) / nb));
    if (nx < -1) nx = -1;
    else if (nx > 1) nx = 1;
    a.opinion[u] = nx;
    a.rowDist[k] = dist;
  }
  },
  exposureGpu,
);

/**
 * What the active users' feeds held: returns [users with a feed, items, in-network items], and
 * rowDistinct[k] gets the number of distinct topic clusters among row k's items (0 without a
 * feed), for the diversity metric (summed on the host in user order).
 */
const feedMix = kernel({ reads: { ...FEED_READS, cluster: 'u8' }, writes: { rowDistinct: 'u8' }, params: FEED_PARAMS }, (a, start, end): number[] => {
  const F = a.feedSize;
  let users = 0;
  let items = 0;
  let inNet = 0;
  for (let k = start; k < end; k++) {
    const len = a.feedLen[k];
    let distinct = 0;
    for (let s = 0; s < len; s++) {
      inNet += a.feedFlags[k * F + s];
      const c = a.cluster[a.feed[k * F + s] - a.base];
      let seen = false;
      for (let t = 0; t < s; t++) if (a.cluster[a.feed[k * F + t] - a.base] === c) seen = true;
      if (!seen) distinct++;
    }
    a.rowDistinct[k] = distinct;
    if (len > 0) users++;
    items += len;
  }
  return [users, items, inNet];
}, feedMixGpu);

/**
 * Impressions: each item of an active row's feed adds one to its post's count. Two threads' rows
 * can show the same post, so the adds are atomic; the counts do not depend on their order.
 * `first` and `count`: the post table's live rows (feeds hold live posts only; an item outside
 * them is not counted), which are all a device version writes (platform/kernels.wgsl.ts).
 */
const impressions = kernel({ reads: FEED_READS, writes: { impressions: 'i32' }, params: [...FEED_PARAMS, 'first', 'count'] }, (a, start, end): void => {
  const { feed, feedLen, impressions: out, feedSize: F, base, first, count } = a;
  for (let k = start; k < end; k++) {
    const len = feedLen[k];
    for (let i = 0; i < len; i++) {
      const r = feed[k * F + i] - base;
      if (r >= first && r < count) Atomics.add(out, r, 1);
    }
  }
}, impressionsGpu);

/**
 * The step's likes and dislikes added to their posts' counts: active row k's actions are
 * evAction and evTarget[k x maxEvents ..], evCount[k] of them, targets the ids of live posts (rows
 * first .. count - 1; others are not counted). A vote by a row whose voter's opinion
 * (voterOpinion[k], the one it acted on: update comes later in the step) is below 0 also counts
 * in likesLeft or dislikesLeft, the per-side counts of the bridging ranker. Two threads' rows can
 * like the same post, so the adds are atomic; the counts do not depend on their order. A device
 * version writes those rows only (platform/kernels.wgsl.ts).
 */
const countVotes = kernel(
  {
    reads: { evCount: 'u16', evAction: 'u8', evTarget: 'i32', voterOpinion: 'f32' },
    writes: { likes: 'i32', dislikes: 'i32', likesLeft: 'i32', dislikesLeft: 'i32' },
    params: ['maxEvents', 'base', 'first', 'count'],
  },
  (a, start, end): void => {
    const { evCount, evAction, evTarget, likes, dislikes, likesLeft, dislikesLeft, maxEvents: E, base, first, count } = a;
    for (let k = start; k < end; k++) {
      const left = a.voterOpinion[k] < 0;
      for (let j = k * E; j < k * E + evCount[k]; j++) {
        const act = evAction[j];
        if (act !== A.like && act !== A.dislike) continue;
        const r = evTarget[j] - base;
        if (r < first || r >= count) continue;
        Atomics.add(act === A.like ? likes : dislikes, r, 1);
        if (left) Atomics.add(act === A.like ? likesLeft : dislikesLeft, r, 1);
      }
    }
  },
  countVotesGpu,
);

/**
 * The content of the original posts an active user makes this step (the act kernel's `post`
 * events), computed here in parallel for the apply phase, which adds the posts in user order: the
 * topic, the user's interest plus N(0, 0.3^2) noise per component, normalised; the stance, its
 * opinion plus N(0, 0.1^2), clamped to [-1, 1]; and the topic cluster (the nearest prototype).
 * Draws are keyed by user, so all of a user's posts in one step share them. Rows without a post
 * event are left as they are. Float32 throughout, each operation rounded as the GPU rounds it
 * (normalPair32 and sqrtf32 of sim-core; platform/kernels.wgsl.ts gives the same bytes on the device).
 */
const postContent = kernel(
  {
    // interest first: the WGSL version packs the reads in this order, and keeps the pack per first member.
    reads: { interest: 'f32', prototypes: 'f32', opinion: 'f32', active: 'i32', evAction: 'u8', evCount: 'u16' },
    writes: { topic: 'f32', stance: 'f32', cluster: 'u8' },
    params: ['dim', 'topics', 'maxEvents', 'key'],
  },
  (a, start, end): void => {
    const f = Math.fround;
    const { interest: I, topic: T, dim: D, key } = a;
    const topicNoise = f(TOPIC_NOISE);
    const stanceNoise = f(STANCE_NOISE);
    const z = new Float32Array(2);
    const maxNorm = maxRowNorm(a.prototypes, a.topics, D);
    for (let k = start; k < end; k++) {
      let posts = false;
      for (let e = 0; e < a.evCount[k] && !posts; e++) posts = a.evAction[k * a.maxEvents + e] === A.post;
      if (!posts) continue;
      const u = a.active[k];
      // Normal pair 0 gives the stance's noise (its first value); pairs 1, 2, ... the topic's, two
      // components each.
      let norm = 0;
      for (let d = 0; d < D; d++) {
        if ((d & 1) === 0) normalPair32(key, u, 1 + (d >> 1), z, 0);
        const x = f(I[u * D + d] + f(topicNoise * z[d & 1]));
        T[k * D + d] = x;
        norm = f(norm + f(x * x));
      }
      norm = sqrtf32(norm) || 1;
      for (let d = 0; d < D; d++) T[k * D + d] = f(T[k * D + d] / norm);
      normalPair32(key, u, 0, z, 0);
      const st = f(a.opinion[u] + f(stanceNoise * z[0]));
      a.stance[k] = st < -1 ? -1 : st > 1 ? 1 : st;
      a.cluster[k] = nearestPrototype(a.prototypes, a.topics, D, T, k * D, maxNorm);
    }
  },
  postContentGpu,
);

/**
 * The step's actions packed back to back for reading (apply on a device executor, whose action
 * buffers hold maxEvents slots a user): one row per action i, of the user k whose range
 * [evStart[k], evStart[k + 1]) holds it (evStart: the exclusive prefix of evCount over the `users`
 * active rows, then the total); packedAction[i] and packedTarget[i] are that user's action i -
 * evStart[k]. At 10M agents the action buffers are ~300 MB a step, their actions ~10 MB.
 */
const packEvents = kernel(
  {
    reads: { evAction: 'u8', evTarget: 'i32', evStart: 'i32' },
    writes: { packedAction: 'u32', packedTarget: 'i32' },
    params: ['users', 'maxEvents'],
  },
  (a, start, end): void => {
    const { evStart, maxEvents: E } = a;
    // The user of row `start` (the last whose range starts at or before it), then walk forward.
    let lo = 0;
    let hi = a.users;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (evStart[mid] <= start) lo = mid;
      else hi = mid;
    }
    let k = lo;
    for (let i = start; i < end; i++) {
      while (evStart[k + 1] <= i) k++;
      const j = k * E + (i - evStart[k]);
      a.packedAction[i] = a.evAction[j];
      a.packedTarget[i] = a.evTarget[j];
    }
  },
  packEventsGpu,
);

export const kernels = kernelList(import.meta.url, { activate, act, exposure, feedMix, impressions, countVotes, postContent, packEvents });
