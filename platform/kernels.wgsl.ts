/**
 * WGSL versions of the social platform's kernels (platform/kernels.ts, which attaches each to its
 * declaration). Each has its CPU declaration's contract and gives the same bytes: draws compare the
 * counter hash with integers, and float arithmetic goes through the software f32 of
 * sim-core/gpu/softfloat.wgsl.ts in the order the CPU declaration rounds it
 * (tests/sim-core/gpu/platformKernels.test.ts). `act` is in act.wgsl.ts, the new posts' topics
 * (`writeTopics`) in postBatch.wgsl.ts, the recommender's kernels in recsys/.
 *
 * The post table's columns are written by the apply phase in plain JavaScript every step; the
 * phases that write them say which rows (platform/state.ts announceHostWrites), and the executor
 * uploads those rows before the next kernel that reads them. The counts kernels add to are the
 * exception (posts.ts COUNTED_COLUMNS): `impressions` and `countVotes` write them on the device,
 * in the live rows only, and they come back when the host retires, moves or copies rows
 * (platform/phases.ts maintain, applyPhase.ts). The behaviour table, which
 * interventions and archetype rounds rewrite unannounced, is a host table (uploaded at every call).
 */
import { RNG_WGSL } from '../sim-core/gpu/rng.wgsl.ts';
import { SOFTFLOAT_WGSL } from '../sim-core/gpu/softfloat.wgsl.ts';
import { SOFTMATH_WGSL } from '../sim-core/gpu/softmath.wgsl.ts';
import { ROW } from '../sim-core/gpu/kernels.wgsl.ts';
import { WORKGROUP } from '../sim-core/gpu/dispatch.ts';
import { f32Bits, wgslKernel } from '../sim-core/gpu/wgslKernel.ts';
import { NPARAMS, P } from './behaviour.ts';
import { A, STANCE_NOISE, TOPIC_NOISE } from './events.ts';

/**
 * `uniform < x` for uniform = hash / 2^32 and an f32 x (bits), exactly, as the CPU compares the
 * two doubles: never for x <= 0, always for x >= 1 or NaN (the CPU's `u >= NaN` is false), else
 * hash < ceil(x 2^32), computed from x's significand and exponent.
 */
export const UNIFORM_BELOW_WGSL = /* wgsl */ `
fn uniform_below(h: u32, x: u32) -> bool {
  if ((x & F_ABS) > 0x7f800000u) { return true; }
  if ((x & F_SIGN) != 0u || x == 0u) { return false; }
  if (x >= 0x3f800000u) { return true; }
  // x 2^32 = m 2^k: a normal x has its hidden bit and k = e - 118, a subnormal k = -117.
  let e = i32(x >> 23u);
  var m = x & 0x7fffffu;
  var k = -117;
  if (e != 0) {
    m = m | 0x800000u;
    k = e - 118;
  }
  // e <= 126 here, so k <= 8 and m 2^k < 2^32.
  if (k >= 0) { return h < (m << u32(k)); }
  let s = u32(-k);
  if (s >= 32u) { return h < 1u; }
  let t = (m >> s) + select(0u, 1u, (m & ((1u << s) - 1u)) != 0u);
  return h < t;
}`;

/** poissonCount32 of platform/kernels.ts for an f32 lambda (bits) and the draw's hash. */
export const POISSON_COUNT_WGSL = /* wgsl */ `
${UNIFORM_BELOW_WGSL}
const F_88 = ${f32Bits(88)}u;
fn poisson_count(lambda: u32, h: u32) -> u32 {
  // Not > 0: NaN, a zero or a negative value.
  if ((lambda & F_ABS) > 0x7f800000u || (lambda & F_SIGN) != 0u || lambda == 0u) { return 0u; }
  // Positive f32 bits order as their values.
  if (lambda >= F_88) { return 255u; }
  var p = f_exp(lambda ^ F_SIGN);
  var cdf = p;
  var n = 0u;
  while (n < 255u && !uniform_below(h, cdf)) {
    n++;
    p = f_mul(p, f_div(lambda, f_from_u32(n)));
    cdf = f_add(cdf, p);
  }
  return n;
}`;

/**
 * activate: out[i] = sessions of agent i this step (0 when suspended), four rows to a word (u8
 * columns are packed so; the grid runs over words, and the last word's spare bytes are written 0).
 * Words: n (rows). Result word: agents online.
 */
export const activateGpu = wgslKernel({
  params: { stepHours: 'f32', key: 'key' },
  words: ['n'],
  result: 'atomic',
  body: () => /* wgsl */ `
${RNG_WGSL}
${SOFTFLOAT_WGSL}
${SOFTMATH_WGSL}
${POISSON_COUNT_WGSL}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  var word = 0u;
  var online = 0u;
  for (var b = 0u; b < 4u; b++) {
    let i = v * 4u + b;
    if (i >= p.n) { break; }
    let shift = b * 8u;
    let chr = (chronotype[i >> 2u] >> shift) & 0xffu;
    let arch = (archetype[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu;
    let lambda = f_mul(f_mul(f_mul(activity[i], profiles[chr * 24u + p.hour]), behaviour[arch * ${NPARAMS}u + ${P.activity}u]), p.step_hours);
    var n = 0u;
    if (((suspended[i >> 2u] >> shift) & 0xffu) == 0u) { n = poisson_count(lambda, rng_hash(p.key_lo, p.key_hi, i, 0u)); }
    word = word | (n << shift);
    if (n > 0u) { online++; }
  }
  out[v] = word;
  if (online > 0u) { atomicAdd(&result[0], online); }
}`,
  build(a, rows) {
    // The whole-word writes need out to end with the rows; the software f32 takes finite values.
    if (a.out.length !== rows || !Number.isFinite(Math.fround(a.stepHours))) return undefined;
    return { gridRows: Math.ceil(rows / 4), words: { n: rows }, hostTables: ['behaviour'], resultWords: 1 };
  },
});

/**
 * exposure: one invocation per active user k (row), as the CPU declaration: the bounded-confidence
 * pull and backfire push over its feed in float32, opinion[active[k]] updated in place (users are
 * distinct, so rows write different words) and rowDist[k] the sum of distances. Its six read-only
 * arrays are one pack (`inp`, at the word offsets `o_*`).
 */
export const exposureGpu = wgslKernel({
  params: { backfireDistance: 'f32' },
  bind: { archetype: 'pack', behaviour: 'pack', stance: 'pack', active: 'pack', feed: 'pack', feedFlags: 'none', feedLen: 'pack' },
  body: () => /* wgsl */ `
${RNG_WGSL}
${SOFTFLOAT_WGSL}
const F_ONE = 0x3f800000u;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  let len = (inp[p.o_feed_len + (v >> 2u)] >> ((v & 3u) * 8u)) & 0xffu;
  if (len == 0u) {
    row_dist[v] = 0u;
    return;
  }
  let u = inp[p.o_active + v];
  let pb = p.o_behaviour + ((inp[p.o_archetype + (u >> 1u)] >> ((u & 1u) * 16u)) & 0xffffu) * ${NPARAMS}u;
  let eps = inp[pb + ${P.eps}u];
  let x = opinion[u];
  var pull = 0u;
  var np = 0u;
  var push = 0u;
  var nb = 0u;
  var dist = 0u;
  for (var s = 0u; s < len; s++) {
    let r = inp[p.o_feed + v * p.feed_size + s] - p.base;
    let d = f_sub(inp[p.o_stance + r], x);
    // |d| as the CPU takes it: a negative d flips its sign, -0 stays.
    let ad = select(d, d ^ F_SIGN, f_lt(d, 0u));
    dist = f_add(dist, ad);
    if (f_lt(ad, eps)) {
      pull = f_add(pull, d);
      np++;
    } else if (f_lt(p.backfire_distance, ad)) {
      push = f_add(push, d);
      nb++;
    }
  }
  var nx = x;
  if (np > 0u) { nx = f_add(nx, f_div(f_mul(inp[pb + ${P.mu}u], pull), f_from_u32(np))); }
  if (nb > 0u) { nx = f_sub(nx, f_div(f_mul(inp[pb + ${P.backfire}u], push), f_from_u32(nb))); }
  if (f_lt(nx, F_ONE | F_SIGN)) { nx = F_ONE | F_SIGN; } else if (f_lt(F_ONE, nx)) { nx = F_ONE; }
  opinion[u] = nx;
  row_dist[v] = dist;
}`,
  build(a, rows) {
    if (a.rowDist.length < rows || Number.isNaN(Math.fround(a.backfireDistance))) return undefined;
    return { gridRows: rows, hostTables: ['behaviour'] };
  },
});

/**
 * feedMix: one invocation per word of four rows (rowDistinct is u8, packed four rows to a word;
 * bytes past the last row keep their value): in-network items and distinct clusters per row, and
 * the totals as result words [users, items, in-network items]. Words: n (rows).
 */
export const feedMixGpu = wgslKernel({
  bind: { active: 'none' },
  words: ['n'],
  result: 'atomic',
  body: () => /* wgsl */ `
fn byte_of(w: u32, i: u32) -> u32 { return (w >> ((i & 3u) * 8u)) & 0xffu; }
fn cluster_of(k: u32, s: u32) -> u32 {
  let r = u32(feed[k * p.feed_size + s]) - p.base;
  return byte_of(cluster[r >> 2u], r);
}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  var word = row_distinct[v];
  var users = 0u;
  var items = 0u;
  var in_net = 0u;
  for (var b = 0u; b < 4u; b++) {
    let k = v * 4u + b;
    if (k >= p.n) { break; }
    let len = byte_of(feed_len[k >> 2u], k);
    var distinct = 0u;
    for (var s = 0u; s < len; s++) {
      let j = k * p.feed_size + s;
      in_net += byte_of(feed_flags[j >> 2u], j);
      let c = cluster_of(k, s);
      var seen = false;
      for (var t = 0u; t < s; t++) { if (cluster_of(k, t) == c) { seen = true; } }
      if (!seen) { distinct++; }
    }
    word = (word & ~(0xffu << (b * 8u))) | (distinct << (b * 8u));
    if (len > 0u) { users++; }
    items += len;
  }
  row_distinct[v] = word;
  if (users > 0u) { atomicAdd(&result[0], users); }
  if (items > 0u) { atomicAdd(&result[1], items); }
  if (in_net > 0u) { atomicAdd(&result[2], in_net); }
}`,
  build(a, rows) {
    if (a.rowDistinct.length < rows) return undefined;
    return { gridRows: Math.ceil(rows / 4), words: { n: rows }, resultWords: 3 };
  },
});

/**
 * impressions: one invocation per active row, adding one to the count of each live post in its
 * feed (atomic adds on i32 words: integer sums, the same whatever their order). The counts stay on
 * the device, written in the live rows only, so the host may append new rows meanwhile; the host
 * reads them back when it retires, compacts or grows the table (phases.ts maintain, applyPhase.ts).
 */
export const impressionsGpu = wgslKernel({
  bind: { active: 'none', feedFlags: 'none', impressions: 'atomic' },
  body: () => /* wgsl */ `
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  let len = (feed_len[v >> 2u] >> ((v & 3u) * 8u)) & 0xffu;
  for (var i = 0u; i < len; i++) {
    // Ids and base are below 2^31: the row as the CPU's difference of two numbers.
    let r = feed[v * p.feed_size + i] - i32(p.base);
    if (r >= i32(p.first) && r < i32(p.count)) { atomicAdd(&impressions[r], 1); }
  }
}`,
  build(a, rows) {
    const { first, count } = a;
    if (count > a.impressions.length || first < 0 || a.base > 0x7fffffff) return undefined;
    return { gridRows: rows, wrote: { impressions: [first, count] } };
  },
});

/**
 * countVotes: one invocation per active row, adding one to the like or dislike count of the live
 * post each of its likes or dislikes targets, and to its left side's when the voter's opinion is
 * below 0 (atomic adds, as impressions). The event arrays, the voters' opinions and the four
 * counts are the eight storage bindings WebGPU guarantees.
 */
export const countVotesGpu = wgslKernel({
  bind: { likes: 'atomic', dislikes: 'atomic', likesLeft: 'atomic', dislikesLeft: 'atomic' },
  body: () => /* wgsl */ `
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  let n = (ev_count[v >> 1u] >> ((v & 1u) * 16u)) & 0xffffu;
  // A float comparison: -0 and NaN are not below 0, as on the CPU.
  let left = bitcast<f32>(voter_opinion[v]) < 0.0;
  for (var j = v * p.max_events; j < v * p.max_events + n; j++) {
    let act = (ev_action[j >> 2u] >> ((j & 3u) * 8u)) & 0xffu;
    if (act != ${A.like}u && act != ${A.dislike}u) { continue; }
    let r = ev_target[j] - i32(p.base);
    if (r < i32(p.first) || r >= i32(p.count)) { continue; }
    if (act == ${A.like}u) {
      atomicAdd(&likes[r], 1);
      if (left) { atomicAdd(&likes_left[r], 1); }
    } else {
      atomicAdd(&dislikes[r], 1);
      if (left) { atomicAdd(&dislikes_left[r], 1); }
    }
  }
}`,
  build(a, rows) {
    const { evCount, evTarget, likes, dislikes, likesLeft, dislikesLeft, maxEvents, first, count } = a;
    if (evCount.length < rows || evTarget.length < rows * maxEvents || a.voterOpinion.length < rows || count > Math.min(likes.length, dislikes.length, likesLeft.length, dislikesLeft.length) || first < 0 || a.base > 0x7fffffff) return undefined;
    return { gridRows: rows, wrote: { likes: [first, count], dislikes: [first, count], likesLeft: [first, count], dislikesLeft: [first, count] } };
  },
});

/**
 * packEvents: one invocation per packed action i; its user is found by binary search in evStart
 * (users + 1 entries).
 */
export const packEventsGpu = wgslKernel({
  body: () => /* wgsl */ `
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  var lo = 0u;
  var hi = p.users;
  while (hi - lo > 1u) {
    let mid = (lo + hi) >> 1u;
    if (u32(ev_start[mid]) <= v) { lo = mid; } else { hi = mid; }
  }
  let j = lo * p.max_events + (v - u32(ev_start[lo]));
  packed_action[v] = (ev_action[j >> 2u] >> ((j & 3u) * 8u)) & 0xffu;
  packed_target[v] = ev_target[j];
}`,
  build(a, rows) {
    const { packedAction, packedTarget, evStart, users } = a;
    if (packedAction.length < rows || packedTarget.length < rows || evStart.length <= users) return undefined;
    return {
      gridRows: rows,
      // The rows of this call only (the arrays have room for more): apply reads back just those, and
      // decideActions, on the CPU, then finds nothing more to read back.
      wrote: { packedAction: [0, rows], packedTarget: [0, rows] },
    };
  },
});

/**
 * postContent: one invocation per word of four active rows (cluster is u8, packed four rows to a
 * word; rows without a post keep their byte): for a row with a post event, the topic (interest
 * plus noise, normalised), the stance and the nearest prototype, in the CPU declaration's float32
 * order. Its six read-only arrays are one pack (`inp`). Words: n (rows).
 */
export const postContentGpu = wgslKernel({
  params: { key: 'key' },
  bind: { interest: 'pack', prototypes: 'pack', opinion: 'pack', active: 'pack', evAction: 'pack', evCount: 'pack' },
  words: ['n'],
  body: () => /* wgsl */ `
${RNG_WGSL}
${SOFTFLOAT_WGSL}
${SOFTMATH_WGSL}
const F_TOPIC_NOISE = ${f32Bits(TOPIC_NOISE)}u;
const F_STANCE_NOISE = ${f32Bits(STANCE_NOISE)}u;
// normalPair32(key, u, pair) of sim-core/rng.ts.
fn normal_pair(u: u32, pair: u32) -> vec2<u32> {
  return f_normal_pair(rng_hash(p.key_lo, p.key_hi, u, 2u * pair), rng_hash(p.key_lo, p.key_hi, u, 2u * pair + 1u));
}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  var cw = cluster[v];
  for (var b = 0u; b < 4u; b++) {
    let k = v * 4u + b;
    if (k >= p.n) { break; }
    let count = (inp[p.o_ev_count + (k >> 1u)] >> ((k & 1u) * 16u)) & 0xffffu;
    var posts = false;
    for (var e = 0u; e < count && !posts; e++) {
      let j = k * p.max_events + e;
      posts = ((inp[p.o_ev_action + (j >> 2u)] >> ((j & 3u) * 8u)) & 0xffu) == ${A.post}u;
    }
    if (!posts) { continue; }
    let u = inp[p.o_active + k];
    let t0 = k * p.dim;
    var norm = 0u;
    var z = vec2<u32>(0u, 0u);
    for (var d = 0u; d < p.dim; d++) {
      if ((d & 1u) == 0u) { z = normal_pair(u, 1u + (d >> 1u)); }
      let x = f_add(inp[p.o_interest + u * p.dim + d], f_mul(F_TOPIC_NOISE, select(z.x, z.y, (d & 1u) == 1u)));
      topic[t0 + d] = x;
      norm = f_add(norm, f_mul(x, x));
    }
    norm = f_sqrt(norm);
    // The CPU's \`sqrt || 1\`: a zero (or NaN) norm divides by 1.
    if ((norm & F_ABS) == 0u || (norm & F_ABS) > 0x7f800000u) { norm = F_ONE; }
    for (var d = 0u; d < p.dim; d++) { topic[t0 + d] = f_div(topic[t0 + d], norm); }
    var st = f_add(inp[p.o_opinion + u], f_mul(F_STANCE_NOISE, normal_pair(u, 0u).x));
    if (f_lt(st, F_ONE | F_SIGN)) { st = F_ONE | F_SIGN; } else if (f_lt(F_ONE, st)) { st = F_ONE; }
    stance[k] = st;
    var best = 0u;
    var best_dot = 0xff800000u;
    for (var t = 0u; t < p.topics; t++) {
      var dot = 0u;
      for (var d = 0u; d < p.dim; d++) { dot = f_add(dot, f_mul(topic[t0 + d], inp[p.o_prototypes + t * p.dim + d])); }
      if (f_lt(best_dot, dot)) {
        best_dot = dot;
        best = t;
      }
    }
    cw = (cw & ~(0xffu << (b * 8u))) | (best << (b * 8u));
  }
  cluster[v] = cw;
}`,
  build(a, rows) {
    const { cluster, stance, topics, dim } = a;
    if (cluster.length < rows || stance.length < rows || topics > 256) return undefined;
    return {
      gridRows: Math.ceil(rows / 4),
      words: { n: rows },
      // The rows of this call only (the arrays have room for more): apply reads back just those, and
      // the rest stays valid on the host, so writePosts, on the CPU, reads back nothing more.
      wrote: { topic: [0, rows * dim], stance: [0, rows], cluster: [0, rows] },
    };
  },
});

