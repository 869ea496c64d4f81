/**
 * The follow graph in compressed sparse row form, in both directions: `following` (out-edges: whom
 * a user reads) and `followers` (in-edges: who reads a user). For undirected graphs both are the
 * same object, holding every edge in both directions.
 */
import { InputError } from './errors.ts';
import type { Executor } from './exec.ts';
import { sharedArray } from './table.ts';
import { kernels as K } from './kernels.ts';

export interface Csr {
  /** Row v's neighbours are targets[offsets[v] .. offsets[v + 1]); Float64Array past 2^31 - 1 edges. */
  offsets: Int32Array | Float64Array;
  targets: Int32Array;
}

export interface Graph {
  nodes: number;
  /** Edges stored per direction (an undirected edge counts twice). */
  edges: number;
  directed: boolean;
  following: Csr;
  followers: Csr;
}

/**
 * Builds one CSR from (keys, values) and optional mirrored (keys2, values2) edge arrays: a counting
 * sort over `parts` ranges of the edges (one per thread, at most the mean degree, so the counters
 * take no more memory than the edges), each read once to count and once to scatter.
 */
async function buildCsr(
  exec: Executor,
  nodes: number,
  keys: Int32Array,
  values: Int32Array,
  keys2?: Int32Array,
  values2?: Int32Array,
): Promise<Csr> {
  const m = keys.length + (keys2?.length ?? 0);
  const { parts, wide, counts } = partCounters(exec, nodes, m);
  const two = keys2 && values2 ? { keys2, values2 } : {};
  await exec.run(K.countKeys, { keys, keys2: two.keys2, counts, parts, nodes }, parts, { parts });
  const offsets = offsetsAndCursors(counts, parts, nodes, wide);
  const targets = sharedArray('i32', m);
  await exec.run(K.scatterKeys, { keys, values, ...two, cursor: counts, targets, parts, nodes }, parts, { parts });
  return { offsets, targets };
}

/** Per-part counters for `m` edges over `nodes` rows: a part per thread, at most the mean degree. */
function partCounters(exec: Executor, nodes: number, m: number) {
  const parts = Math.max(1, Math.min(exec.threads, Math.floor(m / Math.max(1, nodes))));
  const wide = m >= 2 ** 31;
  return { parts, wide, counts: wide ? sharedArray('f64', parts * nodes) : sharedArray('i32', parts * nodes) };
}

/** Row offsets from per-part counts, which become (in place) each part's cursor into each row. */
function offsetsAndCursors(counts: Int32Array | Float64Array, parts: number, nodes: number, wide: boolean): Int32Array | Float64Array {
  const offsets = wide ? sharedArray('f64', nodes + 1) : sharedArray('i32', nodes + 1);
  let acc = 0;
  for (let v = 0; v < nodes; v++) {
    offsets[v] = acc;
    for (let p = 0, at = v; p < parts; p++, at += nodes) {
      const c = counts[at];
      counts[at] = acc;
      acc += c;
    }
  }
  offsets[nodes] = acc;
  return offsets;
}

/**
 * A directed graph from its `following` CSR: the followers direction is its transpose, built as
 * buildGraph would from the edge list in row order (each row's followers in that order). For
 * callers that produce rows directly (the platform's follow rebuild): no edge list, no sort of the
 * following direction.
 */
export async function withFollowers(exec: Executor, nodes: number, following: Csr): Promise<Graph> {
  const keys = following.targets;
  const m = keys.length;
  const { parts, wide, counts } = partCounters(exec, nodes, m);
  await exec.run(K.countKeys, { keys, counts, parts, nodes }, parts, { parts });
  const offsets = offsetsAndCursors(counts, parts, nodes, wide);
  const targets = sharedArray('i32', m);
  await exec.run(K.scatterRows, { offsets: following.offsets, keys, cursor: counts, targets, parts, nodes }, parts, { parts });
  return { nodes, edges: m, directed: true, following, followers: { offsets, targets } };
}

/**
 * Throws an InputError naming the first edge with an id outside 0..nodes-1: such an id would be
 * counted into a row that does not exist.
 */
async function checkIds(exec: Executor, nodes: number, src: Int32Array, dst: Int32Array): Promise<void> {
  const firsts = await exec.run(K.firstBadEdge, { src, dst, nodes }, src.length);
  const bad = firsts.find((f) => f.length > 0);
  if (!bad) return;
  const k = bad[0];
  const [end, id] = src[k] >>> 0 < nodes ? ['target', dst[k]] : ['source', src[k]];
  throw new InputError(
    `follow graph edge ${k}: ${end} ${id} is outside 0..${nodes - 1} (${nodes} agents); ` +
      `edge ids must be agent rows: renumber the edges densely or build the graph over more agents`,
  );
}

/**
 * Builds the graph from an edge list (src[k] -> dst[k], dense ids in [0, nodes), checked).
 * Neighbour order within a row follows edge-list order, so the result is the same for any thread
 * count. Undirected graphs store each edge in both directions once, shared by
 * `following`/`followers`.
 */
export async function buildGraph(
  exec: Executor,
  nodes: number,
  src: Int32Array,
  dst: Int32Array,
  directed = true,
): Promise<Graph> {
  await checkIds(exec, nodes, src, dst);
  if (directed) {
    const following = await buildCsr(exec, nodes, src, dst);
    const followers = await buildCsr(exec, nodes, dst, src);
    return { nodes, edges: src.length, directed, following, followers };
  }
  const both = await buildCsr(exec, nodes, src, dst, dst, src);
  return { nodes, edges: 2 * src.length, directed, following: both, followers: both };
}

/** Degree of row v. */
export function degree(csr: Csr, v: number): number {
  return csr.offsets[v + 1] - csr.offsets[v];
}

/** Bytes held by the graph's arrays (shared CSR counted once). */
export function graphBytes(g: Graph): number {
  const one = (c: Csr) => c.offsets.byteLength + c.targets.byteLength;
  return g.following === g.followers ? one(g.following) : one(g.following) + one(g.followers);
}
