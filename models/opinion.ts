/**
 * Opinion baselines on the follow graph; a user is influenced by the accounts it follows. Each
 * model's update scheme, with its source and the options that give NDlib's variant:
 *
 * - Voter (synchronous): each agent copies the discrete state of one followed account picked
 *   uniformly, all agents at once from the start-of-step states.
 * - DeGroot (synchronous; DeGroot 1974): each agent's opinion becomes the mean of its own (weight
 *   `selfWeight`) and its followees' opinions at the start of the step.
 * - Deffuant bounded confidence, `scheme`:
 *   - `pairwise` (default; Deffuant, Neau, Amblard and Weisbuch 2000, "Mixing beliefs among
 *     interacting agents", Adv. Complex Syst. 3; NDlib's AlgorithmicBiasModel with gamma = 0):
 *     a step is N pair updates, N the number of agents (one NDlib iteration), applied one after
 *     another in place. Update t picks agent i uniformly among all agents and j uniformly among the
 *     accounts i follows (NDlib: a uniform node, then a uniform neighbour; an agent that follows
 *     nobody wastes its update); if |x_i - x_j| < eps (strict, as in the paper and NDlib) both
 *     move: x_i += mu (x_j - x_i), x_j += mu (x_i - x_j), from the values before the update (j
 *     moves even where it does not follow i back; NDlib's graphs are undirected). The
 *     sum of opinions is kept up to float32 rounding (at most 2^-24 per update for |x| <= 1).
 *     NDlib fixes mu = 0.5 (both move to the average); the paper takes mu in (0, 0.5]. The updates
 *     are sequential, so this scheme runs on one thread whatever `--threads` says (a kernel declared
 *     `sequential`: one chunk); draws are keyed by (seed, step, update index), so the bytes do not
 *     depend on the thread count.
 *   - `synchronous` (socsim's own variant, its first): every agent picks one
 *     followee uniformly and moves toward it by mu (x_j - x_i) if |x_j - x_i| < eps, all at once
 *     from the start-of-step opinions; one-sided, so the mean opinion drifts. Parallel, O(agents).
 * - Hegselmann-Krause (synchronous; Hegselmann and Krause 2002, JASSS 5(3) 2): each agent's opinion
 *   becomes the mean of the start-of-step opinions within eps of its own, among its followees and
 *   (`includeSelf`, default true, as in the paper) itself; `strict` (default false) uses
 *   |x_j - x_i| < eps instead of the paper's <= eps. An agent with nobody within eps (possible only
 *   without self) keeps its opinion. NDlib's HKModel excludes the agent and uses a strict bound
 *   (`includeSelf: false, strict: true` reproduce its rule), but it updates agents one at a time in
 *   place (ndlib/models/opinions/HKModel.py, master of 2024, assigns after its loop over N random
 *   picks, so one agent changes per iteration); socsim keeps the synchronous scheme of the paper, O(edges) per step.
 * Opinions live in the agent column `opinion` (float32 in [-1, 1]); the voter state in `vote`.
 * Initial opinions: `initialOpinions.ts`. Voter: each of `states` opinions with equal
 * probability (NDlib draws two states evenly), or with the given `shares`.
 */
import { ensureColumn, sharedArray } from '../sim-core/table.ts';
import { keyOf, streamOf, below, uniform } from '../sim-core/rng.ts';
import type { Phase, StepContext, World } from '../sim-core/phase.ts';
import { kernels as K } from '../sim-core/kernels.ts';
import { queueReduce } from '../sim-core/exec.ts';
import { kernels as TK } from '../sim-core/treeSums.ts';
import { TREE_GROUP } from '../sim-core/treeShape.ts';
import { checkInitial, initOpinions, type InitialOpinion } from './initialOpinions.ts';

/** `shares`: relative weights of the `states` opinions at the start (default equal). */
export function voter(o: { states?: number; shares?: readonly number[] } = {}): Phase {
  const k = o.states ?? 2;
  // Votes live in a u8 column.
  if (!(Number.isInteger(k) && k >= 1 && k <= 256)) throw new Error(`voter needs 1 <= states <= 256 (got ${k})`);
  const cdf = o.shares && sharesCdf(o.shares, k);
  // The counts are read back while the next step runs (StepContext.later).
  const report = async (world: World, ctx: StepContext) => {
    const { sums } = await queueReduce(world.exec, K.countCodes, { codes: world.agents.columns.vote, k }, world.agents.length);
    ctx.later(sums.then((c) => {
      for (let i = 0; i < k; i++) ctx.metric(`vote_${i}`, c[i] ?? 0);
    }));
  };
  let next: Uint8Array;
  const metrics = Object.fromEntries(Array.from({ length: k }, (_, i) => [`vote_${i}`, 'i32' as const]));
  return {
    name: 'voter',
    reads: ['vote'],
    writes: ['vote'],
    metrics,
    init(world) {
      const n = world.agents.length;
      const vote = ensureColumn(world.agents, 'vote', { type: 'u8', dictionary: Array.from({ length: k }, (_, i) => `opinion ${i}`) });
      next = sharedArray('u8', n);
      const key = keyOf(world.seed, streamOf('voter.init'), 0);
      if (!cdf) for (let i = 0; i < n; i++) vote[i] = below(key, i, k);
      else {
        for (let i = 0; i < n; i++) {
          const u = uniform(key, i);
          let c = 0;
          while (c < k - 1 && u >= cdf[c]) c++;
          vote[i] = c;
        }
      }
    },
    async run(world, ctx) {
      const { exec, agents, graph } = world;
      const n = agents.length;
      const vote = agents.columns.vote as Uint8Array;
      const G = graph.following;
      await exec.run(K.gatherNeighbor, { offsets: G.offsets, targets: G.targets, src: vote, out: next, key: ctx.key('voter') }, n);
      await exec.run(K.copy, { out: vote, src: next }, n);
      await report(world, ctx);
    },
    measure: report,
  };
}

/** Cumulative shares (the last exactly 1); throws unless there are k non-negative weights, not all 0. */
function sharesCdf(shares: readonly number[], k: number): Float64Array {
  if (shares.length !== k) throw new Error(`voter shares needs one weight per state (${k}), got ${shares.length}`);
  const total = shares.reduce((a, b) => a + b, 0);
  if (!shares.every((w) => w >= 0 && Number.isFinite(w)) || !(total > 0)) throw new Error('voter shares must be non-negative and not all 0');
  const cdf = new Float64Array(k);
  let acc = 0;
  for (let i = 0; i < k; i++) cdf[i] = acc += shares[i] / total;
  cdf[k - 1] = 1;
  return cdf;
}

/**
 * An opinion phase: `initial` fills the column in `init`; `step` either writes the next opinions to
 * `out` (synchronous schemes, copied back after the step) or, with `inPlace`, updates x itself.
 */
function opinionModel(
  name: string,
  initial: InitialOpinion | undefined,
  step: (world: World, ctx: StepContext, x: Float32Array, out: Float32Array) => Promise<unknown>,
  inPlace = false,
): Phase {
  checkInitial(initial);
  let out: Float32Array;
  return {
    name,
    reads: ['opinion'],
    writes: ['opinion'],
    init(world) {
      initOpinions(world, initial);
      out = inPlace ? new Float32Array(0) : sharedArray('f32', world.agents.length);
    },
    async run(world, ctx) {
      const x = world.agents.columns.opinion as Float32Array;
      await step(world, ctx, x, out);
      if (!inPlace) await world.exec.run(K.copy, { out: x, src: out }, world.agents.length);
    },
  };
}

export function degroot(o: { selfWeight?: number; initial?: InitialOpinion } = {}): Phase {
  const selfWeight = o.selfWeight ?? 1;
  return opinionModel('degroot', o.initial, (w, _ctx, x, out) =>
    w.exec.run(K.segmentMean, { offsets: w.graph.following.offsets, targets: w.graph.following.targets, x, out, selfWeight }, w.agents.length),
  );
}

export const DEFFUANT_SCHEMES = ['pairwise', 'synchronous'] as const;
export type DeffuantScheme = (typeof DEFFUANT_SCHEMES)[number];

/** Deffuant bounded confidence; `scheme` defaults to `pairwise` (see the top of this file). */
export function deffuant(o: { eps: number; mu: number; scheme?: DeffuantScheme; initial?: InitialOpinion }): Phase {
  const scheme = o.scheme ?? 'pairwise';
  if (!DEFFUANT_SCHEMES.includes(scheme)) throw new Error(`deffuant scheme must be one of ${DEFFUANT_SCHEMES.join(', ')} (got ${scheme})`);
  if (scheme === 'pairwise') {
    return opinionModel(
      'deffuant',
      o.initial,
      async (w, ctx, x) => {
        const n = w.agents.length;
        const G = w.graph.following;
        // N pair updates, one after another (a sequential kernel: one chunk, one thread).
        await w.exec.run(K.pairwiseBounded, { offsets: G.offsets, targets: G.targets, x, eps: o.eps, mu: o.mu, agents: n, key: ctx.key('deffuant') }, n);
      },
      true,
    );
  }
  let partner: Int32Array | undefined;
  return opinionModel('deffuant', o.initial, async (w, ctx, x, out) => {
    const n = w.agents.length;
    // Sized to this world (a phase object may be initialised again for another world).
    if (partner?.length !== n) partner = sharedArray('i32', n);
    const G = w.graph.following;
    await w.exec.run(K.sampleNeighbor, { offsets: G.offsets, targets: G.targets, out: partner, key: ctx.key('deffuant') }, n);
    await w.exec.run(K.boundedStep, { x, out, partner, eps: o.eps, mu: o.mu }, n);
  });
}

/** Hegselmann-Krause; `includeSelf` (default true) and `strict` (default false) as at the top of this file. */
export function hegselmannKrause(o: { eps: number; includeSelf?: boolean; strict?: boolean; initial?: InitialOpinion }): Phase {
  const self = (o.includeSelf ?? true) ? 1 : 0;
  const strict = o.strict ? 1 : 0;
  return opinionModel('hegselmann-krause', o.initial, (w, _ctx, x, out) =>
    w.exec.run(K.segmentBoundedMean, { offsets: w.graph.following.offsets, targets: w.graph.following.targets, x, out, eps: o.eps, self, strict }, w.agents.length),
  );
}

/**
 * Opinion statistics as metrics: mean, variance, and Sarle's bimodality coefficient
 * b = (g^2 + 1) / (k + 3(n-1)^2/((n-2)(n-3))) with g the skewness and k the excess kurtosis
 * (SAS manual; values above 5/9 ~ 0.555 suggest a bimodal, polarised distribution). Moments are
 * population moments (divided by n). A constant opinion has variance 0 and bimodality 0.
 *
 * The mean comes from the `treeSum` kernel; the central moments from a second pass about that
 * mean (`treeCentralSums`). Raw power sums alone lose every digit of the variance once opinions
 * approach consensus (variance << mean^2, where DeGroot and Hegselmann-Krause end up): at 1M agents
 * with opinions 0.7 +- 0.001 they gave a bimodality of 2.0 (impossible; the true value is 1.0).
 * Both passes sum in a fixed tree of 4,096-row groups (sim-core/treeSums.ts), the same f64
 * roundings on either backend, so on webgpu the opinions stay on the device. A NaN or infinite
 * opinion makes all three metrics NaN.
 */
/** Rows per CPU chunk of the sums: whole groups. */
const TREE_CHUNK = 16 * TREE_GROUP;

export function opinionStats(): Phase {
  return {
    name: 'opinion-stats',
    reads: ['opinion'],
    writes: [],
    metrics: { opinion_mean: 'f64', opinion_var: 'f64', opinion_bimodality: 'f64' },
    run: measureOpinions,
    measure: measureOpinions,
  };
}

async function measureOpinions(world: World, ctx: StepContext): Promise<void> {
  const x = world.agents.columns.opinion;
  const n = world.agents.length;
  if (n === 0) {
    for (const m of ['opinion_mean', 'opinion_var', 'opinion_bimodality']) ctx.metric(m, 0);
    return;
  }
  // Sums by groups of rows, each group's a fixed tree, combined in group order (sim-core/treeSums.ts):
  // on the webgpu backend the device sums and only the groups' sums come back.
  const opts = { chunkRows: TREE_CHUNK };
  const groups = (await world.exec.run(TK.treeSum, { x }, n, opts)).flat();
  let s1 = 0;
  let lo = Infinity;
  let hi = -Infinity;
  let bad = 0;
  for (let g = 0; g < groups.length; g += 4) {
    s1 += groups[g];
    lo = Math.min(lo, groups[g + 1]);
    hi = Math.max(hi, groups[g + 2]);
    bad += groups[g + 3];
  }
  if (bad > 0) {
    // A NaN or an infinite opinion: no moment is defined.
    for (const m of ['opinion_mean', 'opinion_var', 'opinion_bimodality']) ctx.metric(m, NaN);
    return;
  }
  const mean0 = s1 / n;
  const central = (await world.exec.run(TK.treeCentralSums, { x, c: mean0 }, n, opts)).flat();
  let d1 = 0;
  let d2 = 0;
  let d3 = 0;
  let d4 = 0;
  for (let g = 0; g < central.length; g += 4) {
    d1 += central[g];
    d2 += central[g + 1];
    d3 += central[g + 2];
    d4 += central[g + 3];
  }
  // Shift the moments from mean0 to the exact mean (e is the rounding error of mean0).
  const e = d1 / n;
  const mean = mean0 + e;
  let m2 = 0;
  let m3 = 0;
  let m4 = 0;
  if (hi > lo) {
    m2 = d2 / n - e * e;
    m3 = d3 / n - 3 * e * (d2 / n) + 2 * e ** 3;
    m4 = d4 / n - 4 * e * (d3 / n) + 6 * e * e * (d2 / n) - 3 * e ** 4;
  }
  const g = m2 > 0 ? m3 / m2 ** 1.5 : 0;
  const k = m2 > 0 ? m4 / (m2 * m2) - 3 : 0;
  const corr = n > 3 ? (3 * (n - 1) ** 2) / ((n - 2) * (n - 3)) : 3;
  ctx.metric('opinion_mean', mean);
  ctx.metric('opinion_var', Math.max(0, m2));
  ctx.metric('opinion_bimodality', m2 > 0 ? (g * g + 1) / (k + corr) : 0);
}
