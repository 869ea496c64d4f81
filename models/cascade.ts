/**
 * Contagion baselines on the follow graph, with the synchronous semantics NDlib documents: every
 * decision in a step reads the state at the start of the step. Influence flows from an account to
 * its followers (an edge u -> v, "u follows v", carries v's influence to u).
 *
 * - Independent cascade (IC): a node activated in step t gets one chance, with probability p, at
 *   each inactive follower in step t + 1. States: 0 inactive, 1 newly active, 2 active (spent).
 * - Linear threshold (LT): an inactive node adopts when the share of the accounts it follows that
 *   have adopted reaches its threshold (share >= threshold, as NDlib's ThresholdModel; equal
 *   weights 1/out-degree; an account that follows nobody never adopts). Thresholds are drawn once
 *   per node, uniform in [0, 1) (Kempe et al. 2003), or fixed: every node the same theta (NDlib's
 *   per-node `threshold`, 0.1 there unless set). States: 0 inactive, 1 adopted.
 * - SIR / SIS: each infectious node tries each susceptible follower with probability beta per step,
 *   then recovers with probability gamma (it still transmits in the step it recovers); SIS returns
 *   recovered nodes to susceptible. States: 0 S, 1 I, 2 R.
 * Fractions count the initial seeds. Each model also measures the initial state (`measure`, the
 * metrics row before step 0): the seeds are active there and "new" counts are 0.
 */
import { ensureColumn, sharedArray } from '../sim-core/table.ts';
import { keyOf, streamOf, uniform } from '../sim-core/rng.ts';
import type { Phase, StepContext, World } from '../sim-core/phase.ts';
import { checkSeedSize, seedTotal, selectSeeds, type SeedSize, type SeedStrategy } from './seeds.ts';
import { kernels as K } from '../sim-core/kernels.ts';
import { queueReduce } from '../sim-core/exec.ts';

/** Seeds: how they are chosen (default `hubs`) and how many (default 0.1% of agents, at least 1). */
export interface SeedOptions extends SeedSize {
  seeds?: SeedStrategy;
}

function stateColumn(world: World, labels: string[]): Uint8Array {
  return ensureColumn(world.agents, 'state', { type: 'u8', dictionary: labels }) as Uint8Array;
}

function seedRows(world: World, name: string, o: SeedOptions): Int32Array {
  const n = world.agents.length;
  const count = seedTotal(n, o, Math.max(1, Math.round(n * 0.001)));
  return selectSeeds(world.graph.followers, n, o.seeds ?? 'hubs', count, keyOf(world.seed, streamOf(`${name}.seeds`), 0));
}

export function independentCascade(o: SeedOptions & { p: number }): Phase {
  checkSeedSize(o);
  let next: Uint8Array;
  const report = async (world: World, ctx: StepContext, added: Promise<number[]>) => {
    const n = world.agents.length;
    const { sums } = await queueReduce(world.exec, K.countCodes, { codes: world.agents.columns.state, k: 3 }, n);
    ctx.later(Promise.all([added, sums]).then(([[a], counts]) => {
      const active = counts[1] + counts[2];
      ctx.metric('ic_new', a ?? 0);
      ctx.metric('ic_active', active);
      ctx.metric('ic_fraction', active / n);
    }));
  };
  return {
    name: 'independent-cascade',
    reads: ['state'],
    writes: ['state'],
    metrics: { ic_new: 'i32', ic_active: 'i32', ic_fraction: 'f64' },
    init(world) {
      const state = stateColumn(world, ['inactive', 'new', 'active']);
      next = sharedArray('u8', world.agents.length);
      for (const v of seedRows(world, 'ic', o)) state[v] = 1;
    },
    async run(world, ctx) {
      const { exec, agents, graph } = world;
      const state = agents.columns.state as Uint8Array;
      const n = agents.length;
      const F = graph.followers;
      await exec.run(K.spread, { offsets: F.offsets, targets: F.targets, state, next, from: 1, susceptible: 0, mark: 1, p: o.p, key: ctx.key('ic') }, n);
      await exec.run(K.transition, { state, from: 1, to: 2, p: 1, key: 0 }, n);
      const added = await queueReduce(exec, K.applyMarks, { state, next, when: 0 }, n);
      await report(world, ctx, added.sums);
    },
    measure: (world, ctx) => report(world, ctx, Promise.resolve([0])),
  };
}

/** The largest f32 <= x (x >= 0): stored so, a fixed theta keeps `share >= theta` exact at equality (1/5 >= 0.2). */
function f32AtMost(x: number): number {
  const f = new Float32Array([x]);
  if (f[0] > x) new Uint32Array(f.buffer)[0] -= 1;
  return f[0];
}

/**
 * `threshold`: `'uniform'` (default) draws each node's threshold from U[0, 1); a number in [0, 1]
 * gives every node that threshold. The threshold column is f32; a fixed theta is stored as the
 * largest f32 not above it, so a share equal to theta adopts as it does in exact arithmetic.
 */
export function linearThreshold(o: SeedOptions & { threshold?: 'uniform' | number } = {}): Phase {
  checkSeedSize(o);
  const fixed = o.threshold ?? 'uniform';
  if (fixed !== 'uniform' && !(typeof fixed === 'number' && fixed >= 0 && fixed <= 1)) {
    throw new Error(`linear threshold needs threshold "uniform" or a number in [0, 1] (got ${fixed})`);
  }
  let next: Uint8Array;
  const report = async (world: World, ctx: StepContext, added: Promise<number[]>) => {
    const n = world.agents.length;
    const { sums } = await queueReduce(world.exec, K.countCodes, { codes: world.agents.columns.state, k: 2 }, n);
    ctx.later(Promise.all([added, sums]).then(([[a], [, active]]) => {
      ctx.metric('lt_new', a ?? 0);
      ctx.metric('lt_active', active ?? 0);
      ctx.metric('lt_fraction', (active ?? 0) / n);
    }));
  };
  return {
    name: 'linear-threshold',
    reads: ['state', 'threshold'],
    writes: ['state'],
    metrics: { lt_new: 'i32', lt_active: 'i32', lt_fraction: 'f64' },
    init(world) {
      const state = stateColumn(world, ['inactive', 'adopted']);
      const threshold = ensureColumn(world.agents, 'threshold', { type: 'f32' }) as Float32Array;
      const n = world.agents.length;
      next = sharedArray('u8', n);
      if (fixed === 'uniform') {
        const key = keyOf(world.seed, streamOf('lt.threshold'), 0);
        for (let i = 0; i < n; i++) threshold[i] = uniform(key, i);
      } else {
        threshold.fill(f32AtMost(fixed));
      }
      for (const v of seedRows(world, 'lt', o)) state[v] = 1;
    },
    async run(world, ctx) {
      const { exec, agents, graph } = world;
      const state = agents.columns.state as Uint8Array;
      const threshold = agents.columns.threshold as Float32Array;
      const n = agents.length;
      const G = graph.following;
      await exec.run(K.thresholdMark, { offsets: G.offsets, targets: G.targets, state, threshold, next, from: 0, value: 1, mark: 1 }, n);
      const added = await queueReduce(exec, K.applyMarks, { state, next, when: 0 }, n);
      await report(world, ctx, added.sums);
    },
    measure: (world, ctx) => report(world, ctx, Promise.resolve([0])),
  };
}

export function sir(o: SeedOptions & { beta: number; gamma: number; sis?: boolean }): Phase {
  checkSeedSize(o);
  let next: Uint8Array;
  const name = o.sis ? 'sis' : 'sir';
  const report = async (world: World, ctx: StepContext, added: Promise<number[]>) => {
    const { sums } = await queueReduce(world.exec, K.countCodes, { codes: world.agents.columns.state, k: 3 }, world.agents.length);
    ctx.later(Promise.all([added, sums]).then(([[a], c]) => {
      ctx.metric('susceptible', c[0]);
      ctx.metric('infectious', c[1]);
      ctx.metric('recovered', c[2]);
      ctx.metric('new_infections', a ?? 0);
    }));
  };
  return {
    name,
    reads: ['state'],
    writes: ['state'],
    metrics: { susceptible: 'i32', infectious: 'i32', recovered: 'i32', new_infections: 'i32' },
    init(world) {
      const state = stateColumn(world, ['susceptible', 'infectious', 'recovered']);
      next = sharedArray('u8', world.agents.length);
      for (const v of seedRows(world, name, o)) state[v] = 1;
    },
    async run(world, ctx) {
      const { exec, agents, graph } = world;
      const state = agents.columns.state as Uint8Array;
      const n = agents.length;
      const F = graph.followers;
      await exec.run(K.spread, { offsets: F.offsets, targets: F.targets, state, next, from: 1, susceptible: 0, mark: 1, p: o.beta, key: ctx.key(`${name}.infect`) }, n);
      await exec.run(K.transition, { state, from: 1, to: o.sis ? 0 : 2, p: o.gamma, key: ctx.key(`${name}.recover`) }, n);
      const added = await queueReduce(exec, K.applyMarks, { state, next, when: 0 }, n);
      await report(world, ctx, added.sums);
    },
    measure: (world, ctx) => report(world, ctx, Promise.resolve([0])),
  };
}
