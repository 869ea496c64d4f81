/**
 * Follow-graph generators. Each returns an edge list (src[k] -> dst[k], dense ids) that
 * `buildGraph` turns into CSR; each is a pure function of its parameters and seed (counter-based
 * draws keyed by node and attempt), so a graph can be rebuilt exactly.
 *
 * Direction convention: an edge u -> v means "u follows v": v's posts reach u, and influence in the
 * classic models flows from v to u.
 */
import { InputError } from '../sim-core/errors.ts';
import type { BlockEdgeList, EdgeList } from './edgeList.ts';
import type { Executor } from '../sim-core/exec.ts';
import { keyOf, streamOf, uniform } from '../sim-core/rng.ts';
import { sharedArray } from '../sim-core/table.ts';
import { kernels as GK, UNDRAWN } from './kernels.ts';

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

export type { BlockEdgeList, EdgeList } from './edgeList.ts';
export { homophilousPreferential, homophilousPreferentialOn, type HomophilousOptions } from './homophilous.ts';
