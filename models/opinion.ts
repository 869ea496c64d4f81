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
 */
import { ensureColumn, sharedArray } from '../sim-core/table.ts';
import { keyOf, streamOf, below } from '../sim-core/rng.ts';
import type { Phase } from '../sim-core/phase.ts';
import { kernels as K } from '../sim-core/kernels.ts';

export function voter(o: { states?: number } = {}): Phase {
  const k = o.states ?? 2;
  // Votes live in a u8 column.
  if (!(Number.isInteger(k) && k >= 1 && k <= 256)) throw new Error(`voter needs 1 <= states <= 256 (got ${k})`);
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
      for (let i = 0; i < n; i++) vote[i] = below(key, i, k);
    },
    async run(world, ctx) {
      const { exec, agents, graph } = world;
      const n = agents.length;
      const vote = agents.columns.vote as Uint8Array;
      const G = graph.following;
      await exec.run(K.sampleNeighbor, { offsets: G.offsets, targets: G.targets, out: partner, key: ctx.key('voter') }, n);
      await exec.run(K.gather, { out: next, src: vote, index: partner }, n);
      await exec.run(K.copy, { out: vote, src: next }, n);
      const c = await exec.reduce(K.countCodes, { codes: vote, k }, n);
      for (let i = 0; i < k; i++) ctx.metric(`vote_${i}`, c[i] ?? 0);
    },
  };
}

function opinionModel(
  name: string,
  step: (world: Parameters<Phase['run']>[0], ctx: Parameters<Phase['run']>[1], x: Float32Array, out: Float32Array) => Promise<unknown>,
): Phase {
  let out: Float32Array;
  return {
    name,
    reads: ['opinion'],
    writes: ['opinion'],
    init(world) {
      out = sharedArray('f32', world.agents.length);
    },
    async run(world, ctx) {
      const x = world.agents.columns.opinion as Float32Array;
      await step(world, ctx, x, out);
      await world.exec.run(K.copy, { out: x, src: out }, world.agents.length);
    },
  };
}

export function degroot(o: { selfWeight?: number } = {}): Phase {
  const selfWeight = o.selfWeight ?? 1;
  return opinionModel('degroot', (w, _ctx, x, out) =>
    w.exec.run(K.segmentMean, { offsets: w.graph.following.offsets, targets: w.graph.following.targets, x, out, selfWeight }, w.agents.length),
  );
}

export function deffuant(o: { eps: number; mu: number }): Phase {
  let partner: Int32Array | undefined;
  return opinionModel('deffuant', async (w, ctx, x, out) => {
    const n = w.agents.length;
    // Sized to this world (a phase object may be initialised again for another world).
    if (partner?.length !== n) partner = sharedArray('i32', n);
    const G = w.graph.following;
    await w.exec.run(K.sampleNeighbor, { offsets: G.offsets, targets: G.targets, out: partner, key: ctx.key('deffuant') }, n);
    await w.exec.run(K.boundedStep, { x, out, partner, eps: o.eps, mu: o.mu }, n);
  });
}

export function hegselmannKrause(o: { eps: number }): Phase {
  return opinionModel('hegselmann-krause', (w, _ctx, x, out) =>
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
    async run(world, ctx) {
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
    },
  };
}
