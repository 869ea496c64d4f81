/**
 * The feed kernel: for each active user, candidate generation and ranking in one pass over its row
 * (per-row top-k over candidates; the kernel contract: docs/architecture.md). Registered with the executor so worker
 * threads import it by URL.
 *
 * Candidates: in-network (recent posts, reposts included, of the accounts the user follows, walked
 * newest first through each author's post chain), out-of-network (the best recent posts of the
 * topic clusters nearest the user's interests; for a ranker whose outOfNetwork is `window`, the
 * random one, posts drawn uniformly from the window instead) and trending (the global hot list).
 * Filtered: own posts, muted authors (the post's author and its cascade root's author), the user's
 * recent impressions, duplicates. Ranked by the scenario's ranker (recommender.ts; `ranker` is its
 * code, rankerRegistry.ts), or by a plugin's function (feedLoop); the feed takes up to `inNetwork`
 * in-network items, then fills up to `feedSize` from out-of-network candidates.
 *
 * Beside it, the per-step kernels that prepare what it reads, each over all rows in parallel:
 * users' nearest clusters (once, at set-up), the authors with posts in the window, every post's
 * static record fields and base score (the candidate lists' kernels are in candidateKernels.ts).
 */
import { kernel, kernelList, type ArgsOf } from '../sim-core/kernel.ts';
import { pairSetHas } from '../sim-core/pairSet.ts';
import { hash } from '../sim-core/rng.ts';
import { FEED_TERM, quantise, rankedBase } from './recommender.ts';
import { BUNDLED_RANKERS } from './rankerRegistry.ts';
import { randomScore } from './rankers/random.ts';
import { MAX_DOT, xInterestScore } from './rankers/xInterest.ts';
import { FLAG } from '../platform/posts.ts';
import { outPartisan, scaleScore } from './prosocial.ts';
import { recentAuthorsGpu, recommendGpu } from './gpuKernels.ts';
import { recordStaticsGpu } from './recordStatics.wgsl.ts';
import { baseScoresGpu } from './baseScores.wgsl.ts';

const FLAG_REMOVED = FLAG.removed;

const RECOMMEND = {
  reads: {
    active: 'i32',
    offsets: 'offsets',
    targets: 'i32',
    latest: 'i32',
    /** Bit per user: has a post in the window (a 1M-user bitset is 125 KB, cache-resident). */
    recent: 'u8',
    rootAuthor: 'i32',
    /** Post flags: removed posts (FLAG.removed) never enter a feed; read only when `removed` > 0. */
    flags: 'u8',
    /** Packed post records (records.ts): Int32, Float32 and Int8 views of one buffer. */
    rec: 'i32',
    recF: 'f32',
    recQ: 'i8',
    /**
     * The base scores as a column (records.ts `score`), with a device executor, where the records'
     * recF words are not written (this kernel on the CPU reads them here too); empty otherwise, and
     * the CPU reads them from the records.
     */
    score: 'f32',
    followers: 'i32',
    /** Interests as int8 round(TOPIC_SCALE x component), as records hold topics. */
    interestQ: 'i8',
    userClusters: 'u8',
    clusterPosts: 'i32',
    trending: 'i32',
    muteA: 'i32',
    muteB: 'i32',
    /** Bit per user: has muted someone (so muteA holds pairs of it). */
    muters: 'u8',
    /** Post stances and user opinions: read only when `outBoost` is not 1 (prosocial.ts). */
    stance: 'f32',
    opinion: 'f32',
    /** Byte per user: 1 for the dominant voices (prosocial.ts markDominant); read only when `demote` is not 1. */
    dominant: 'u8',
  },
  /** The feed slots of active rows, and the impression ring (seen, seenAt) of their users. */
  writes: { seen: 'i32', seenAt: 'u8', feed: 'i32', feedFlags: 'u8', feedLen: 'u8' },
  /** minRow: first row created at or after minStep; removed: how many posts carry FLAG.removed. */
  params: ['base', 'count', 'stride', 'dim', 'probe', 'perCluster', 'seenSize', 'feedSize', 'inNetwork', 'ranker', 'minStep', 'minRow', 'perAuthor', 'maxScan', 'removed', 'key', 'outBoost', 'demote'],
} as const;
export type FeedArgs = ArgsOf<typeof RECOMMEND>;

/**
 * A plugin ranker's feed kernel (defineRanker.ts declares one per plugin, in the plugin's module):
 * the feed kernel's arguments, and the post and user columns its score function's features come
 * from (post rows as the records'; `now` the current step).
 */
export const PLUGIN_FEED = {
  reads: { ...RECOMMEND.reads, likes: 'i32', dislikes: 'i32', reposts: 'i32', cluster: 'u8' },
  writes: RECOMMEND.writes,
  params: [...RECOMMEND.params, 'now', 'stepSeconds'],
} as const;
export type PluginFeedArgs = ArgsOf<typeof PLUGIN_FEED>;

// Worker-local scratch: a bit per user marking the current user's followees, cleared after each
// user (125 KB at 1M users, 1.25 MB at 10M, where an int per user was 4 and 40 MB).
let followed = new Uint8Array(0);
// Worker-local: a bit per author of the shared out-of-network candidates (cluster lists, trending).
let candidateAuthors = new Uint8Array(0);
// Worker-local: the shared candidates' base scores, per chunk (the feed kernel).
let listBase = new Float64Array(0);

/**
 * A user's interest (int8, as `interestQ` holds it) widened to int32 and zero-padded to the
 * records' whole words of topic (stride - 4 words of four int8), for `scoreOf`.
 */
export function userTopic(a: Pick<FeedArgs, 'interestQ' | 'dim' | 'stride'>, u: number, out = new Int32Array(4 * (a.stride - 4))): Int32Array {
  const D = a.dim;
  for (let d = 0; d < out.length; d++) out[d] = d < D ? a.interestQ[u * D + d] : 0;
  return out;
}

/** Whether typed arrays are little-endian (byte 0 of a word is its low byte), as everywhere Node runs but a few. */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/**
 * Score of post row r for user u (larger is better; the rankers' files have the formulas), by
 * the ranker's feed term (recommender.ts FEED_TERM): the post's base score from its record
 * (records.ts) as it is, times the int8 interest-topic dot product (interest), or a keyed hash of
 * (user, post) times the rank multiplier the record holds (hash). Float32 values, each computed as
 * the GPU computes it. `uq`: userTopic(a, u), which the feed kernel makes once per user; `base`:
 * the record's base score (recF), where the caller has it; `term`: the ranker's, where the caller
 * has it.
 */
export function scoreOf(a: FeedArgs, u: number, r: number, uq: Int32Array = userTopic(a, u), base: number = a.recF[r * a.stride], term: number = FEED_TERM[BUNDLED_RANKERS[a.ranker].feed]): number {
  if (term === FEED_TERM.hash) return randomScore(a.key, u, a.base + r, base);
  if (term !== FEED_TERM.interest) return base;
  return xInterestScore(base, topicDot(a, r, uq));
}

/** The int8 dot product of post row r's topic and the user's widened interest `uq` (userTopic). */
export function topicDot(a: Pick<FeedArgs, 'rec' | 'recQ' | 'stride'>, r: number, uq: Int32Array): number {
  const at = r * a.stride;
  // Integer products and sums: exact in any order. The topic is read a word (four int8) at a time.
  let dot = 0;
  if (LITTLE_ENDIAN) {
    const R = a.rec;
    for (let w = at + 4, b = 0; b < uq.length; w++, b += 4) {
      const x = R[w];
      dot += ((x << 24) >> 24) * uq[b] + ((x << 16) >> 24) * uq[b + 1] + ((x << 8) >> 24) * uq[b + 2] + (x >> 24) * uq[b + 3];
    }
  } else {
    const Q = a.recQ;
    for (let d = 0, q = (at + 4) * 4; d < uq.length; d++) dot += Q[q + d] * uq[d];
  }
  return dot;
}

/**
 * The best x-interest score a post of base score `base` could have (cosine 1), for the kernel to
 * skip the dot product when even that cannot enter a list. With int8 vectors the computed dot product can
 * exceed MAX_DOT by up to sqrt(D) / (2 TOPIC_SCALE) (1.6% at D = 16), so a post just below the bar
 * may be skipped: a deterministic approximation, the same on both backends.
 */
export function xInterestBar(base: number): number {
  return Math.fround(base * MAX_DOT);
}

/** Whether (id, score) would enter a full-or-not descending top list. */
function enters(ids: Int32Array, scores: Float64Array, len: number, cap: number, id: number, score: number): boolean {
  return len < cap || score > scores[len - 1] || (score === scores[len - 1] && id > ids[len - 1]);
}

/** Inserts (id, score) into a descending top list of capacity cap; ties prefer the larger id. */
function offer(ids: Int32Array, scores: Float64Array, len: number, cap: number, id: number, score: number): number {
  for (let i = 0; i < len; i++) if (ids[i] === id) return len;
  if (len === cap && (score < scores[len - 1] || (score === scores[len - 1] && id < ids[len - 1]))) return len;
  let i = len < cap ? len : cap - 1;
  while (i > 0 && (scores[i - 1] < score || (scores[i - 1] === score && ids[i - 1] < id))) {
    ids[i] = ids[i - 1];
    scores[i] = scores[i - 1];
    i--;
  }
  ids[i] = id;
  scores[i] = score;
  return len < cap ? len + 1 : len;
}

/** Whether user u may be shown post row r; `mutes`: u has muted someone. */
function allowed(a: FeedArgs, u: number, r: number, seenBase: number, mutes: boolean): boolean {
  const au = a.rec[r * a.stride + 2];
  if (au === u || (a.removed !== 0 && (a.flags[r] & FLAG_REMOVED) !== 0)) return false;
  const id = a.base + r;
  for (let s = 0; s < a.seenSize; s++) if (a.seen[seenBase + s] === id) return false;
  if (mutes && (pairSetHas(a.muteA, a.muteB, u, au) || pairSetHas(a.muteA, a.muteB, u, a.rootAuthor[r]))) return false;
  return true;
}

/** Sets (on) or clears the candidateAuthors bits of the cluster lists' and trending posts' authors. */
function candidateAuthorBits(a: FeedArgs, on: boolean): void {
  for (const list of [a.clusterPosts, a.trending]) {
    for (let i = 0; i < list.length; i++) {
      const id = list[i];
      if (id < a.base || id >= a.base + a.count) continue;
      const au = a.rec[(id - a.base) * a.stride + 2];
      if (on) candidateAuthors[au >> 3] |= 1 << (au & 7);
      else candidateAuthors[au >> 3] = 0;
    }
  }
}

/**
 * A plugin ranker's score of post row r for user u (defineRanker.ts builds it from the study's
 * function): `uq` is the user's widened interest, `base` the record's base score.
 */
export type PluginScorer = (a: PluginFeedArgs, u: number, r: number, uq: Int32Array, base: number) => number;

/**
 * The feed kernel's loop: scored by the bundled ranker of code `ranker` (its feed term), or, given
 * `plugin`, by a plugin's function (over that ranker's candidates).
 */
export function feedLoop(plugin?: PluginScorer): (a: FeedArgs, start: number, end: number) => number[] {
  return (a, start, end) => {
    const n = a.latest.length;
    const R = BUNDLED_RANKERS[a.ranker];
    const term = plugin ? FEED_TERM.plugin : FEED_TERM[R.feed];
    // Out-of-network candidates drawn uniformly from the window (random), not the cluster lists.
    const window = R.outOfNetwork === 'window';
    if (followed.length < (n + 7) >> 3) followed = new Uint8Array((n + 7) >> 3);
    if (candidateAuthors.length < (n + 7) >> 3) candidateAuthors = new Uint8Array((n + 7) >> 3);
    // Authors of the shared candidates: only those followees need a mark (a ranker that draws from
    // the whole window marks every followee).
    const shared = !window;
    if (shared) candidateAuthorBits(a, true);
    let marked = new Int32Array(64);
    const F = a.feedSize;
    const inIds = new Int32Array(Math.max(1, a.inNetwork));
    const inScores = new Float64Array(inIds.length);
    const outIds = new Int32Array(F);
    const outScores = new Float64Array(F);
    const P = a.perAuthor;
    // chain[i * P + c]: the c-th newest post in the window of the i-th scanned followee, else -1.
    let chain = new Int32Array(Math.max(1, a.maxScan) * P);
    let chainBase = new Float64Array(chain.length);
    // The current user's interest, widened for scoreOf.
    const uq = new Int32Array(4 * (a.stride - 4));
    let shown = 0;
    // Per-user state of the out-of-network pass (one closure per chunk, not per user).
    let want = 0;
    let nOut = 0;
    let cu = 0;
    let cSeen = 0;
    let cMutes = false;
    // The base scores of the shared candidates (cluster lists, then trending), read once per chunk.
    const xi = term === FEED_TERM.interest;
    // The user's interest is widened for the dot product (interest), and for a plugin's features.
    const topic = xi || term === FEED_TERM.plugin;
    // Base scores: the records' recF, or on a device executor their own column (records.ts).
    const [SB, SS] = a.score.length > 0 ? [a.score, 1] : [a.recF, a.stride];
    const C = a.clusterPosts.length;
    if (listBase.length < C + a.trending.length) listBase = new Float64Array(C + a.trending.length);
    for (let i = 0; i < C + a.trending.length; i++) {
      const id = i < C ? a.clusterPosts[i] : a.trending[i - C];
      listBase[i] = id >= a.base && id < a.base + a.count ? SB[(id - a.base) * SS] : 0;
    }
    // The prosocial terms (prosocial.ts): out-partisan posts' scores x outBoost, dominant voices'
    // x demote; each off at 1, and nothing read for it.
    const { outBoost: boost, demote } = a;
    const boosting = boost !== 1;
    const demoting = demote !== 1;
    // The x-interest bar (the best score a cosine of 1 gives), for a boosted post too.
    const barOf = boost > 1 ? (base: number) => Math.fround(xInterestBar(base) * boost) : xInterestBar;
    /** The feed score of (user u, row r): the ranker's or the plugin's, then the prosocial terms. */
    const scored = (u: number, r: number, base: number): number => {
      let sc = plugin ? plugin(a as PluginFeedArgs, u, r, uq, base) : scoreOf(a, u, r, uq, base, term);
      if (boosting && outPartisan(a.stance[r], a.opinion[u])) sc = scaleScore(sc, boost);
      if (demoting && a.dominant[a.rec[r * a.stride + 2]] !== 0) sc = scaleScore(sc, demote);
      return sc;
    };
    // `base`: the post's base score (its record's recF).
    const consider = (id: number, base: number) => {
      if (id < a.base || id >= a.base + a.count) return;
      const r = id - a.base;
      const at = r * a.stride;
      const au = a.rec[at + 2];
      if (a.rec[at + 1] < a.minStep || (followed[au >> 3] & (1 << (au & 7))) !== 0) return;
      if (xi && nOut === want && barOf(base) < outScores[nOut - 1]) return;
      const sc = scored(cu, r, base);
      if (!enters(outIds, outScores, nOut, want, id, sc) || !allowed(a, cu, r, cSeen, cMutes)) return;
      nOut = offer(outIds, outScores, nOut, want, id, sc);
  };
  for (let k = start; k < end; k++) {
    const u = a.active[k];
    const lo = a.offsets[u];
    const deg = a.offsets[u + 1] - lo;
    const seenBase = u * a.seenSize;
    const mutes = (a.muters[u >> 3] & (1 << (u & 7))) !== 0;
    if (topic) userTopic(a, u, uq);
    let nIn = 0;
    // In-network: scan at most maxScan followees (0: all), starting at a per-user rotation.
    const scan = a.maxScan === 0 || deg < a.maxScan ? deg : a.maxScan;
    const rot = deg > scan ? hash(a.key, u, 1) % deg : 0;
    if (a.inNetwork > 0) {
      // The followees' newest posts and their records are random reads (at 1M users, most miss the
      // cache). They are gathered first, one loop per link of the chains, so the processor overlaps
      // the misses; the scoring below then reads from cache, in the order one pass would. Each
      // post's base score is kept beside its id (as the shared candidates' are, per chunk):
      // reading it from the record again while scoring cost ~15% of the kernel on one thread
      // (why, with the record in cache, is not understood).
      if (scan * P > chain.length) {
        chain = new Int32Array(scan * P);
        chainBase = new Float64Array(scan * P);
      }
      let nc = 0;
      for (let j = 0; j < scan; j++) {
        const q = rot + j; // (rot + j) % deg, as rot and j are below deg
        const v = a.targets[lo + (q < deg ? q : q - deg)];
        if ((a.recent[v >> 3] & (1 << (v & 7))) !== 0) chain[P * nc++] = a.latest[v];
      }
      for (let c = 0; c < P; c++) {
        for (let i = 0; i < nc; i++) {
          const at = i * P + c;
          const id = c === 0 ? chain[at] : chain[at - 1] < 0 ? -1 : a.rec[(chain[at - 1] - a.base) * a.stride + 3];
          const ok = id >= a.base && a.rec[(id - a.base) * a.stride + 1] >= a.minStep;
          chain[at] = ok ? id : -1;
          if (ok) chainBase[at] = SB[(id - a.base) * SS];
        }
      }
      for (let i = 0; i < nc; i++) {
        for (let c = 0; c < P; c++) {
          const id = chain[i * P + c];
          if (id < 0) break;
          const r = id - a.base;
          // Skip the x-interest dot product when even a cosine of 1 could not enter the list.
          const base = chainBase[i * P + c];
          if (!xi || nIn < a.inNetwork || barOf(base) >= inScores[nIn - 1]) {
            const sc = scored(u, r, base);
            if (enters(inIds, inScores, nIn, a.inNetwork, id, sc) && allowed(a, u, r, seenBase, mutes)) nIn = offer(inIds, inScores, nIn, a.inNetwork, id, sc);
          }
        }
      }
    }
    // Out-of-network: nearest clusters, then trending; authors the user follows are in-network.
    want = F - nIn;
    nOut = 0;
    cu = u;
    cSeen = seenBase;
    cMutes = mutes;
    if (want > 0) {
      // Followees (also those the in-network scan skipped) that are authors of candidates:
      // `consider` drops followed authors. Only those are marked, and cleared after the user.
      let nm = 0;
      for (let j = lo; j < lo + deg; j++) {
        const v = a.targets[j];
        if (shared && (candidateAuthors[v >> 3] & (1 << (v & 7))) === 0) continue;
        followed[v >> 3] |= 1 << (v & 7);
        if (nm === marked.length) {
          const m = new Int32Array(2 * nm);
          m.set(marked);
          marked = m;
        }
        marked[nm++] = v;
      }
      if (window) {
        // Candidates drawn uniformly from the window (the random ranker, as OASIS's does).
        const span = a.count - a.minRow;
        for (let i = 0; span > 0 && i < a.probe * a.perCluster; i++) {
          const id = a.base + a.minRow + Math.floor((hash(a.key, u, 2 + i) / 4294967296) * span);
          consider(id, SB[(id - a.base) * SS]);
        }
      } else {
        for (let p = 0; p < a.probe; p++) {
          const cb = a.userClusters[u * a.probe + p] * a.perCluster;
          for (let i = 0; i < a.perCluster; i++) {
            const id = a.clusterPosts[cb + i];
            if (id < 0) break;
            consider(id, listBase[cb + i]);
          }
        }
      }
      for (let i = 0; i < a.trending.length; i++) {
        const id = a.trending[i];
        if (id < 0) break;
        consider(id, listBase[C + i]);
      }
      for (let i = 0; i < nm; i++) followed[marked[i] >> 3] = 0;
    }
    const fb = k * F;
    let len = 0;
    for (let i = 0; i < nIn; i++) {
      a.feed[fb + len] = inIds[i];
      a.feedFlags[fb + len++] = 1;
    }
    for (let i = 0; i < nOut; i++) {
      a.feed[fb + len] = outIds[i];
      a.feedFlags[fb + len++] = 0;
    }
    a.feedLen[k] = len;
    for (let i = len; i < F; i++) a.feed[fb + i] = -1;
    // Remember the impressions (a ring of the last seenSize items).
    let at = a.seenAt[u];
    for (let i = 0; i < len; i++) {
      a.seen[seenBase + at] = a.feed[fb + i];
      at = (at + 1) % a.seenSize;
    }
    a.seenAt[u] = at;
    shown += len;
  }
  if (shared) candidateAuthorBits(a, false);
  return [shown];
  };
}

const recommend = kernel(RECOMMEND, feedLoop(), recommendGpu);

/**
 * Each user's `probe` nearest topic clusters by cosine between its interest and the T prototypes
 * (computed once at set-up; interests are static). Ties prefer the lower cluster.
 */
const nearestClusters = kernel(
  { reads: { interest: 'f32', prototypes: 'f32' }, writes: { out: 'u8' }, params: ['topics', 'dim', 'probe'] },
  (a, start, end): void => {
  const { interest: I, topics: T, dim: D, probe, out: Out } = a;
  // Doubles, as the products are taken (f32 to f64 is exact): the same sums, fewer conversions.
  const Pr = Float64Array.from(a.prototypes.subarray(0, T * D));
  const x = new Float64Array(D);
  const y = new Float64Array(D);
  const dx = new Float64Array(T);
  const dy = new Float64Array(T);
  const best = new Int32Array(probe);
  const bestS = new Float64Array(probe);
  // Two users at a time (a lone last one computed twice, written once), four topics at a time:
  // each sum is still taken in dimension order, but eight chains of dependent additions overlap
  // and each prototype value read serves two users (1M users, one thread: 1.33 -> 0.98 s). The
  // loop is written out rather than calling topicDots.ts dots64, which reads float32 rows:
  // calling it here with these Float64Arrays made it polymorphic and postContent's nearest
  // cluster ~15% slower in a run, and passing it the float32 arrays made this kernel 10% slower.
  for (let u = start; u < end; u += 2) {
    const v = u + 1 < end ? u + 1 : u;
    for (let d = 0, at = u * D, bt = v * D; d < D; d++) {
      x[d] = I[at + d];
      y[d] = I[bt + d];
    }
    let t = 0;
    for (; t + 4 <= T; t += 4) {
      const p0 = t * D;
      const p1 = p0 + D;
      const p2 = p1 + D;
      const p3 = p2 + D;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let r0 = 0;
      let r1 = 0;
      let r2 = 0;
      let r3 = 0;
      for (let d = 0; d < D; d++) {
        const xd = x[d];
        const yd = y[d];
        const q0 = Pr[p0 + d];
        const q1 = Pr[p1 + d];
        const q2 = Pr[p2 + d];
        const q3 = Pr[p3 + d];
        s0 += xd * q0;
        s1 += xd * q1;
        s2 += xd * q2;
        s3 += xd * q3;
        r0 += yd * q0;
        r1 += yd * q1;
        r2 += yd * q2;
        r3 += yd * q3;
      }
      dx[t] = s0;
      dx[t + 1] = s1;
      dx[t + 2] = s2;
      dx[t + 3] = s3;
      dy[t] = r0;
      dy[t + 1] = r1;
      dy[t + 2] = r2;
      dy[t + 3] = r3;
    }
    for (; t < T; t++) {
      let s = 0;
      let r = 0;
      for (let d = 0; d < D; d++) {
        s += x[d] * Pr[t * D + d];
        r += y[d] * Pr[t * D + d];
      }
      dx[t] = s;
      dy[t] = r;
    }
    nearestOf(dx, T, probe, best, bestS, Out, u);
    if (v !== u) nearestOf(dy, T, probe, best, bestS, Out, v);
  }
  },
);

/** Out[u * probe ..] = the indices of the `probe` largest of dots[0 .. T) (ties: the lower index). */
function nearestOf(dots: Float64Array, T: number, probe: number, best: Int32Array, bestS: Float64Array, Out: Uint8Array, u: number): void {
  let len = 0;
  for (let t = 0; t < T; t++) {
    const dot = dots[t];
    if (len === probe && dot <= bestS[len - 1]) continue;
    let i = len < probe ? len++ : probe - 1;
    while (i > 0 && bestS[i - 1] < dot) {
      best[i] = best[i - 1];
      bestS[i] = bestS[i - 1];
      i--;
    }
    best[i] = t;
    bestS[i] = dot;
  }
  for (let p = 0; p < probe; p++) Out[u * probe + p] = best[p < len ? p : 0];
}

/** Interests as int8 (records.ts quantise), as the post records hold topics; element-wise. */
const quantiseInterests = kernel({ reads: { interest: 'f32' }, writes: { out: 'i8' }, params: [] }, (a, start, end): void => {
  const { interest: I, out: Out } = a;
  for (let i = start; i < end; i++) Out[i] = quantise(I[i]);
});

/**
 * The bitset of authors with a post in the window (recommend's `recent`): bit v is set when
 * latest[v] >= firstId, the id of the window's first post (an author's latest post is its newest,
 * so it is in the window when any of its posts is). Chunks start at multiples of 8 rows (the
 * executor's chunks are), so each writes whole bytes.
 */
const recentAuthors = kernel({ reads: { latest: 'i32' }, writes: { recent: 'u8' }, params: ['firstId'] }, (a, start, end): void => {
  const { latest: L, recent: R, firstId } = a;
  for (let b = start >> 3; b << 3 < end; b++) {
    let bits = 0;
    const hi = Math.min(end, (b + 1) << 3);
    for (let v = b << 3; v < hi; v++) if (L[v] >= firstId) bits |= 1 << (v & 7);
    R[b] = bits;
  }
}, recentAuthorsGpu);

/** Post rows per chunk of the per-post kernels (a 48-hour window holds ~2.3M posts at 1M users). */
export const POST_CHUNK = 1 << 15;

/**
 * The static fields of the packed post records (records.ts) of rows from + 0 .. from + rows: step,
 * author, previous post by the author and the topic as int8.
 */
const recordStatics = kernel(
  {
    reads: { step: 'i32', author: 'i32', prevByAuthor: 'i32', topic: 'f32' },
    writes: { rec: 'i32', recQ: 'i8' },
    params: ['from', 'dim', 'stride'],
  },
  (a, start, end): void => {
    const { rec, recQ, topic, stride: S, dim: D } = a;
    for (let r = a.from + start; r < a.from + end; r++) {
      const at = r * S;
      rec[at + 1] = a.step[r];
      rec[at + 2] = a.author[r];
      rec[at + 3] = a.prevByAuthor[r];
      for (let d = 0, q = (at + 4) * 4; d < D; d++) recQ[q + d] = quantise(topic[r * D + d]);
    }
  },
  recordStaticsGpu,
);

/**
 * The base scores (recommender.ts rankedBase, by the ranker of code `ranker`) of the live rows
 * first + 0 .. first + rows, at out[row x outStride]: in the records' recF (outStride = the records' stride), or on a device
 * executor in the records' `score` column (outStride 1; records.ts). `now` is the current step;
 * `base` the id of row 0. Returns how many of those rows are removed (FLAG.removed), so that the
 * feed kernel reads flags only when some are, and then 0.
 *
 * `recencies` and `factors` are read by the WGSL version only (baseScores.wgsl.ts), which has no f64
 * exponential or logarithm: x-interest's R(age) for the creation steps firstStep .. now, and the
 * follower factor F(f) for f = 999 .. 999 + factors.length - 1 (below 999 it is 1), both made with
 * x-interest's functions (rankers/xInterest.ts). `likesLeft` and `dislikesLeft` are the per-side
 * vote counts for a ranker that reads them (Recommender.bySide), empty for the others. Its second
 * partial counts the rows whose author's follower count is past the table, for the caller to
 * extend it and run again.
 */
const baseScores = kernel(
  {
    reads: { rank: 'f32', step: 'i32', author: 'i32', likes: 'i32', dislikes: 'i32', likesLeft: 'i32', dislikesLeft: 'i32', treatVote: 'i8', flags: 'u8', followers: 'i32', recencies: 'f64', factors: 'f64' },
    writes: { out: 'f32' },
    params: ['base', 'first', 'outStride', 'ranker', 'now', 'stepSeconds', 'tauHours', 'recency', 'firstStep'],
  },
  (a, start, end): number[] => {
    const cols = { rank: a.rank, step: a.step, author: a.author, likes: a.likes, dislikes: a.dislikes, likes_left: a.likesLeft, dislikes_left: a.dislikesLeft, treat_vote: a.treatVote };
    const o = { ranker: a.ranker, step: a.now, stepSeconds: a.stepSeconds, tauHours: a.tauHours, recency: a.recency, followers: a.followers, recencyMemo: { step: NaN, value: 0 } };
    const { out, outStride: S, base, flags } = a;
    const R = BUNDLED_RANKERS[a.ranker];
    let removed = 0;
    for (let r = a.first + start; r < a.first + end; r++) {
      out[r * S] = rankedBase(R, cols, base + r, r, o);
      if ((flags[r] & FLAG_REMOVED) !== 0) removed++;
    }
    return [removed, 0];
  },
  baseScoresGpu,
);

export const kernels = kernelList(import.meta.url, { recommend, nearestClusters, quantiseInterests, recordStatics, baseScores, recentAuthors });
