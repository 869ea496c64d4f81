/**
 * One entry point for a scenario's agents and follow graph: a synthetic population plus a
 * generated graph, or a real edge list (`--graph FILE`) with a synthetic population sized to its
 * nodes. Estimates the memory it needs before allocating anything large.
 */
import os from 'node:os';
import { z } from 'zod';
import { buildGraph, withLazyFollowers, type Csr, type Graph } from '../sim-core/csr.ts';
import { InputError } from '../sim-core/errors.ts';
import { releaseArrays, type Executor } from '../sim-core/exec.ts';
import type { Table } from '../sim-core/table.ts';
import { barabasiAlbertOn, erdosRenyi, homophilousPreferentialOn, stochasticBlockModel, type BlockEdgeList, type EdgeList } from '../graph/generators.ts';
import { edgeFileRecord, loadEdgeList, type EdgeFileRecord, type LoadEdgeListOptions } from '../graph/loadEdgeList.ts';
import { populationConfig, synthesizePopulationOn, type PopulationConfig } from './synthesize.ts';

export const graphSpec = z
  .discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('homophilous'),
      meanFollowing: z.number().positive().default(20).describe('mean number of accounts each user follows, before follow-backs'),
      homophily: z.number().min(0).max(1).default(0.7).describe('0: no homophily; 1: a follow of the most dissimilar account (opinion and topic) is always refused'),
      preferential: z.number().min(0).max(1).default(0.8).describe('share of follows chosen by follower count (preferential attachment); the rest uniformly'),
      reciprocity: z.number().min(0).max(1).default(0.1).describe('probability that a followed account follows back'),
    }),
    z.strictObject({
      kind: z.literal('barabasi-albert'),
      m: z.number().int().positive().default(5).describe('edges each new node attaches with, by degree (undirected)'),
    }),
    z.strictObject({
      kind: z.literal('erdos-renyi'),
      meanDegree: z.number().positive().default(10).describe('mean degree (directed: mean number followed); every pair independently'),
      directed: z.boolean().default(false).describe('one direction per edge (a follows b) instead of mutual edges'),
    }),
    z.strictObject({
      kind: z.literal('sbm'),
      meanDegree: z.number().positive().default(10).describe('mean degree over the blocks, one block per political leaning'),
      assortativity: z.number().positive().default(5).describe('ratio of the within-block to the between-block edge probability'),
      directed: z.boolean().default(false).describe('one direction per edge (a follows b) instead of mutual edges'),
    }),
  ])
  .describe('the follow graph: homophilous (preferential, opinion-homophilous, directed), barabasi-albert, erdos-renyi or sbm (stochastic block model)');
export type GraphSpec = z.input<typeof graphSpec>;

export interface SocietyOptions {
  agents: number;
  seed: number;
  graph: GraphSpec;
  /** A real edge list; when given, the population is sized to its nodes (or to `agents` if fixed). */
  graphFile?: string;
  /** When true with graphFile, ids in the file are 0..agents-1 as-is. */
  agentsFixed?: boolean;
  /**
   * How graphFile is read: ids 'int' (default) or 'name', and whether it is directed (default
   * true: a line `a b` means a follows b). The `graph` generator spec plays no part in it.
   */
  graphRead?: Pick<LoadEdgeListOptions, 'ids' | 'directed'>;
  population?: PopulationConfig;
  /** Extra bytes per agent the scenario's phases will allocate (state, scratch). */
  phaseBytesPerAgent?: number;
  /**
   * A directed graph's followers' rows built only if something reads them (csr.ts
   * withLazyFollowers; their offsets are there at once): for scenarios that never do.
   */
  lazyFollowers?: boolean;
  /**
   * With lazyFollowers and no graphFile: following rows to take as the graph instead of generating
   * one (a resumed run's, from its checkpoint; SetupContext.following). The population is
   * synthesised as always.
   */
  following?: Csr;
  log?: (line: string) => void;
}

export interface Society {
  agents: Table;
  graph: Graph;
  prototypes: Float32Array;
  archetypes: number;
  externalIds: Float64Array | string[] | null;
  /** The graph file as loaded (for the run manifest); absent for a generated graph. */
  graphSource?: EdgeFileRecord;
}

/** Expected edges of a generated graph (per direction counted once) for memory estimates. */
export function expectedEdges(agents: number, spec: z.output<typeof graphSpec>): number {
  switch (spec.kind) {
    case 'homophilous':
      return agents * spec.meanFollowing * (1 + spec.reciprocity);
    case 'barabasi-albert':
      return agents * spec.m;
    case 'erdos-renyi':
    case 'sbm':
      return spec.directed ? agents * spec.meanDegree : (agents * spec.meanDegree) / 2;
  }
}

/**
 * Peak bytes while building: agent columns (~100 B/agent with scratch) plus 28 B per edge: the
 * edge list (8 B; the growable generators' copy while they grow, 8 B more), both CSR directions
 * (8 B), the sort's transient 2 B, and the edge list and old CSR not yet collected when the next
 * buffers are made. A social-feed run of 10M agents and 495M edges peaks at ~23 B per edge in
 * set-up (its manifest's peak_rss_bytes; docs/performance.md, Memory).
 */
export function estimateBuildBytes(agents: number, edges: number, phaseBytesPerAgent = 0): number {
  return agents * (100 + phaseBytesPerAgent + 16) + edges * 28;
}

/** Throws InputError when the estimate exceeds 85% of the machine's memory. */
export function checkMemory(agents: number, edges: number, phaseBytesPerAgent = 0): void {
  const need = estimateBuildBytes(agents, edges, phaseBytesPerAgent);
  const have = os.totalmem();
  if (need > 0.85 * have) {
    const gib = (b: number) => (b / 2 ** 30).toFixed(1);
    throw new InputError(
      `population too large for this machine: ${agents} agents and ~${Math.round(edges)} edges need about ${gib(need)} GiB, ` +
        `the machine has ${gib(have)} GiB; use fewer --agents or a sparser graph`,
    );
  }
}

async function generate(exec: Executor, agents: number, seed: number, spec: z.output<typeof graphSpec>, opinion: Float32Array, topic: Uint8Array, leaning: Uint8Array, activity: Float32Array, leanings: number): Promise<EdgeList | BlockEdgeList> {
  switch (spec.kind) {
    case 'homophilous':
      return homophilousPreferentialOn(exec, agents, seed, { ...spec, opinion, topic, weight: activity });
    case 'barabasi-albert':
      return barabasiAlbertOn(exec, agents, spec.m, seed);
    case 'erdos-renyi': {
      const pairs = spec.directed ? agents - 1 : agents - 1;
      return erdosRenyi(agents, Math.min(1, spec.meanDegree / Math.max(1, pairs)), seed, spec.directed);
    }
    case 'sbm': {
      // Blocks are leanings: renumbering agents would break row identity, so build the SBM over
      // block-ordered ids and map them back to agent rows.
      const sizes = new Array<number>(leanings).fill(0);
      for (let i = 0; i < agents; i++) sizes[leaning[i]]++;
      const order = new Int32Array(agents);
      const at = sizes.map((_, b) => sizes.slice(0, b).reduce((x, y) => x + y, 0));
      for (let i = 0; i < agents; i++) order[at[leaning[i]]++] = i;
      const r = spec.assortativity;
      const sumSq = sizes.reduce((s, x) => s + x * x, 0);
      const cross = agents * agents - sumSq;
      const pOut = (spec.meanDegree * agents) / Math.max(1, r * sumSq + cross);
      const probs = sizes.map((_, a) => sizes.map((__, b) => Math.min(1, a === b ? r * pOut : pOut)));
      const el = stochasticBlockModel(sizes, probs, seed, spec.directed);
      for (let k = 0; k < el.src.length; k++) {
        el.src[k] = order[el.src[k]];
        el.dst[k] = order[el.dst[k]];
      }
      return el;
    }
  }
}

export async function buildSociety(exec: Executor, o: SocietyOptions): Promise<Society> {
  if (o.following && o.lazyFollowers && !o.graphFile) {
    const rows = o.following.offsets.length - 1;
    if (rows !== o.agents) throw new Error(`the saved graph has ${rows} rows for ${o.agents} agents`);
    const t0 = performance.now();
    const pop = await synthesizePopulationOn(exec, o.agents, o.seed, o.population);
    o.log?.(`synthesised ${o.agents} agents in ${seconds(t0)}`);
    const graph = await withLazyFollowers(exec, o.agents, o.following);
    o.log?.(`took the checkpoint's graph (${graph.edges} follows) instead of generating one`);
    return { agents: pop.agents, graph, prototypes: pop.prototypes, archetypes: pop.archetypes, externalIds: null, graphSource: undefined };
  }
  let made: Awaited<ReturnType<typeof populationAndEdges>> | undefined = await populationAndEdges(exec, o);
  const { pop, externalIds, graphSource } = made;
  const t0 = performance.now();
  const graph = await buildGraph(exec, pop.agents.length, made.edges.src, made.edges.dst, made.edges.directed, o.lazyFollowers);
  const built = !graph.directed ? 'undirected' : o.lazyFollowers ? "following; the followers' counts" : 'both directions';
  o.log?.(`built the graph's adjacency (CSR, ${built}) in ${seconds(t0)}`);
  // The edge list (and the sort's scratch) go before the platform allocates its state.
  made = undefined;
  await releaseArrays(exec);
  return { agents: pop.agents, graph, prototypes: pop.prototypes, archetypes: pop.archetypes, externalIds, graphSource };
}

/** The population and its follow edges: generated, or loaded from --graph (which fixes the agent count). */
async function populationAndEdges(exec: Executor, o: SocietyOptions) {
  const log = o.log ?? (() => {});
  const spec = graphSpec.parse(o.graph);
  if (o.graphFile) {
    const loaded = await loadEdgeList(o.graphFile, {
      agents: o.agentsFixed ? o.agents : undefined,
      ids: o.graphRead?.ids,
      directed: o.graphRead?.directed ?? true,
    });
    checkMemory(loaded.nodes, loaded.src.length * (loaded.directed ? 1 : 2), o.phaseBytesPerAgent);
    log(`loaded ${o.graphFile} (${loaded.directed ? 'directed' : 'undirected'}, ${loaded.ids} ids): ${loaded.nodes} nodes, ${loaded.src.length} edges`);
    const pop = await synthesizePopulationOn(exec, loaded.nodes, o.seed, o.population);
    const edges: EdgeList | BlockEdgeList = loaded;
    return { pop, edges, externalIds: loaded.externalIds as Society['externalIds'], graphSource: edgeFileRecord(loaded) as EdgeFileRecord | undefined };
  }
  checkMemory(o.agents, expectedEdges(o.agents, spec), o.phaseBytesPerAgent);
  const t0 = performance.now();
  const pop = await synthesizePopulationOn(exec, o.agents, o.seed, o.population);
  log(`synthesised ${o.agents} agents in ${seconds(t0)}`);
  const t1 = performance.now();
  const c = pop.agents.columns;
  const edges = await generate(exec, o.agents, o.seed, spec, c.opinion as Float32Array, c.topic as Uint8Array, c.leaning as Uint8Array, c.activity as Float32Array, pop.config.leaning.labels.length);
  log(`generated ${spec.kind} graph: ${edges.dst.length} edges in ${seconds(t1)}`);
  return { pop, edges, externalIds: null as Society['externalIds'], graphSource: undefined as EdgeFileRecord | undefined };
}

/** Seconds since `t0` (performance.now()) for a progress line. */
const seconds = (t0: number): string => `${((performance.now() - t0) / 1000).toFixed(1)} s`;

export { populationConfig };
