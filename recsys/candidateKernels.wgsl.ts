/**
 * The candidate index's two kernels (recsys/candidateKernels.ts candidateTops and mergeTops, which
 * attaches them) in WGSL, so that the cluster and trending lists are built where the
 * feed kernel reads them and never cross the bus: the same entries in `part`, the same lists.
 *
 * - A list score is an f32 times an integer, rounded once to f64 on the CPU: the base score (x-
 *   interest: times 1 + likes; reddit-hot: times 1) or the rank multiplier (chronological: times
 *   the id; random: times the keyed hash), each ranker's `listKey` expression in the case of its
 *   code (a ranker without one has its lists built on the CPU). `list_key` forms the exact product of the f32's 24-bit
 *   significand and the u32 (56 bits), rounds it to 53 bits to nearest even,
 *   as the f64 product is, and returns the bits listKey gives that f64. Scores must be finite
 *   (they are: recency is clipped at 0, follower factors and hot scores are finite).
 * - candidateTops: one invocation per (slice, list), slice-major (an invocation's neighbours read
 *   the same rows), each walking its slice newest first and keeping its list in private memory.
 *   The trending invocation takes every eligible row; a cluster's only that cluster's.
 * - mergeTops: one invocation per list, offering every slice's entries in slice order.
 *
 * Both stay on the CPU for lists longer than MAX_TOP entries (platform.perCluster and
 * platform.trending allow 256 and 1,024; the defaults are 16 and 20).
 */
import { RNG_WGSL } from '../sim-core/gpu/rng.wgsl.ts';
import { WORKGROUP } from '../sim-core/gpu/dispatch.ts';
import { wgslKernel } from '../sim-core/gpu/wgslKernel.ts';
import { FLAG, KIND } from '../platform/posts.ts';
import { BUNDLED_RANKERS } from './rankerRegistry.ts';
import { TOP_WORDS, topWidth } from './topLists.ts';

/** The longest list an invocation keeps in private memory. */
const MAX_TOP = 64;

/** The f32 x u32 product's list key (needs RNG_WGSL's mulhi). */
const LIST_KEY_WGSL = /* wgsl */ `
// listKey (recsys/kernels.ts) of the f64 product of the f32 with bits a and the integer l, as the
// CPU rounds it: (high word, low word).
fn list_key(a: u32, l: u32) -> vec2<u32> {
  let e = (a >> 23u) & 0xffu;
  var m = a & 0x7fffffu;
  // a = m x 2^ex.
  var ex = -149;
  if (e != 0u) {
    m = m | 0x800000u;
    ex = i32(e) - 150;
  }
  // p = m x l (below 2^56) as (hi, lo): u32 products wrap to the low word; mulhi of rng.wgsl.ts.
  let lo = m * l;
  let hi = mulhi(m, l);
  if (hi == 0u && lo == 0u) { return vec2<u32>(0x80000000u, 0u); }
  // The significand q (53 bits, its top bit at bit 52) as (qh, ql), the value q x 2^ex.
  var n = 31u - countLeadingZeros(lo);
  if (hi != 0u) { n = 63u - countLeadingZeros(hi); }
  var qh = hi;
  var ql = lo;
  if (n > 52u) {
    // 1 to 3 bits go: round to nearest, ties to even.
    let sh = n - 52u;
    let rest = lo & ((1u << sh) - 1u);
    let half = 1u << (sh - 1u);
    ql = (lo >> sh) | (hi << (32u - sh));
    qh = hi >> sh;
    ex = ex + i32(sh);
    if (rest > half || (rest == half && (ql & 1u) == 1u)) {
      ql = ql + 1u;
      if (ql == 0u) { qh = qh + 1u; }
      if (qh == 0x200000u) {
        qh = 0x100000u;
        ex = ex + 1;
      }
    }
  } else if (n < 52u) {
    let sh = 52u - n;
    if (sh >= 32u) {
      qh = lo << (sh - 32u);
      ql = 0u;
    } else {
      qh = (hi << sh) | (lo >> (32u - sh));
      ql = lo << sh;
    }
    ex = ex - i32(sh);
  }
  // The f64's high word: biased exponent ex + 52 + 1023, then the significand's 20 high bits.
  let bits = (u32(ex + 1075) << 20u) | (qh & 0xfffffu);
  if ((a >> 31u) == 0u) { return vec2<u32>(bits | 0x80000000u, ql); }
  return vec2<u32>(~bits & 0x7fffffffu, ~ql);
}

fn byte_of(w: u32, r: u32) -> u32 {
  return (w >> ((r & 3u) * 8u)) & 0xffu;
}
`;

/** A list in private memory, descending by key (hi, lo, tie). */
const TOP_LIST_WGSL = /* wgsl */ `
// Whether key (h, o, t) is above (h2, o2, t2).
fn key_above(h: u32, o: u32, t: u32, h2: u32, o2: u32, t2: u32) -> bool {
  if (h != h2) { return h > h2; }
  if (o != o2) { return o > o2; }
  return t > t2;
}

var<private> ids: array<u32, ${MAX_TOP}>;
var<private> kh: array<u32, ${MAX_TOP}>;
var<private> kl: array<u32, ${MAX_TOP}>;
var<private> kt: array<u32, ${MAX_TOP}>;

// Offers an entry to the private list of length len and capacity cap (descending by key); returns the new length.
fn offer(len: u32, cap: u32, id: u32, h: u32, o: u32, t: u32) -> u32 {
  var j = len;
  if (len == cap) { j = cap - 1u; }
  while (j > 0u && key_above(h, o, t, kh[j - 1u], kl[j - 1u], kt[j - 1u])) {
    ids[j] = ids[j - 1u];
    kh[j] = kh[j - 1u];
    kl[j] = kl[j - 1u];
    kt[j] = kt[j - 1u];
    j--;
  }
  ids[j] = id;
  kh[j] = h;
  kl[j] = o;
  kt[j] = t;
  return select(len + 1u, len, len == cap);
}

// Whether the entry would enter the list (full when len == cap).
fn enters(len: u32, cap: u32, h: u32, o: u32, t: u32) -> bool {
  return len < cap || key_above(h, o, t, kh[cap - 1u], kl[cap - 1u], kt[cap - 1u]);
}
`;

/** Each bundled ranker's list key (recommender.ts RankerWgsl.listKey) in the case of its code. */
const CASES = BUNDLED_RANKERS.map((R, code) => (R.wgsl?.listKey === undefined ? '' : `case ${code}u: { key = ${R.wgsl.listKey}; }`)).join('\n      ');

export const candidateTopsGpu = wgslKernel({
  params: { stride: 'none', key: 'key' },
  bind: { recF: 'none', likes: 'bits' },
  body: () => /* wgsl */ `
${RNG_WGSL}
${LIST_KEY_WGSL}
${TOP_LIST_WGSL}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let v = gid.x + gid.y * p.stride;
  if (v >= p.rows) { return; }
  let lists = p.topics + 1u;
  let s = v / lists;
  let l = v % lists;
  let trending = l == p.topics;
  let cap = select(p.per_cluster, p.trending, trending);
  let at = select(l * p.per_cluster, p.topics * p.per_cluster, trending);
  let width = p.topics * p.per_cluster + p.trending;
  let lo = p.first_row + s * p.slice_rows;
  let hi = min(p.count, lo + p.slice_rows);
  var len = 0u;
  for (var r = hi; cap > 0u && r > lo; ) {
    r--;
    let k = byte_of(kind[r >> 2u], r);
    if ((k != ${KIND.original}u && k != ${KIND.quote}u) || (byte_of(flags[r >> 2u], r) & ${FLAG.removed}u) != 0u) { continue; }
    if (!trending && byte_of(cluster[r >> 2u], r) != l) { continue; }
    let id = p.base + r;
    var key: vec2<u32>;
    switch (p.ranker) {
      ${CASES}
      default: {}
    }
    // A score below a full list's last cannot enter, whatever its tie: no hash (as on the CPU).
    if (len == cap && (key.x < kh[cap - 1u] || (key.x == kh[cap - 1u] && key.y < kl[cap - 1u]))) { continue; }
    let tie = rng_hash(p.key_lo, p.key_hi, id, 7u);
    if (enters(len, cap, key.x, key.y, tie)) { len = offer(len, cap, id, key.x, key.y, tie); }
  }
  for (var i = 0u; i < cap; i++) {
    let w = (s * width + at + i) * ${TOP_WORDS}u;
    if (i < len) {
      part[w] = ids[i];
      part[w + 1u] = kh[i];
      part[w + 2u] = kl[i];
      part[w + 3u] = kt[i];
    } else {
      part[w] = 0xffffffffu;
      part[w + 1u] = 0u;
      part[w + 2u] = 0u;
      part[w + 3u] = 0u;
    }
  }
}`,
  build(a, rows) {
    const { topics, perCluster: per, trending: cap, count } = a;
    const listKey = BUNDLED_RANKERS[a.ranker].wgsl?.listKey;
    if (listKey === undefined || per > MAX_TOP || cap > MAX_TOP) return undefined;
    // The base scores come from their own column (records.ts), written only for a device executor.
    if (a.score.length < count || [a.kind, a.flags, a.cluster, a.rank, a.likes].some((x) => x.length < count)) return undefined;
    const words = rows * topWidth(topics, per, cap) * TOP_WORDS;
    if (a.part.length < words) return undefined;
    return { gridRows: rows * (topics + 1), wrote: { part: [0, words] } };
  },
});

export const mergeTopsGpu = wgslKernel({
  body: () => /* wgsl */ `
${TOP_LIST_WGSL}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let l = gid.x + gid.y * p.stride;
  if (l >= p.rows) { return; }
  let is_trending = l == p.topics;
  let cap = select(p.per_cluster, p.trending_len, is_trending);
  let at = select(l * p.per_cluster, p.topics * p.per_cluster, is_trending);
  let width = p.topics * p.per_cluster + p.trending_len;
  var len = 0u;
  for (var s = 0u; s < p.slices; s++) {
    for (var i = 0u; i < cap; i++) {
      let w = (s * width + at + i) * ${TOP_WORDS}u;
      let id = part[w];
      if (id == 0xffffffffu) { break; }
      // Below a full list's last entry: so are the rest of this slice's list.
      if (!enters(len, cap, part[w + 1u], part[w + 2u], part[w + 3u])) { break; }
      len = offer(len, cap, id, part[w + 1u], part[w + 2u], part[w + 3u]);
    }
  }
  for (var i = 0u; i < cap; i++) {
    let id = select(-1, i32(ids[i]), i < len);
    if (is_trending) { trending[i] = id; } else { cluster_posts[at + i] = id; }
  }
}`,
  build(a, rows) {
    const { slices, topics, perCluster: per, trendingLen: cap, part } = a;
    if (per > MAX_TOP || cap > MAX_TOP || rows !== topics + 1 || a.clusterPosts.length < topics * per || a.trending.length < cap) return undefined;
    if (part.length < slices * topWidth(topics, per, cap) * TOP_WORDS) return undefined;
    return { gridRows: rows };
  },
});
