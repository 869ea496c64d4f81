/**
 * The act kernel (platform/kernels.ts, which attaches this version to it) in WGSL: one invocation
 * per active user, the same draws and the same float32 products as the CPU declaration, each
 * operation through the software f32 of sim-core/gpu/softfloat.wgsl.ts, so the events are the same
 * bytes (tests/sim-core/gpu/platformKernels.test.ts).
 *
 * Bindings: the 24 read-only arrays as one pack (`inp`, at word offsets `o_*`), the followee
 * targets split into as many ranges as the adapter's storage buffers per shader leave
 * (SPLIT_TARGETS, 3 at WebGPU's default of 8), the three event arrays and a result word (events);
 * the pack's members follow the spec's order, whose first, `interest`, is a column that stays (the
 * executor keeps a pack's buffer per kernel and first member).
 * Each user's action bytes are whole words of its own (maxEventsFor rounds the slots to 4), so it
 * writes them without atomics; the u16 event counts of two users share a word and are written with
 * atomic and/or.
 *
 * The call stays on the CPU when the software f32 could meet an infinity, whose products it does
 * not define: a behaviour value, label factor, herding or correction outside [0, 1e4] (or not
 * finite), a vote scale below 1e-30, a novelty weight above 8 (with novelty within [-5, 5], as the
 * interventions' schema bounds it, exp(weight x novelty) <= e^40); also for a followee row of 2^21
 * or more (the CPU's floor(u x deg) equals the integer mulhi below that) and slots not rounded to
 * words. Under those bounds every product is finite. The attention table must cover every post's
 * age (the act phase sizes it so; the CPU kernel throws otherwise, the GPU reads its last entry).
 */
import { EXACT_BELOW, maxDegree, packBytes } from '../sim-core/gpu/gpuKernels.ts';
import { RNG_WGSL } from '../sim-core/gpu/rng.wgsl.ts';
import { SOFTFLOAT_WGSL } from '../sim-core/gpu/softfloat.wgsl.ts';
import { SOFTMATH_WGSL } from '../sim-core/gpu/softmath.wgsl.ts';
import { ROW } from '../sim-core/gpu/kernels.wgsl.ts';
import { WORKGROUP } from '../sim-core/gpu/dispatch.ts';
import { f32Bits, wgslKernel } from '../sim-core/gpu/wgslKernel.ts';
import { NPARAMS, P } from './behaviour.ts';
import { A, MAX_POSTS_PER_STEP } from './events.ts';
import { FLAG } from './posts.ts';
import { POISSON_COUNT_WGSL } from './kernels.wgsl.ts';

/** The read-only arrays bound in the pack (all but the split targets), in the spec's order. */
const PACKED = ['interest', 'opinion', 'archetype', 'activity', 'offsets', 'behaviour', 'followers', 'sessions', 'attention', 'socialProof', 'active', 'feed', 'feedFlags', 'feedLen', 'author', 'stance', 'likes', 'dislikes', 'reposts', 'flags', 'novelty', 'treatVote', 'topic', 'postStep'] as const;

/**
 * The act shader's body; with `topicApart`, the posts' topics are bound on their own instead of in
 * the pack (see the builder below).
 */
const actWgsl = (topicApart: boolean) => /* wgsl */ `
${RNG_WGSL}
${SOFTFLOAT_WGSL}
${SOFTMATH_WGSL}
${POISSON_COUNT_WGSL}
const F_HALF = 0x3f000000u;
const F_ONE_HALF = 0x3fc00000u;
const F_TWO = 0x40000000u;
const F_FOUR = 0x40800000u;
const F_FOLLOWED = ${f32Bits(1.2)}u;
fn b8(o: u32, i: u32) -> u32 { return (inp[o + (i >> 2u)] >> ((i & 3u) * 8u)) & 0xffu; }
fn b16(o: u32, i: u32) -> u32 { return (inp[o + (i >> 1u)] >> ((i & 1u) * 16u)) & 0xffffu; }
fn i32_at(o: u32, i: u32) -> i32 { return bitcast<i32>(inp[o + i]); }
// clamp01 of kernels.ts (the products are finite here).
fn clamp01(x: u32) -> u32 {
  if ((x & F_SIGN) != 0u) { return 0u; }
  if (f_lt(F_ONE, x)) { return F_ONE; }
  return x;
}
// inSessions32 of kernels.ts.
fn in_sessions(q: u32, n: u32) -> u32 {
  if (n == 1u || (q & F_SIGN) != 0u || q == 0u) { return q; }
  if (!f_lt(q, F_ONE)) { return F_ONE; }
  let c = f_sub(F_ONE, q);
  var r = c;
  for (var i = 1u; i < n; i++) { r = f_mul(r, c); }
  return f_sub(F_ONE, r);
}
// powf32 of f32math.ts for a >= 0, an infinite a included.
fn pow_any(a: u32, b: u32) -> u32 {
  if ((b & F_ABS) == 0u) { return F_ONE; }
  if ((a & F_ABS) == 0u) { return select(F_INF, 0u, (b & F_SIGN) == 0u); }
  if (a == F_INF) { return select(0u, F_INF, (b & F_SIGN) == 0u); }
  return f_pow(a, b);
}
fn draw(u: u32, d: u32) -> u32 { return rng_hash(p.key_lo, p.key_hi, u, d); }
fn follows(lo: u32, deg: u32, v: i32) -> bool {
  for (var j = 0u; j < deg; j++) { if (tgt(lo + j) == v) { return true; } }
  return false;
}
fn emit(k: u32, ne: u32, action: u32, to: i32) -> u32 {
  let j = k * p.max_events + ne;
  let w = j >> 2u;
  let sh = (j & 3u) * 8u;
  ev_action[w] = (ev_action[w] & ~(0xffu << sh)) | (action << sh);
  ev_target[j] = to;
  return ne + 1u;
}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  let k = v;
  let u = inp[p.o_active + k];
  let pb = p.o_behaviour + b16(p.o_archetype, u) * ${NPARAMS}u;
  let x = inp[p.o_opinion + u];
  let n = b8(p.o_sessions, u);
  var ne = 0u;
  let len = b8(p.o_feed_len, k);
  var d = 0u;
  var best_follow = -1;
  var best_followers = -1;
  let lo = u32(i32_at(p.o_offsets, u));
  let deg = u32(i32_at(p.o_offsets, u + 1u)) - lo;
  for (var s = 0u; s < len; s++) {
    let id = i32_at(p.o_feed, k * p.feed_size + s);
    let r = u32(id) - p.base;
    let au = i32_at(p.o_author, r);
    var dot = 0u;
    for (var e = 0u; e < p.dim; e++) { dot = f_add(dot, f_mul(inp[p.o_interest + u * p.dim + e], ${topicApart ? 'topic[r * p.dim + e]' : 'inp[p.o_topic + r * p.dim + e]'})); }
    let dd = f_sub(x, inp[p.o_stance + r]);
    let agree = f_sub(F_ONE, f_mul(dd & F_ABS, F_HALF));
    let m05 = f_add(F_HALF, f_mul(f_add(F_ONE, dot), F_HALF));
    // Hidden counts (counts_shown 0) read as none: no social proof, a score of 0.
    let shown = p.counts_shown != 0u;
    let c = select(0, i32_at(p.o_likes, r) + 2 * i32_at(p.o_reposts, r), shown);
    var sp1 = F_TWO;
    if (c >= 0 && u32(c) < p.sp_len) { sp1 = f_add(F_ONE, inp[p.o_social_proof + u32(c)]); }
    let followed = b8(p.o_feed_flags, k * p.feed_size + s) == 1u;
    let flagged = (b8(p.o_flags, r) & ${FLAG.factCheck | FLAG.reported}u) != 0u;
    let noted = (b8(p.o_flags, r) & ${FLAG.noted}u) != 0u;
    var l_like = select(F_ONE, p.label_like, flagged);
    var l_share = select(F_ONE, p.label_reshare, flagged);
    if (noted) { l_like = f_mul(l_like, p.note_like); l_share = f_mul(l_share, p.note_reshare); }
    let treat = i32(b8(p.o_treat_vote, r) << 24u) >> 24u;
    var g = f_div(f_from_i32(select(0, i32_at(p.o_likes, r) - i32_at(p.o_dislikes, r) + treat, shown)), p.vote_scale);
    if (f_lt(F_ONE, g)) { g = F_ONE; } else if (f_lt(g, F_ONE | F_SIGN)) { g = F_ONE | F_SIGN; }
    var up = f_sub(F_ONE, f_mul(p.correction, g));
    if (f_lt(0u, g)) { up = f_add(F_ONE, f_mul(p.herding, g)); }
    var down = F_ONE;
    if (f_lt(g, 0u)) { down = f_sub(F_ONE, f_mul(p.herding, g)); }
    let novelty = inp[p.o_novelty + r];
    var nov = F_ONE;
    if ((novelty & F_ABS) != 0u) { nov = f_exp(f_mul(p.novelty_weight, novelty)); }
    let ag1 = f_sub(F_ONE, agree);
    let dis = f_mul(f_mul(ag1, ag1), F_FOUR);
    let age = min(u32(i32(p.step) - i32_at(p.o_post_step, r)), p.att_len - 1u);
    let att = inp[p.o_attention + age];
    let p_like = f_mul(f_mul(f_mul(f_mul(f_mul(f_mul(att, inp[pb + ${P.like}u]), f_add(F_HALF, agree)), m05), sp1), l_like), up);
    if (uniform_below(draw(u, d), in_sessions(clamp01(p_like), n))) {
      ne = emit(k, ne, ${A.like}u, id);
    } else {
      let p_dislike = f_mul(f_mul(f_mul(f_mul(att, inp[pb + ${P.dislike}u]), f_sub(F_ONE_HALF, agree)), m05), down);
      if (uniform_below(draw(u, d + 1u), in_sessions(clamp01(p_dislike), n))) { ne = emit(k, ne, ${A.dislike}u, id); }
    }
    let p_repost = f_mul(f_mul(f_mul(f_mul(f_mul(f_mul(f_mul(f_mul(f_mul(att, inp[pb + ${P.repost}u]), F_TWO), agree), agree), m05), sp1), select(F_ONE, F_FOLLOWED, followed)), l_share), nov);
    if (uniform_below(draw(u, d + 2u), in_sessions(clamp01(p_repost), n))) { ne = emit(k, ne, ${A.repost}u, id); }
    let p_quote = f_mul(f_mul(f_mul(f_mul(f_mul(att, inp[pb + ${P.quote}u]), m05), sp1), l_share), nov);
    if (uniform_below(draw(u, d + 3u), in_sessions(clamp01(p_quote), n))) { ne = emit(k, ne, ${A.quote}u, id); }
    let p_comment = f_mul(f_mul(f_mul(att, inp[pb + ${P.comment}u]), m05), sp1);
    if (uniform_below(draw(u, d + 4u), in_sessions(clamp01(p_comment), n))) { ne = emit(k, ne, ${A.comment}u, id); }
    let p_report = f_mul(f_mul(f_mul(att, inp[pb + ${P.report}u]), dis), select(F_ONE, p.label_report, flagged));
    if (uniform_below(draw(u, d + 5u), in_sessions(clamp01(p_report), n))) { ne = emit(k, ne, ${A.report}u, id); }
    let p_mute = f_mul(f_mul(att, inp[pb + ${P.mute}u]), dis);
    if (uniform_below(draw(u, d + 6u), in_sessions(clamp01(p_mute), n))) { ne = emit(k, ne, ${A.mute}u, au); }
    if (followed) {
      let p_unfollow = f_mul(f_mul(att, inp[pb + ${P.unfollow}u]), dis);
      if (uniform_below(draw(u, d + 7u), in_sessions(clamp01(p_unfollow), n))) { ne = emit(k, ne, ${A.unfollow}u, au); }
    }
    d += 8u;
    let fa = i32_at(p.o_followers, u32(au));
    if (!followed && au != i32(u) && fa > best_followers) {
      best_follow = au;
      best_followers = fa;
    }
  }
  let pw = pow_any(f_div(inp[p.o_activity + u], p.activity_ref), p.post_exponent);
  var capped = F_ONE;
  if ((pw & F_ABS) < F_INF) {
    let per_session = f_mul(inp[pb + ${P.post}u], pw);
    if (f_lt(per_session, F_ONE)) { capped = per_session; }
  }
  let posts = min(poisson_count(f_mul(f_from_u32(n), capped), draw(u, d)), ${MAX_POSTS_PER_STEP}u);
  d++;
  for (var j = 0u; j < posts; j++) { ne = emit(k, ne, ${A.post}u, -1); }
  let follow = uniform_below(draw(u, d), in_sessions(inp[pb + ${P.follow}u], n));
  d++;
  if (follow) {
    for (var t = 0u; t < 2u && deg > 0u; t++) {
      let fv = u32(tgt(lo + mulhi(draw(u, d), deg)));
      d++;
      let vlo = u32(i32_at(p.o_offsets, fv));
      let vdeg = u32(i32_at(p.o_offsets, fv + 1u)) - vlo;
      if (vdeg == 0u) { continue; }
      let w = tgt(vlo + mulhi(draw(u, d), vdeg));
      d++;
      let fw = i32_at(p.o_followers, u32(w));
      if (w != i32(u) && (fw > best_followers || (fw == best_followers && w > best_follow)) && !follows(lo, deg, w)) {
        best_follow = w;
        best_followers = fw;
      }
    }
    if (best_follow >= 0) { ne = emit(k, ne, ${A.follow}u, best_follow); }
  }
  let sh = (k & 1u) * 16u;
  atomicAnd(&ev_count[k >> 1u], ~(0xffffu << sh));
  atomicOr(&ev_count[k >> 1u], ne << sh);
  if (ne > 0u) { atomicAdd(&result[0], ne); }
}`;
/** Within [0, 1e4] as a float32: a factor whose products stay finite (see above). */
const bounded = (v: unknown) => typeof v === 'number' && Math.fround(v) >= 0 && Math.fround(v) <= 1e4;

export const actGpu = wgslKernel({
  params: { count: 'none', key: 'key', activityRef: 'f32', postExponent: 'f32', labelLike: 'f32', labelReshare: 'f32', labelReport: 'f32', noteLike: 'f32', noteReshare: 'f32', herding: 'f32', correction: 'f32', voteScale: 'f32', noveltyWeight: 'f32' },
  words: ['att_len', 'sp_len'],
  variants: ['', 'topicApart'],
  bind: (variant) => ({ ...Object.fromEntries(PACKED.map((k) => [k, 'pack'])), targets: 'split', evCount: 'atomic', ...(variant === 'topicApart' ? { topic: 'range' } : {}) }),
  result: 'atomic',
  body: ({ variant }) => actWgsl(variant === 'topicApart'),
  build(a, rows, plan) {
    const { offsets, behaviour, attention, maxEvents } = a;
    if (maxEvents % 4 !== 0 || a.evCount.length < rows || attention.length === 0 || maxDegree(offsets) >= EXACT_BELOW) return undefined;
    if (!behaviour.every(bounded) || !attention.every(bounded)) return undefined;
    if (![a.labelLike, a.labelReshare, a.labelReport, a.noteLike, a.noteReshare, a.herding, a.correction].every(bounded)) return undefined;
    const voteScale = Math.fround(a.voteScale);
    const noveltyWeight = Math.fround(a.noveltyWeight);
    const activityRef = Math.fround(a.activityRef);
    if (!(voteScale >= 1e-30 && voteScale <= 1e30) || !(Math.abs(noveltyWeight) <= 8) || !(activityRef >= 1e-30 && activityRef <= 1e30) || !Number.isFinite(Math.fround(a.postExponent))) return undefined;
    // The posts' topics (64 bytes a post: 1.5 GB in a full 48-hour window at 10M agents) go in the
    // pack while it fits one binding; past that they are bound on their own, which costs a storage
    // binding, one range of the targets fewer. Bound apart, only the rows in use are: at 10M agents
    // the table's capacity (2^25 rows, 2 GiB of topics) passes NVIDIA's binding limit (2 GiB - 4)
    // while its ~29M rows do not.
    const topicApart = packBytes(PACKED.map((k) => a[k])) > plan.partBytes;
    return {
      variant: topicApart ? 'topicApart' : '',
      gridRows: rows,
      parts: 'most',
      words: { att_len: attention.length, sp_len: a.socialProof.length },
      ...(topicApart ? { bytes: { topic: a.count * a.dim * 4 } } : {}),
      // The behaviour table is rewritten unannounced (interventions, archetype rounds); the post
      // columns and follower counts the host writes are announced (platform/state.ts
      // announceHostWrites), so only their new rows go up.
      hostTables: ['behaviour'],
      resultWords: 1,
    };
  },
});
