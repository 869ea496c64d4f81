/**
 * Opinion baselines on the follow graph, synchronous (every agent updates from the opinions at the
 * start of the step); a user is influenced by the accounts it follows.
 *
 * - Voter: each agent copies the discrete state of one followed account picked uniformly.
 * - DeGroot: each agent's opinion becomes the mean of its own (weight `selfWeight`) and its
 *   followees' opinions.
 * - Deffuant (bounded confidence, pairwise): each agent picks one followee uniformly and moves
 *   toward it by mu * (x_j - x_i) if |x_j - x_i| < eps. Variant: NDlib and Deffuant et al. (2000)
 *   update both ends of a random pair, one pair at a time; here every agent updates once per step,
 *   one-sided and synchronously, so a step is O(agents) and thread-count independent.
 * - Hegselmann-Krause: each agent's opinion becomes the mean of the opinions within eps of its own
 *   among itself and its followees (O(edges) per step).
 * Opinions live in the agent column `opinion` (float in [-1, 1]); the voter state in `vote`.
 *
 * Initial state (`initial`, drawn in `init` from the counter RNG, stream `opinion.initial`, so one
 * seed gives DeGroot, Deffuant and Hegselmann-Krause the same start):
 * - `uniform` on [lo, hi] (default [-1, 1], socsim's opinion scale; NDlib starts its
 *   bounded-confidence models uniform on [0, 1]: lo = 0, hi = 1 gives that);
 * - `leanings`: the synthetic population's opinions as built (population/synthesize.ts): a mix of
 *   five bumps, one per political leaning (centres -1, -0.5, 0, 0.5, 1, weights 0.15, 0.2, 0.3,
 *   0.2, 0.15, spread 0.15, clipped to [-1, 1]); a homophilous graph was built on these.
 * Without `initial` the column is left as it is. Voter: each of `states` opinions with equal
 * probability (NDlib draws two states evenly), or with the given `shares`.
 */
import { z } from 'zod';
import { ensureColumn, sharedArray } from '../sim-core/table.ts';
import { keyOf, streamOf, below, uniform } from '../sim-core/rng.ts';
import type { Phase, StepContext, World } from '../sim-core/phase.ts';
import { kernels as K } from '../sim-core/kernels.ts';

export const INITIAL_KINDS = ['uniform', 'leanings'] as const;
export interface InitialOpinion {
  kind: (typeof INITIAL_KINDS)[number];
  /** Bounds of `uniform`, in [-1, 1]. */
  lo?: number;
  hi?: number;
}

/**
 * The `initial` scenario parameter. `lo`/`hi` apply to `uniform` only; they carry defaults because
 * `--set initial.kind=leanings` merges into the parsed defaults, so only values other than the
 * defaults count as given with `leanings`.
 */
export function initialOpinionParam(kind: InitialOpinion['kind']) {
  return z
    .strictObject({
      kind: z.enum(INITIAL_KINDS).default(kind),
      lo: z.number().min(-1).max(1).default(-1),
      hi: z.number().min(-1).max(1).default(1),
    })
    .superRefine((v, ctx) => {
      if (v.lo > v.hi) ctx.addIssue({ code: 'custom', path: ['hi'], message: `must be >= lo (${v.lo})` });
      if (v.kind === 'leanings' && (v.lo !== -1 || v.hi !== 1)) {
        ctx.addIssue({ code: 'custom', path: [v.lo !== -1 ? 'lo' : 'hi'], message: 'applies to kind "uniform" only' });
      }
    })
    .default({ kind, lo: -1, hi: 1 })
    .describe('initial opinions: {kind: "uniform", lo, hi} (uniform on [lo, hi] within [-1, 1]) or {kind: "leanings"} (the population\'s five-bump mix)');
}

/** Checks `initial` when a phase is built (throws on bounds outside -1 <= lo <= hi <= 1). */
function checkInitial(initial: InitialOpinion | undefined): void {
  if (!initial) return;
  if (!INITIAL_KINDS.includes(initial.kind)) throw new Error(`initial opinions: kind must be one of ${INITIAL_KINDS.join(', ')} (got ${initial.kind})`);
  const { lo = -1, hi = 1 } = initial;
  if (!(lo >= -1 && lo <= hi && hi <= 1)) throw new Error(`initial opinions need -1 <= lo <= hi <= 1 (got ${lo}, ${hi})`);
}

function initOpinions(world: World, initial: InitialOpinion | undefined): void {
  if (!initial || initial.kind === 'leanings') return;
  const { lo = -1, hi = 1 } = initial;
  const x = world.agents.columns.opinion as Float32Array;
  const key = keyOf(world.seed, streamOf('opinion.initial'), 0);
  for (let i = 0; i < x.length; i++) x[i] = lo + (hi - lo) * uniform(key, i);
}

/** `shares`: relative weights of the `states` opinions at the start (default equal). */
export function voter(o: { states?: number; shares?: readonly number[] } = {}): Phase {
  const k = o.states ?? 2;
  // Votes live in a u8 column.
  if (!(Number.isInteger(k) && k >= 1 && k <= 256)) throw new Error(`voter needs 1 <= states <= 256 (got ${k})`);
  const cdf = o.shares && sharesCdf(o.shares, k);
  const report = async (world: World, ctx: StepContext) => {
    const c = await world.exec.reduce(K.countCodes, { codes: world.agents.columns.vote, k }, world.agents.length);
    for (let i = 0; i < k; i++) ctx.metric(`vote_${i}`, c[i] ?? 0);
  };
  let partner: Int32Array;
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
      partner = sharedArray('i32', n);
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
      await exec.run(K.sampleNeighbor, { offsets: G.offsets, targets: G.targets, out: partner, key: ctx.key('voter') }, n);
      await exec.run(K.gather, { out: next, src: vote, index: partner }, n);
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

function opinionModel(
  name: string,
  initial: InitialOpinion | undefined,
  step: (world: Parameters<Phase['run']>[0], ctx: Parameters<Phase['run']>[1], x: Float32Array, out: Float32Array) => Promise<unknown>,
): Phase {
  checkInitial(initial);
  let out: Float32Array;
  return {
    name,
    reads: ['opinion'],
    writes: ['opinion'],
    init(world) {
      initOpinions(world, initial);
      out = sharedArray('f32', world.agents.length);
    },
    async run(world, ctx) {
      const x = world.agents.columns.opinion as Float32Array;
      await step(world, ctx, x, out);
      await world.exec.run(K.copy, { out: x, src: out }, world.agents.length);
    },
  };
}

export function degroot(o: { selfWeight?: number; initial?: InitialOpinion } = {}): Phase {
  const selfWeight = o.selfWeight ?? 1;
  return opinionModel('degroot', o.initial, (w, _ctx, x, out) =>
    w.exec.run(K.segmentMean, { offsets: w.graph.following.offsets, targets: w.graph.following.targets, x, out, selfWeight }, w.agents.length),
  );
}

export function deffuant(o: { eps: number; mu: number; initial?: InitialOpinion }): Phase {
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

export function hegselmannKrause(o: { eps: number; initial?: InitialOpinion }): Phase {
  return opinionModel('hegselmann-krause', o.initial, (w, _ctx, x, out) =>
    w.exec.run(K.segmentBoundedMean, { offsets: w.graph.following.offsets, targets: w.graph.following.targets, x, out, eps: o.eps }, w.agents.length),
  );
}

/**
 * Opinion statistics as metrics: mean, variance, and Sarle's bimodality coefficient
 * b = (g^2 + 1) / (k + 3(n-1)^2/((n-2)(n-3))) with g the skewness and k the excess kurtosis
 * (SAS manual; values above 5/9 ~ 0.555 suggest a bimodal, polarised distribution). Moments are
 * population moments (divided by n). A constant opinion has variance 0 and bimodality 0.
 *
 * The mean comes from the `moments` kernel; the central moments from a second, ordered pass about
 * that mean. Raw power sums alone lose every digit of the variance once opinions approach
 * consensus (variance << mean^2, where DeGroot and Hegselmann-Krause end up): at 1M agents with
 * opinions 0.7 +- 0.001 they gave a bimodality of 2.0 (impossible; the true value is 1.0).
 */
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
  const [, s1] = await world.exec.reduce(K.moments, { x }, n);
  const mean0 = s1 / n;
  let d1 = 0;
  let d2 = 0;
  let d3 = 0;
  let d4 = 0;
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = x[i];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
    const d = v - mean0;
    const dd = d * d;
    d1 += d;
    d2 += dd;
    d3 += dd * d;
    d4 += dd * dd;
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
  ctx.metric('opinion_mean', n > 0 ? mean : 0);
  ctx.metric('opinion_var', Math.max(0, m2));
  ctx.metric('opinion_bimodality', m2 > 0 ? (g * g + 1) / (k + corr) : 0);
}
