/**
 * The recommend phase's kernels in WGSL, attached to their declarations (recsys/kernels.ts): `recentAuthors` (at
 * the end) and the feed kernel (`recommend`, recsys/kernels.ts), one invocation per active user
 * (the records' static fields, base scores and candidate lists it reads: recordStatics.wgsl.ts,
 * baseScores.wgsl.ts and candidateKernels.wgsl.ts):
 * the same candidates in the same order, the same filters and the same top lists, so the feeds,
 * the impression rings and the total are the same bytes (tests/sim-core/gpu/recommendKernel.test.ts).
 *
 * - Scores are float32 on both backends (recommender.ts FEED_TERM): base scores are read from the records as
 *   they are; x-interest multiplies the base by the exact integer dot product of the int8 interest
 *   and topic in the software f32 (sim-core/gpu/softfloat.wgsl.ts); random is (hash + 1) x the rank
 *   multiplier, both rounded. Scores compare by their f32 order (`f_key`), ties by id.
 * - The CPU marks the user's followees in a worker-local bitset; here an out-of-network candidate's
 *   author is looked up in the user's followee row (the same answer), once the cheaper tests pass.
 * - Each followee's post chain is walked link by link, in the order the CPU scores it.
 * - Bindings: the read-only arrays as one pack (`inp`, in the spec's order; the records once, as words: an unused base
 *   score word, step, author, previous post, then the int8 topic; the base scores as their own
 *   column), the followee targets split into as many
 *   ranges as the adapter's storage buffers per shader leave (1 at WebGPU's default of 8), the
 *   impression ring (read and written: each user's slots are its own), and the byte arrays written
 *   with atomic and/or on their words (rows share words).
 *
 * The feed kernel stays on the CPU for feeds longer than MAX_FEED, the prosocial terms
 * (platform.outPartisan or platform.dominant.factor not 1: prosocial.ts), a ranker drawing candidates
 * from the window (random) over a window of 2^21 posts or more (its floor(u x span) is the integer mulhi only below that), and followee
 * rows of 2^21 or more.
 */
import { EXACT_BELOW, maxDegree } from '../sim-core/gpu/gpuKernels.ts';
import { RNG_WGSL } from '../sim-core/gpu/rng.wgsl.ts';
import { SOFTFLOAT_WGSL } from '../sim-core/gpu/softfloat.wgsl.ts';
import { WORKGROUP } from '../sim-core/gpu/dispatch.ts';
import { f32Bits, wgslKernel } from '../sim-core/gpu/wgslKernel.ts';
import { FLAG } from '../platform/posts.ts';
import { FEED_TERM } from './recommender.ts';
import { BUNDLED_RANKERS } from './rankerRegistry.ts';
import { MAX_DOT } from './rankers/xInterest.ts';

/** The longest feed (and in-network list) the shader's per-user lists hold: platform.feedSize's bound. */
const MAX_FEED = 64;

/** The read-only arrays bound in the pack (all but the split targets and the CPU's views), in the spec's order. */
const PACKED = ['active', 'offsets', 'latest', 'recent', 'rootAuthor', 'flags', 'rec', 'score', 'interestQ', 'userClusters', 'clusterPosts', 'trending', 'muteA', 'muteB', 'muters'] as const;
/*
 * Of the pack's members, the host writes the post columns, latest posts and the mute set's slots,
 * and announces them (platform/state.ts announceHostWrites), and the muters' new bits
 * (recommend.ts); the records' static fields and base scores are written by kernels
 * (recordStatics, baseScores: recsys/records.ts), and so are the candidate lists (mergeTops:
 * on the device, candidateKernels.wgsl.ts).
 */

/** Writes byte j of a u8 array bound as atomic words (other invocations write the word's other bytes). */
const SET_BYTE = (name: string) => /* wgsl */ `
fn set_${name}(j: u32, v: u32) {
  let sh = (j & 3u) * 8u;
  atomicAnd(&${name}[j >> 2u], ~(0xffu << sh));
  atomicOr(&${name}[j >> 2u], v << sh);
}`;

export const recommendGpu = wgslKernel({
  params: { ranker: 'none', key: 'key', outBoost: 'none', demote: 'none' },
  words: ['term', 'window', 'mute_mask', 'trending_len'],
  bind: { ...Object.fromEntries(PACKED.map((k) => [k, 'pack'])), targets: 'split', recF: 'none', recQ: 'none', followers: 'none', seenAt: 'atomic', feedFlags: 'atomic', feedLen: 'atomic', stance: 'none', opinion: 'none', dominant: 'none' },
  result: 'atomic',
  body: () => /* wgsl */ `
${RNG_WGSL}
${SOFTFLOAT_WGSL}
// f_from_i32 of sim-core/gpu/softmath.wgsl.ts, for a dot product |d| < 2^24 (exact).
fn f_from_dot(k: i32) -> u32 {
  if (k < 0) { return f_from_u32(u32(-k)) | F_SIGN; }
  return f_from_u32(u32(k));
}
const MAX_FEED = ${MAX_FEED}u;
var<private> in_ids: array<i32, ${MAX_FEED}>;
var<private> in_scores: array<u32, ${MAX_FEED}>;
var<private> out_ids: array<i32, ${MAX_FEED}>;
var<private> out_scores: array<u32, ${MAX_FEED}>;
var<private> n_in = 0u;
var<private> n_out = 0u;
fn b8(o: u32, i: u32) -> u32 { return (inp[o + (i >> 2u)] >> ((i & 3u) * 8u)) & 0xffu; }
fn i8_at(o: u32, i: u32) -> i32 { return i32(b8(o, i) << 24u) >> 24u; }
fn i32_at(o: u32, i: u32) -> i32 { return bitcast<i32>(inp[o + i]); }
fn rec_at(r: u32, f: u32) -> u32 { return inp[p.o_rec + r * p.stride_ + f]; }
${SET_BYTE('feed_flags')}
${SET_BYTE('feed_len')}
${SET_BYTE('seen_at')}
// pairSetHas of sim-core/pairSet.ts over the mute set.
fn muted(a: u32, b: i32) -> bool {
  var s = mix32(mix32(a) ^ u32(b)) & p.mute_mask;
  loop {
    let k = i32_at(p.o_mute_a, s);
    if (k == -1) { return false; }
    if (k == i32(a) && i32_at(p.o_mute_b, s) == b) { return true; }
    s = (s + 1u) & p.mute_mask;
  }
}
// scoreOf of recsys/kernels.ts: f32 bits.
fn score_of(u: u32, r: u32, id: i32) -> u32 {
  let b = inp[p.o_score + r];
  if (p.term == ${FEED_TERM.hash}u) {
    let h = rng_hash(p.key_lo, p.key_hi, u, u32(id) & 0x7fffffffu);
    var x = 0x4f800000u;
    if (h != 0xffffffffu) { x = f_from_u32(h + 1u); }
    return f_mul(x, b);
  }
  if (p.term != ${FEED_TERM.interest}u) { return b; }
  var dot = 0;
  let q = (p.o_rec + r * p.stride_ + 4u) * 4u;
  for (var d = 0u; d < p.dim; d++) {
    dot += i8_at(p.o_interest_q, u * p.dim + d) * (i32((inp[(q + d) >> 2u] >> (((q + d) & 3u) * 8u)) << 24u) >> 24);
  }
  return f_mul(b, f_from_dot(dot));
}
fn bar(r: u32) -> u32 { return f_mul(inp[p.o_score + r], ${f32Bits(MAX_DOT)}u); }
// enters of recsys/kernels.ts, on the in-network (which = 0) or out-of-network list.
fn enters(which: u32, len: u32, cap: u32, id: i32, sc: u32) -> bool {
  if (len < cap) { return true; }
  var last_s: u32;
  var last_id: i32;
  if (which == 0u) { last_s = in_scores[len - 1u]; last_id = in_ids[len - 1u]; } else { last_s = out_scores[len - 1u]; last_id = out_ids[len - 1u]; }
  return f_key(sc) > f_key(last_s) || (f_key(sc) == f_key(last_s) && id > last_id);
}
fn get_id(which: u32, i: u32) -> i32 { if (which == 0u) { return in_ids[i]; } return out_ids[i]; }
fn get_score(which: u32, i: u32) -> u32 { if (which == 0u) { return in_scores[i]; } return out_scores[i]; }
fn put(which: u32, i: u32, id: i32, sc: u32) {
  if (which == 0u) { in_ids[i] = id; in_scores[i] = sc; } else { out_ids[i] = id; out_scores[i] = sc; }
}
// offer of recsys/kernels.ts: descending by (score, id), duplicates dropped.
fn offer(which: u32, len: u32, cap: u32, id: i32, sc: u32) -> u32 {
  for (var i = 0u; i < len; i++) { if (get_id(which, i) == id) { return len; } }
  let k = f_key(sc);
  if (len == cap) {
    let lk = f_key(get_score(which, len - 1u));
    if (k < lk || (k == lk && id < get_id(which, len - 1u))) { return len; }
  }
  var i = select(cap - 1u, len, len < cap);
  loop {
    if (i == 0u) { break; }
    let pk = f_key(get_score(which, i - 1u));
    if (!(pk < k || (pk == k && get_id(which, i - 1u) < id))) { break; }
    put(which, i, get_id(which, i - 1u), get_score(which, i - 1u));
    i--;
  }
  put(which, i, id, sc);
  return select(len, len + 1u, len < cap);
}
fn allowed(u: u32, r: u32, mutes: bool) -> bool {
  let au = bitcast<i32>(rec_at(r, 2u));
  if (au == i32(u) || (p.removed != 0u && (b8(p.o_flags, r) & ${FLAG.removed}u) != 0u)) { return false; }
  let id = i32(p.base + r);
  for (var s = 0u; s < p.seen_size; s++) { if (seen[u * p.seen_size + s] == id) { return false; } }
  if (mutes && (muted(u, au) || muted(u, i32_at(p.o_root_author, r)))) { return false; }
  return true;
}
fn follows(lo: u32, deg: u32, v: i32) -> bool {
  for (var j = 0u; j < deg; j++) { if (tgt(lo + j) == v) { return true; } }
  return false;
}
// consider of recsys/kernels.ts: an out-of-network candidate. Its tests have no side effects and
// it is offered only when all pass, so the scan of the followee row comes after the cheap ones.
fn consider(u: u32, id: i32, want: u32, lo: u32, deg: u32, mutes: bool) {
  if (id < i32(p.base) || id >= i32(p.base + p.count)) { return; }
  let r = u32(id) - p.base;
  if (bitcast<i32>(rec_at(r, 1u)) < bitcast<i32>(p.min_step)) { return; }
  if (p.term == ${FEED_TERM.interest}u && n_out == want && f_key(bar(r)) < f_key(out_scores[n_out - 1u])) { return; }
  let sc = score_of(u, r, id);
  if (!enters(1u, n_out, want, id, sc) || follows(lo, deg, bitcast<i32>(rec_at(r, 2u))) || !allowed(u, r, mutes)) { return; }
  n_out = offer(1u, n_out, want, id, sc);
}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let v = gid.x + gid.y * p.stride;
  if (v >= p.rows) { return; }
  let k = v;
  let u = inp[p.o_active + k];
  let lo = u32(i32_at(p.o_offsets, u));
  let deg = u32(i32_at(p.o_offsets, u + 1u)) - lo;
  let mutes = (b8(p.o_muters, u >> 3u) & (1u << (u & 7u))) != 0u;
  n_in = 0u;
  n_out = 0u;
  var scan = deg;
  if (p.max_scan != 0u && deg >= p.max_scan) { scan = p.max_scan; }
  var rot = 0u;
  if (deg > scan) { rot = rng_hash(p.key_lo, p.key_hi, u, 1u) % deg; }
  if (p.in_network > 0u) {
    for (var j = 0u; j < scan; j++) {
      let q = rot + j;
      let f = tgt(lo + select(q - deg, q, q < deg));
      if ((b8(p.o_recent, u32(f) >> 3u) & (1u << (u32(f) & 7u))) == 0u) { continue; }
      var id = i32_at(p.o_latest, u32(f));
      for (var c = 0u; c < p.per_author; c++) {
        if (id < i32(p.base) || bitcast<i32>(rec_at(u32(id) - p.base, 1u)) < bitcast<i32>(p.min_step)) { break; }
        let r = u32(id) - p.base;
        if (p.term != ${FEED_TERM.interest}u || n_in < p.in_network || f_key(bar(r)) >= f_key(in_scores[n_in - 1u])) {
          let sc = score_of(u, r, id);
          if (enters(0u, n_in, p.in_network, id, sc) && allowed(u, r, mutes)) { n_in = offer(0u, n_in, p.in_network, id, sc); }
        }
        id = bitcast<i32>(rec_at(r, 3u));
      }
    }
  }
  let want = p.feed_size - n_in;
  if (want > 0u) {
    if (p.window != 0u) {
      let span = p.count - p.min_row;
      for (var i = 0u; span > 0u && i < p.probe * p.per_cluster; i++) {
        consider(u, i32(p.base + p.min_row + mulhi(rng_hash(p.key_lo, p.key_hi, u, 2u + i), span)), want, lo, deg, mutes);
      }
    } else {
      for (var q = 0u; q < p.probe; q++) {
        let cb = b8(p.o_user_clusters, u * p.probe + q) * p.per_cluster;
        for (var i = 0u; i < p.per_cluster; i++) {
          let id = i32_at(p.o_cluster_posts, cb + i);
          if (id < 0) { break; }
          consider(u, id, want, lo, deg, mutes);
        }
      }
    }
    for (var i = 0u; i < p.trending_len; i++) {
      let id = i32_at(p.o_trending, i);
      if (id < 0) { break; }
      consider(u, id, want, lo, deg, mutes);
    }
  }
  let fb = k * p.feed_size;
  var len = 0u;
  for (var i = 0u; i < n_in; i++) {
    feed[fb + len] = in_ids[i];
    set_feed_flags(fb + len, 1u);
    len++;
  }
  for (var i = 0u; i < n_out; i++) {
    feed[fb + len] = out_ids[i];
    set_feed_flags(fb + len, 0u);
    len++;
  }
  set_feed_len(k, len);
  for (var i = len; i < p.feed_size; i++) { feed[fb + i] = -1; }
  let sh = (u & 3u) * 8u;
  var at = (atomicLoad(&seen_at[u >> 2u]) >> sh) & 0xffu;
  for (var i = 0u; i < len; i++) {
    seen[u * p.seen_size + at] = feed[fb + i];
    at = (at + 1u) % p.seen_size;
  }
  set_seen_at(u, at);
  if (len > 0u) { atomicAdd(&result[0], len); }
}`,
  build(a, rows) {
    const { muteA, offsets, count, feedSize } = a;
    const n = offsets.length - 1;
    if (feedSize > MAX_FEED || a.inNetwork > feedSize || maxDegree(offsets) >= EXACT_BELOW) return undefined;
    // The prosocial terms (platform.outPartisan and .dominant, prosocial.ts) have no WGSL.
    if (a.outBoost !== 1 || a.demote !== 1) return undefined;
    // The kernel is the bundled rankers' (a plugin's feed kernel has no WGSL, and runs on the CPU).
    const ranker = BUNDLED_RANKERS[a.ranker];
    const window = ranker.outOfNetwork === 'window';
    if (window && count - a.minRow >= EXACT_BELOW) return undefined;
    if ((muteA.length & (muteA.length - 1)) !== 0 || a.seenAt.length < n || a.feedLen.length < rows) return undefined;
    // The base scores come from their own column (records.ts), written only for a device executor.
    if (a.score.length < count) return undefined;
    const words = { term: FEED_TERM[ranker.feed], window: window ? 1 : 0, mute_mask: muteA.length - 1, trending_len: a.trending.length };
    return { gridRows: rows, parts: 'most', words, resultWords: 1 };
  },
});

/**
 * recentAuthors: bit v of `recent` set when latest[v] >= firstId, 32 users to an invocation, which
 * writes one whole word (bits past the last user 0, as on the CPU).
 */
export const recentAuthorsGpu = wgslKernel({
  params: { firstId: 'i32' },
  words: ['n'],
  body: () => /* wgsl */ `
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let v = gid.x + gid.y * p.stride;
  if (v >= p.rows) { return; }
  var bits = 0u;
  for (var b = 0u; b < 32u; b++) {
    let i = v * 32u + b;
    if (i >= p.n) { break; }
    if (latest[i] >= p.first_id) { bits = bits | (1u << b); }
  }
  recent[v] = bits;
}`,
  build(a, rows) {
    // Whole words: the bitset must be exactly the users' bytes (the buffer's padding takes the rest).
    if (a.recent.length !== (rows + 7) >> 3 || a.latest.length < rows) return undefined;
    return { gridRows: Math.ceil(rows / 32), words: { n: rows } };
  },
});
