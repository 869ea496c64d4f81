/**
 * The follow graph in compressed sparse row form, in both directions: `following` (out-edges: whom
 * a user reads) and `followers` (in-edges: who reads a user). For undirected graphs both are the
 * same object, holding every edge in both directions.
 */
import { InputError } from './errors.ts';
import type { Executor } from './exec.ts';
import { sharedArray } from './table.ts';
import { kernels as K } from './kernels.ts';
import { kernels as CK, lastAtMost } from './csrKernels.ts';

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
 * Room left after following rows that the platform's daily rebuild folds (platform/followFold.ts):
 * `fraction` of the edges, at least `min` entries, after the rows a rebuild writes anew and after
 * the edges of the homophilous generator (graph/homophilous.ts), which become set-up's rows in
 * place. Pages past the rows are never touched until rows grow into them, so the room costs
 * address space, not memory (and checkpoints save a buffer up to its views' end only). At 10M
 * agents (495M edges, ~1.6M follows a day) an eighth lasts ~5 weeks. Tests lower it.
 */
export const foldRoom = { fraction: 1 / 8, min: 2 ** 16 };

/**
 * Readers working on a CSR's rows in the background (graph.arrow written while the first steps
 * run): while one holds a buffer, nothing may rewrite it in place (the platform's daily fold,
 * platform/followFold.ts). pinRows returns the release.
 */
const pins = new WeakMap<ArrayBufferLike, number>();
export function pinRows(rows: Int32Array): () => void {
  const b = rows.buffer;
  pins.set(b, (pins.get(b) ?? 0) + 1);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    pins.set(b, pins.get(b)! - 1);
  };
}
export const rowsPinned = (rows: Int32Array): boolean => (pins.get(rows.buffer) ?? 0) > 0;

/**
 * Edge sources given by blocks instead of an array (graph/homophilous.ts: 4 bytes per edge less):
 * edge e's source is the row whose block [starts[row], starts[row + 1]) holds e, except where bit
 * e of `back` is set (bit e & 31 of back[e >> 5]): then it is edge e - 1's target (a follow-back,
 * placed right after the follow it answers), which precedes the block's row (users follow earlier
 * users; buildGraph checks it).
 */
export interface BlockSources {
  starts: Float64Array;
  back: Int32Array;
}

/**
 * The following CSR of edges with block sources, built in place of `dst` (which becomes its
 * targets): row v is v's own edges in its block, in order, then the follow-backs whose source is v
 * (in later blocks: a follow-back's source precedes its block's owner, which is checked), in edge
 * order, as a sort would list them. No edge list beside the CSR: at 495M edges the peak of graph
 * construction is 4 bytes per edge lower than a sort's. Up to four parts of the rows, of about
 * equal edges, run side by side (csrKernels.ts `blockBacks`, `placeBlockRows`), with the same
 * result for any number.
 *
 * Row v moves right by offsets[v] - starts[v] = the follow-backs with a source before v that lie
 * in blocks from v's on, which include the inBlock[v] of its own block (their sources precede v).
 * So its follow-backs, at off + own and on, start at or past the block's end, and its own edges,
 * copied last first, each land at least as far right as they are read; rows placed last first
 * overwrite nothing an earlier row still has to read, and a part of rows overwrites only the
 * start of the next part's edges (below where that part's first row goes), copied aside first.
 */
async function rowsFromBlocks(exec: Executor, nodes: number, blocks: BlockSources, dst: Int32Array): Promise<Csr> {
  const { starts, back } = blocks;
  const m = dst.length;
  const parts = Math.max(1, Math.min(exec.threads, 4, Math.ceil(m / 2 ** 16)));
  const bounds = sharedArray('f64', parts + 1);
  for (let p = 1; p < parts; p++) bounds[p] = Math.min(nodes, lastAtMost(starts, Math.floor((m * p) / parts), 0, nodes) + 1);
  bounds[parts] = nodes;
  // Per part and row, the follow-backs it is the source of, then (in place) where the part's go.
  const counts = m >= 2 ** 31 ? sharedArray('f64', parts * nodes) : sharedArray('i32', parts * nodes);
  const inBlock = sharedArray('i32', nodes);
  const none = sharedArray('i32', 1);
  await exec.run(CK.blockBacks, { starts, back, dst, bounds, counts, inBlock, backTargets: none, nodes, scatter: 0 }, parts, { parts });
  const backOf = sharedArray('f64', nodes + 1);
  const offsets = m >= 2 ** 31 ? sharedArray('f64', nodes + 1) : sharedArray('i32', nodes + 1);
  let acc = 0;
  let at = 0;
  for (let v = 0; v < nodes; v++) {
    backOf[v] = acc;
    for (let p = 0, i = v; p < parts; p++, i += nodes) {
      const c = counts[i];
      counts[i] = acc;
      acc += c;
    }
    offsets[v] = at;
    at += starts[v + 1] - starts[v] - inBlock[v] + (acc - backOf[v]);
  }
  backOf[nodes] = acc;
  offsets[nodes] = at;
  const backTargets = sharedArray('i32', acc);
  await exec.run(CK.blockBacks, { starts, back, dst, bounds, counts, inBlock, backTargets, nodes, scatter: 1 }, parts, { parts });
  // Part p's rows before sideEnd[p] have edges below offsets[bounds[p]], where part p - 1's rows end.
  const sideAt = sharedArray('f64', parts + 1);
  const sideEnd = sharedArray('f64', parts);
  for (let p = 1; p < parts; p++) {
    const h = bounds[p];
    const x = offsets[h];
    sideEnd[p] = starts[h] >= x ? h : Math.min(bounds[p + 1], lastAtMost(starts, x - 1, h, nodes) + 1);
    sideAt[p + 1] = sideAt[p] + starts[sideEnd[p]] - starts[h];
  }
  const side = sharedArray('i32', Math.max(1, sideAt[parts]));
  for (let p = 1; p < parts; p++) side.set(dst.subarray(starts[bounds[p]], starts[sideEnd[p]]), sideAt[p]);
  await exec.run(CK.placeBlockRows, { starts, back, inBlock, backOf, backTargets, offsets, bounds, sideAt, sideEnd, side, dst }, parts, { parts });
  return { offsets, targets: dst };
}

/** The source of every edge as an array (tests, and callers that need one). */
export function sourceArray(src: Int32Array | BlockSources, dst: Int32Array): Int32Array {
  if (src instanceof Int32Array) return src;
  const out = sharedArray('i32', dst.length);
  let u = 0;
  for (let e = 0; e < dst.length; e++) {
    while (e >= src.starts[u + 1]) u++;
    out[e] = (src.back[e >>> 5] >>> (e & 31)) & 1 ? dst[e - 1] : u;
  }
  return out;
}

/**
 * The edges a CSR is built from (sim-core/csrKernels.ts): key -> value pairs; a CSR to transpose
 * (keys = its targets, values = the rows of rowOffsets); or edges with block sources as values
 * (rowOffsets and back; keys = the targets).
 */
interface EdgeSource {
  keys: Int32Array;
  values?: Int32Array;
  keys2?: Int32Array;
  values2?: Int32Array;
  rowOffsets?: Int32Array | Float64Array;
  back?: Int32Array;
}

/**
 * Rows per bucket of the counting sort, as a power of two: a bucket's slice of the targets holds
 * ~2^17 entries at the mean degree (in cache); at most 2^16 rows (offsets within a bucket are 16-bit).
 */
function bucketShift(nodes: number, m: number): number {
  const degree = Math.max(1, m / Math.max(1, nodes));
  let shift = 0;
  while (shift < 16 && 2 ** (shift + 1) * degree <= 2 ** 17) shift++;
  return shift;
}

/**
 * The sort's scratch `low` (2 bytes per entry) holds at most `lowEntries` entries: a larger graph
 * is scattered in several passes over its edges, each writing one group of buckets whose edges
 * fit, and each pass reads every edge again. At 495M edges (10M users, 2 threads, one run each)
 * the CSR both ways took 32.5 s in four passes (256 MB), 26.6 s in two and 23.6 s in one (1 GB),
 * with 5.8M, 6.1M and 6.5M kB at the peak; a run's set-up, 105 s with four passes and 95 s with
 * one, peaked at 6.04M and 6.57M kB, below what its state reaches after a few steps. Tests lower it.
 */
export const csrScratch = { lowEntries: 2 ** 29 };

/** Scratch for sortEdges over m edges (shared by a graph's two directions). */
const lowScratch = (m: number) => sharedArray('u16', Math.max(1, Math.min(m, csrScratch.lowEntries)));

/** Builds one CSR over `nodes` rows from `m` edges, rows listing their values in edge order. */
async function sortEdges(exec: Executor, nodes: number, m: number, edges: EdgeSource, low: Uint16Array): Promise<Csr> {
  const shift = bucketShift(nodes, m);
  const buckets = nodes > 0 ? ((nodes - 1) >>> shift) + 1 : 0;
  const parts = Math.max(1, Math.min(exec.threads, Math.ceil(m / 2 ** 16)));
  const counts = sharedArray('f64', parts * buckets);
  await exec.run(CK.bucketCounts, { keys: edges.keys, keys2: edges.keys2, counts, parts, buckets, shift, m }, parts, { parts });
  // Where each range's edges of each bucket start (the counts become those cursors in place).
  const starts = sharedArray('f64', buckets + 1);
  let acc = 0;
  for (let b = 0; b < buckets; b++) {
    starts[b] = acc;
    for (let p = 0, at = b; p < parts; p++, at += buckets) {
      const c = counts[at];
      counts[at] = acc;
      acc += c;
    }
  }
  starts[buckets] = acc;
  const targets = sharedArray('i32', m);
  const offsets = m >= 2 ** 31 ? sharedArray('f64', nodes + 1) : sharedArray('i32', nodes + 1);
  offsets[nodes] = m;
  for (let b0 = 0; b0 < buckets; ) {
    // The next group of buckets whose edges fit `low` (at least one bucket; low grows for a bigger one).
    let b1 = b0 + 1;
    while (b1 < buckets && starts[b1 + 1] - starts[b0] <= low.length) b1++;
    if (starts[b1] - starts[b0] > low.length) low = sharedArray('u16', starts[b1] - starts[b0]);
    const lowBase = starts[b0];
    await exec.run(CK.bucketScatter, { ...edges, low, b0, b1, lowBase, cursor: counts, targets, parts, buckets, shift, m, nodes }, parts, { parts });
    await exec.run(CK.bucketRows, { low, b0, lowBase, starts, offsets, targets, shift, nodes }, b1 - b0, { chunkRows: 8 });
    b0 = b1;
  }
  return { offsets, targets };
}

/**
 * A directed graph from its `following` CSR: the followers direction is its transpose, as
 * buildGraph would build it from the edge list in row order (each row's followers in that order).
 * For callers that produce rows directly: no edge list, no sort of the following direction. (The
 * platform's follow rebuild, which produces rows, needs no followers' rows: withLazyFollowers.)
 */
export async function withFollowers(exec: Executor, nodes: number, following: Csr): Promise<Graph> {
  const m = following.targets.length;
  const followers = await sortEdges(exec, nodes, m, { keys: following.targets, rowOffsets: following.offsets }, lowScratch(m));
  return { nodes, edges: m, directed: true, following, followers };
}

/**
 * A directed graph whose followers' rows are built from `following` only when first read (then
 * kept), on the calling thread: the same CSR withFollowers makes. Their offsets (each user's
 * follower count) are counted at once, on the threads. For the social platform, where nothing
 * reads the followers' rows (follower counts are its state; story seeds read the offsets): at 10M
 * agents and 495M edges the transpose took 9-17 s at set-up and at each daily rebuild, and its
 * 2 GB stayed for the run.
 */
export async function withLazyFollowers(exec: Executor, nodes: number, following: Csr): Promise<Graph> {
  const m = following.targets.length;
  const parts = Math.max(1, Math.min(exec.threads, Math.ceil(m / 2 ** 16)));
  const counts = sharedArray('f64', parts * nodes);
  await exec.run(CK.bucketCounts, { keys: following.targets, counts, parts, buckets: nodes, shift: 0, m }, parts, { parts });
  const offsets = m >= 2 ** 31 ? sharedArray('f64', nodes + 1) : sharedArray('i32', nodes + 1);
  let acc = 0;
  for (let v = 0; v < nodes; v++) {
    offsets[v] = acc;
    for (let p = 0, i = v; p < parts; p++, i += nodes) acc += counts[i];
  }
  offsets[nodes] = acc;
  return lazyFollowersGraph(nodes, following, offsets);
}

/** withLazyFollowers for a caller that knows the followers' offsets (the platform's rebuild: from the day's changes). */
export function lazyFollowersGraph(nodes: number, following: Csr, offsets: Int32Array | Float64Array): Graph {
  let targets: Int32Array | undefined;
  const followers: Csr = {
    offsets,
    get targets(): Int32Array {
      return (targets ??= transposeRows(nodes, following, offsets));
    },
    set targets(t: Int32Array) {
      targets = t;
    },
  };
  return { nodes, edges: following.targets.length, directed: true, following, followers };
}

/** The targets of G's transpose, given its offsets: G's rows read in order, so row v lists the rows holding v, in order. */
function transposeRows(nodes: number, G: Csr, offsets: Int32Array | Float64Array): Int32Array {
  const T = G.targets;
  const cursor = Float64Array.from(offsets.subarray(0, nodes));
  const targets = sharedArray('i32', T.length);
  for (let u = 0; u < nodes; u++) for (let e = G.offsets[u], e1 = G.offsets[u + 1]; e < e1; e++) targets[cursor[T[e]]++] = u;
  return targets;
}

/**
 * Throws an InputError naming the first edge with an id outside 0..nodes-1: such an id would be
 * counted into a row that does not exist.
 */
async function checkIds(exec: Executor, nodes: number, src: Int32Array | undefined, dst: Int32Array): Promise<void> {
  const firsts = await exec.run(K.firstBadEdge, { src, dst, nodes }, dst.length);
  const bad = firsts.find((f) => f.length > 0);
  if (!bad) return;
  const k = bad[0];
  const [end, id] = !src || src[k] >>> 0 < nodes ? ['target', dst[k]] : ['source', src[k]];
  throw new InputError(
    `follow graph edge ${k}: ${end} ${id} is outside 0..${nodes - 1} (${nodes} agents); ` +
      `edge ids must be agent rows: renumber the edges densely or build the graph over more agents`,
  );
}

/**
 * Builds the graph from an edge list (src[k] -> dst[k], dense ids in [0, nodes), checked).
 * Neighbour order within a row follows edge-list order, so the result is the same for any thread
 * count. Undirected graphs store each edge in both directions once, shared by
 * `following`/`followers`. The sources may be given as blocks (directed graphs only): then `dst`
 * is consumed, becoming the following CSR's targets (rowsFromBlocks).
 */
export async function buildGraph(
  exec: Executor,
  nodes: number,
  src: Int32Array | BlockSources,
  dst: Int32Array,
  directed = true,
  lazyFollowers = false,
): Promise<Graph> {
  const m = dst.length;
  if (!(src instanceof Int32Array)) {
    if (!directed) throw new Error('buildGraph: block sources are for directed graphs');
    // Block owners are rows by construction, and a follow-back's source is a checked target.
    await checkIds(exec, nodes, undefined, dst);
    if (lazyFollowers) return withLazyFollowers(exec, nodes, await rowsFromBlocks(exec, nodes, src, dst));
    const followers = await sortEdges(exec, nodes, m, { rowOffsets: src.starts, back: src.back, keys: dst }, lowScratch(m));
    return { nodes, edges: m, directed, following: await rowsFromBlocks(exec, nodes, src, dst), followers };
  }
  await checkIds(exec, nodes, src, dst);
  if (directed) {
    const low = lowScratch(m);
    const following = await sortEdges(exec, nodes, m, { keys: src, values: dst }, low);
    if (lazyFollowers) return withLazyFollowers(exec, nodes, following);
    const followers = await sortEdges(exec, nodes, m, { keys: dst, values: src }, low);
    return { nodes, edges: m, directed, following, followers };
  }
  const both = await sortEdges(exec, nodes, 2 * src.length, { keys: src, values: dst, keys2: dst, values2: src }, lowScratch(2 * src.length));
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
