/**
 * Follow-graph generators. Each returns an edge list (src[k] -> dst[k], dense ids) that
 * `buildGraph` turns into CSR; each is a pure function of its parameters and seed (counter-based
 * draws keyed by node and attempt), so a graph can be rebuilt exactly.
 *
 * Direction convention: an edge u -> v means "u follows v": v's posts reach u, and influence in the
 * classic models flows from v to u.
 */
import { InputError } from '../sim-core/errors.ts';
import type { Executor } from '../sim-core/exec.ts';
import { keyOf, streamOf, uniform } from '../sim-core/rng.ts';
import { sharedArray } from '../sim-core/table.ts';
import { kernels as GK, UNDRAWN } from './kernels.ts';

export interface EdgeList {
  nodes: number;
  src: Int32Array;
  dst: Int32Array;
  directed: boolean;
}

/**
 * A growable pair of edge arrays on shared memory, sized from the expected edge count so the
 * usual case never copies; `finish` returns exact-length views (no copy).
 */
class EdgeBuffer {
  private src: Int32Array;
  private dst: Int32Array;
  length = 0;
  constructor(capacity: number) {
    const c = Math.max(16, Number.isFinite(capacity) ? Math.ceil(capacity) : 16);
    this.src = sharedArray('i32', c);
    this.dst = sharedArray('i32', c);
  }
  push(u: number, v: number): void {
    if (this.length === this.src.length) {
      const c = this.src.length * 2;
      const s = sharedArray('i32', c);
      s.set(this.src);
      this.src = s;
      const d = sharedArray('i32', c);
      d.set(this.dst);
      this.dst = d;
    }
    this.src[this.length] = u;
    this.dst[this.length++] = v;
  }
  finish(nodes: number, directed: boolean): EdgeList {
    return { nodes, src: this.src.subarray(0, this.length), dst: this.dst.subarray(0, this.length), directed };
  }
}

/**
 * Barabasi-Albert (undirected): node m joins to nodes 0..m-1, then every later node t attaches to
 * m distinct earlier nodes chosen with probability proportional to degree (uniform picks from the
 * list of all edge endpoints so far, redrawn when a pick repeats one of t's). m * (n - m) edges.
 * The draws are graph/kernels.ts `attachBA`; barabasiAlbertOn runs them on an executor's threads.
 */
export function barabasiAlbert(n: number, m: number, seed: number): EdgeList {
  const { args, edges } = planBA(n, m, seed);
  GK.attachBA.fn(args, 0, n);
  return edges;
}

/** barabasiAlbert with the nodes drawn on `exec`'s threads (the same edges). */
export async function barabasiAlbertOn(exec: Executor, n: number, m: number, seed: number): Promise<EdgeList> {
  const { args, edges } = planBA(n, m, seed);
  await exec.run(GK.attachBA, args, n);
  return edges;
}

function planBA(n: number, m: number, seed: number) {
  if (!Number.isInteger(m) || !Number.isInteger(n) || m < 1 || n <= m) {
    throw new InputError(`barabasiAlbert needs 1 <= m < n (got m=${m}, n=${n}); use more agents or a smaller graph.m`);
  }
  const total = m * (n - m);
  const src = sharedArray('i32', total);
  const dst = sharedArray('i32', total).fill(UNDRAWN);
  for (let v = 0; v < m; v++) [src[v], dst[v]] = [m, v];
  const args = { src, dst, m, key: keyOf(seed, streamOf('graph.ba'), 0) };
  return { args, edges: { nodes: n, src, dst, directed: false } as EdgeList };
}

/**
 * Erdos-Renyi G(n, p) by geometric skipping (Batagelj & Brandes 2005), O(n + edges). Directed:
 * every ordered pair u != v independently; undirected: every pair u < v.
 */
export function erdosRenyi(n: number, p: number, seed: number, directed = false): EdgeList {
  if (!(p >= 0 && p <= 1)) throw new Error(`erdosRenyi needs 0 <= p <= 1 (got ${p})`);
  if (!(Number.isInteger(n) && n >= 0)) throw new Error(`erdosRenyi needs a whole n >= 0 (got ${n})`);
  const key = keyOf(seed, streamOf('graph.er'), 0);
  const pairs = directed ? n * (n - 1) : (n * (n - 1)) / 2;
  const out = new EdgeBuffer(pairs * p * 1.05 + 16);
  if (p > 0) {
    const lq = Math.log(1 - p);
    let draw = 0;
    let k = -1;
    for (;;) {
      k += p >= 1 ? 1 : 1 + Math.floor(Math.log(1 - uniform(key, 0, draw++)) / lq);
      if (k >= pairs) break;
      if (directed) {
        const u = Math.floor(k / (n - 1));
        let v = k - u * (n - 1);
        if (v >= u) v++;
        out.push(u, v);
      } else {
        // Pair index k -> (u, v), u < v, in row order of the upper triangle.
        let u = Math.floor((2 * n - 1 - Math.sqrt((2 * n - 1) ** 2 - 8 * k)) / 2);
        while (u > 0 && u * n - (u * (u + 1)) / 2 > k) u--;
        while ((u + 1) * n - ((u + 1) * (u + 2)) / 2 <= k) u++;
        const v = k - (u * n - (u * (u + 1)) / 2) + u + 1;
        out.push(u, v);
      }
    }
  }
  return out.finish(n, directed);
}

/**
 * Stochastic block model: nodes are numbered block by block (block b has sizes[b] nodes); each
 * pair (u in block a, v in block b) is an edge with probability probs[a][b], drawn by geometric
 * skipping per block pair. Undirected graphs use probs[a][b] for a <= b.
 */
export function stochasticBlockModel(sizes: number[], probs: number[][], seed: number, directed = false): EdgeList {
  const B = sizes.length;
  if (probs.length !== B) throw new Error(`stochasticBlockModel: probs needs ${B} rows, one per block (got ${probs.length})`);
  const first: number[] = [];
  let n = 0;
  for (const s of sizes) {
    if (!(Number.isInteger(s) && s >= 0)) throw new Error(`stochasticBlockModel: block sizes must be whole numbers >= 0 (got ${s})`);
    first.push(n);
    n += s;
  }
  // Validate every probability used before allocating (an undefined or NaN entry would otherwise
  // make the capacity NaN and the edge buffer silently empty).
  let expected = 0;
  for (let a = 0; a < B; a++) {
    for (let b = directed ? 0 : a; b < B; b++) {
      const p = probs[a]?.[b];
      if (!(typeof p === 'number' && p >= 0 && p <= 1)) {
        throw new Error(`stochasticBlockModel: probs[${a}][${b}] must be in [0, 1] (got ${p})`);
      }
      expected += sizes[a] * sizes[b] * p;
    }
  }
  const out = new EdgeBuffer(expected * 1.05 + 16);
  for (let a = 0; a < B; a++) {
    for (let b = directed ? 0 : a; b < B; b++) {
      const p = probs[a][b];
      if (p === 0) continue;
      const key = keyOf(seed, streamOf('graph.sbm'), a * B + b);
      const na = sizes[a];
      const nb = sizes[b];
      // Same block: undirected uses pairs i < j; directed uses ordered pairs i != j.
      const same = a === b;
      const pairs = same ? (directed ? na * (na - 1) : (na * (na - 1)) / 2) : na * nb;
      const lq = Math.log(1 - p);
      let k = -1;
      let draw = 0;
      for (;;) {
        k += p >= 1 ? 1 : 1 + Math.floor(Math.log(1 - uniform(key, 0, draw++)) / lq);
        if (k >= pairs) break;
        let i: number;
        let j: number;
        if (!same) {
          i = Math.floor(k / nb);
          j = k - i * nb;
        } else if (directed) {
          i = Math.floor(k / (na - 1));
          j = k - i * (na - 1);
          if (j >= i) j++;
        } else {
          i = Math.floor((2 * na - 1 - Math.sqrt((2 * na - 1) ** 2 - 8 * k)) / 2);
          while (i > 0 && i * na - (i * (i + 1)) / 2 > k) i--;
          while ((i + 1) * na - ((i + 1) * (i + 2)) / 2 <= k) i++;
          j = k - (i * na - (i * (i + 1)) / 2) + i + 1;
        }
        out.push(first[a] + i, first[b] + j);
      }
    }
  }
  return out.finish(n, directed);
}

export interface HomophilousOptions {
  /** Mean number of accounts each user follows (before follow-backs). */
  meanFollowing: number;
  /** 0 = no homophily; 1 = a maximally dissimilar candidate is always rejected. */
  homophily: number;
  /** Share of picks by preferential attachment (by follower count); the rest are uniform. */
  preferential?: number;
  /** Probability that a followed account follows back. */
  reciprocity?: number;
  /** Per-user opinion in [-1, 1] and primary topic, used for similarity. */
  opinion: Float32Array;
  topic: Uint8Array;
  /** Per-user weight for how many accounts it follows (e.g. activity level); mean-normalised. */
  weight?: Float32Array;
}

/**
 * The divisor s for which a user of weight w follows max(1, min(cap, m x w / s)) accounts on
 * average (what the rounding below gives) and the users average m: the weights' mean when few
 * users sit at 1 or at the cap, else adjusted (a heavy-tailed activity puts users at both), so the
 * mean following stays `meanFollowing`. Bisection on 1/s.
 */
function cappedWeightScale(weight: Float32Array, n: number, m: number, cap: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += weight[i];
  if (!(sum > 0) || m <= 1 || m >= cap) return sum > 0 ? sum / n : 1;
  const meanAt = (inv: number) => {
    let t = 0;
    for (let i = 0; i < n; i++) t += Math.max(1, Math.min(cap, m * weight[i] * inv));
    return t / n;
  };
  let lo = 0;
  let hi = n / sum;
  while (meanAt(hi) < m && hi < (n / sum) * 1e6) hi *= 2;
  for (let k = 0; k < 40; k++) {
    const mid = (lo + hi) / 2;
    if (meanAt(mid) < m) lo = mid;
    else hi = mid;
  }
  return 1 / hi;
}

/**
 * Directed scale-free follow graph with homophily: users join in id order; user t follows k_t
 * earlier users (k_t proportional to its weight, at most 20 x `meanFollowing`, scaled so the mean is `meanFollowing`), each candidate drawn by
 * preferential attachment on follower count (Price's model) or uniformly, and accepted with
 * probability 1 - homophily * d, where d in [0, 1] averages the opinion distance |o_t - o_j| / 2
 * and whether the primary topics differ. Rejected candidates are redrawn (up to 16 tries, then the
 * last is kept, so sparse similarity cannot stall the build). A followed user follows back with
 * probability `reciprocity`; follow-backs count as followers for later preferential picks. No
 * self-loops, no duplicate edges.
 */
export function homophilousPreferential(n: number, seed: number, o: HomophilousOptions): EdgeList {
  const { meanFollowing, homophily, opinion: Op, topic: Top } = o;
  if (!(Number.isInteger(n) && n >= 0)) throw new Error(`homophilousPreferential needs a whole n >= 0 (got ${n})`);
  if (Op.length < n || Top.length < n || (o.weight && o.weight.length < n)) {
    throw new Error(`homophilousPreferential needs opinion, topic (and weight) for all ${n} users`);
  }
  if (!(meanFollowing > 0)) throw new Error(`homophilousPreferential needs meanFollowing > 0 (got ${meanFollowing})`);
  if (!(homophily >= 0 && homophily <= 1)) throw new Error(`homophilousPreferential needs 0 <= homophily <= 1 (got ${homophily})`);
  const pref = o.preferential ?? 0.8;
  const recip = o.reciprocity ?? 0.1;
  const key = keyOf(seed, streamOf('graph.homophilous'), 0);
  const kRecip = keyOf(seed, streamOf('graph.homophilous.reciprocity'), 0);
  const cap = Math.max(1, Math.round(meanFollowing * 20));
  const wMean = o.weight ? cappedWeightScale(o.weight, n, meanFollowing, cap) : 1;
  const expected = n * meanFollowing * (1 + recip);
  const out = new EdgeBuffer(expected * 1.05 + 16);
  // Every follow (follow-backs included) adds its target here, so a uniform pick is a pick
  // proportional to followers.
  let ends = new Int32Array(Math.ceil(expected * 1.05) + 16);
  let len = 0;
  const mark = new Int32Array(n).fill(-1);
  for (let t = 1; t < n; t++) {
    const w = o.weight ? o.weight[t] / wMean : 1;
    const want = Math.min(t, cap, Math.max(1, Math.round(meanFollowing * w + uniform(key, t, 0) - 0.5)));
    let draw = 1;
    const ot = Op[t];
    const tt = Top[t];
    // t may be in the attachment list already (follow-backs earlier in its own turn): never itself.
    mark[t] = t;
    for (let c = 0; c < want; c++) {
      let v = -1;
      for (let tries = 0; tries < 16; tries++) {
        const cand =
          len > 0 && uniform(key, t, draw++) < pref
            ? ends[Math.floor(uniform(key, t, draw++) * len)]
            : Math.floor(uniform(key, t, draw++) * t);
        if (mark[cand] === t) continue;
        v = cand;
        const d = 0.25 * Math.abs(ot - Op[cand]) + (tt === Top[cand] ? 0 : 0.5);
        if (uniform(key, t, draw++) < 1 - homophily * d) break;
      }
      if (v < 0) continue;
      mark[v] = t;
      out.push(t, v);
      if (len === ends.length) {
        const e = new Int32Array(ends.length * 2);
        e.set(ends);
        ends = e;
      }
      ends[len++] = v;
      if (recip > 0 && uniform(kRecip, out.length) < recip) {
        // A follow-back is a follow too: t gains a follower, so it joins the attachment list.
        out.push(v, t);
        if (len === ends.length) {
          const e = new Int32Array(ends.length * 2);
          e.set(ends);
          ends = e;
        }
        ends[len++] = t;
      }
    }
  }
  return out.finish(n, true);
}
