/**
 * Synthetic population: categorical attributes drawn from given marginals, a continuous opinion
 * centred on the political leaning, a D-dimensional interest vector mixed from T topic prototypes,
 * a heavy-tailed activity level, a chronotype (24-hour activity profile) and an archetype id from
 * binned attributes. Every draw is keyed by (seed, attribute stream, agent row), so a population is
 * a pure function of (config, seed) and any row can be regenerated alone.
 */
import { z } from 'zod';
import type { Executor } from '../sim-core/exec.ts';
import type { ArgsOf } from '../sim-core/kernel.ts';
import { keyOf, normal, streamOf } from '../sim-core/rng.ts';
import { createTable, sharedArray, type Schema, type Table, type TypedArray } from '../sim-core/table.ts';
import { kernels as K } from './kernels.ts';

/** Activity tiers used for archetypes: bounds on the activity level. */
export const ACTIVITY_TIERS = ['low', 'medium', 'high'] as const;

export const marginal = z.strictObject({
  labels: z.array(z.string().min(1)).min(1).max(255).describe('the categories'),
  weights: z.array(z.number().nonnegative()).min(1).describe('relative weight of each label, one per label (need not sum to 1)'),
});
export type Marginal = z.infer<typeof marginal>;

export const populationConfig = z
  .strictObject({
    ageBand: marginal
      .default({
        labels: ['18-24', '25-34', '35-44', '45-54', '55-64', '65+'],
        weights: [0.14, 0.22, 0.2, 0.17, 0.14, 0.13],
      })
      .describe('age bands and their shares (with leanings and activity tiers, they make the archetypes)'),
    gender: marginal.default({ labels: ['female', 'male', 'other'], weights: [0.5, 0.48, 0.02] }).describe('genders and their shares'),
    region: marginal.default({ labels: ['north', 'south', 'east', 'west', 'central'], weights: [1, 1, 1, 1, 1] }).describe('regions and their shares'),
    leaning: marginal
      .default({
        labels: ['left', 'center-left', 'center', 'center-right', 'right'],
        weights: [0.15, 0.2, 0.3, 0.2, 0.15],
      })
      .describe('political leanings, left to right, and their shares; opinions centre on them'),
    leaningCentres: z.array(z.number().min(-1).max(1)).optional().describe('opinion centre of each leaning label, in [-1, 1] (default: evenly spaced from -1 to 1)'),
    opinionSpread: z.number().nonnegative().default(0.15).describe("standard deviation of opinion around the leaning's centre"),
    interestDim: z.number().int().min(2).max(256).default(16).describe('dimension of the interest vectors (users and posts)'),
    topics: z.number().int().min(1).max(255).default(64).describe('number of topic prototypes the interests are mixed from'),
    /**
     * The activity level is a user's mean sessions per hour (before the chronotype's hour-of-day
     * profile): Pareto with shape `activityShape` (smaller = heavier tail), capped at
     * `activityCap`, with the scale set so the capped mean is `activityMean`. Defaults calibrated
     * with the post rates (platform/behaviour.ts) to Pew Research Center's survey of US adult
     * Twitter users (Wojcik and Hughes, "Sizing Up Twitter Users", April 2019): the median user
     * tweets twice a month, the most active 10% write 80% of tweets (their median 138 a month),
     * and 47% of the other 90% use the platform daily. The defaults give (computed from the
     * configuration, `tests/population/pewCalibration.test.ts`) ~2.9 posts a month for the median
     * user, ~84% from the top 10% (their median ~131) and ~50% of the others online daily. At most
     * 4 sessions an hour: one every 15 minutes.
     */
    activityShape: z.number().gt(1).default(1.2).describe('Pareto shape of the activity level, sessions per hour (smaller: heavier tail)'),
    activityMean: z.number().gt(0).default(0.065).describe('mean activity level, sessions per hour, after the cap'),
    activityCap: z.number().gt(0).max(60).default(4).describe('most sessions per hour a user can have'),
  })
  .superRefine((c, ctx) => {
    for (const key of ['ageBand', 'gender', 'region', 'leaning'] as const) {
      const m = c[key];
      if (m.labels.length !== m.weights.length) {
        ctx.addIssue({ code: 'custom', path: [key, 'weights'], message: `needs ${m.labels.length} weights, one per label` });
      } else if (!(m.weights.reduce((a, b) => a + b, 0) > 0)) {
        ctx.addIssue({ code: 'custom', path: [key, 'weights'], message: 'must not all be zero' });
      }
    }
    const archetypes = c.ageBand.labels.length * c.leaning.labels.length * ACTIVITY_TIERS.length;
    if (archetypes > 65536) {
      // The archetype id is a u16 column.
      ctx.addIssue({
        code: 'custom',
        path: ['ageBand', 'labels'],
        message: `age bands x leanings x ${ACTIVITY_TIERS.length} activity tiers gives ${archetypes} archetypes; at most 65536 fit`,
      });
    }
    if (c.activityMean >= c.activityCap) {
      ctx.addIssue({ code: 'custom', path: ['activityMean'], message: `must be below activityCap (${c.activityCap}): a capped level cannot average more than its cap` });
    }
    if (c.leaningCentres && c.leaningCentres.length !== c.leaning.labels.length) {
      ctx.addIssue({ code: 'custom', path: ['leaningCentres'], message: `needs one centre per leaning label (${c.leaning.labels.length})` });
    }
  });
export type PopulationConfig = z.input<typeof populationConfig>;

export const CHRONOTYPES = ['early', 'daytime', 'evening', 'night'] as const;

/**
 * Relative activity per hour of day for each chronotype (peak = 1). Shapes follow the diurnal
 * curve of posting activity reported for Twitter (low at 3-5 am, evening peak); the four types
 * shift that curve.
 */
export const HOURLY_PROFILES: readonly (readonly number[])[] = CHRONOTYPES.map((_, c) => {
  const peak = [9, 13, 20, 23][c];
  return Array.from({ length: 24 }, (_, h) => {
    const d = Math.min(Math.abs(h - peak), 24 - Math.abs(h - peak));
    return 0.1 + 0.9 * Math.exp(-(d * d) / (2 * 3.5 * 3.5));
  });
});

export function agentSchema(labels: {
  ageBand: readonly string[];
  gender: readonly string[];
  region: readonly string[];
  leaning: readonly string[];
  interestDim: number;
}) {
  return {
    age_band: { type: 'u8', dictionary: labels.ageBand },
    gender: { type: 'u8', dictionary: labels.gender },
    region: { type: 'u8', dictionary: labels.region },
    leaning: { type: 'u8', dictionary: labels.leaning },
    chronotype: { type: 'u8', dictionary: CHRONOTYPES },
    activity_tier: { type: 'u8', dictionary: ACTIVITY_TIERS },
    topic: { type: 'u8' },
    archetype: { type: 'u16' },
    activity: { type: 'f32' },
    opinion: { type: 'f32' },
    interest: { type: 'f32', width: labels.interestDim, snapshot: false },
  } satisfies Schema;
}

export interface Population {
  agents: Table;
  /** T x D row-major unit vectors: the topic prototypes. */
  prototypes: Float32Array;
  config: z.output<typeof populationConfig>;
  /** Number of archetypes (age band x leaning x activity tier); empty ones included. */
  archetypes: number;
}

/**
 * The scale xm of a Pareto(shape a > 1) whose values capped at `cap` have mean `mean` in (0, cap):
 * E[min(X, cap)] = (a*xm - xm^a * cap^(1-a)) / (a - 1) for xm <= cap, increasing from 0 to cap,
 * solved by bisection.
 */
export function paretoScaleForCappedMean(mean: number, a: number, cap = 1): number {
  const f = (xm: number) => (a * xm - xm ** a * cap ** (1 - a)) / (a - 1);
  let lo = 0;
  let hi = cap;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (f(mid) < mean) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

function cdfOf(weights: readonly number[]): Float64Array {
  const total = weights.reduce((a, b) => a + b, 0);
  const cdf = new Float64Array(weights.length);
  let acc = 0;
  for (let i = 0; i < weights.length; i++) cdf[i] = acc += weights[i] / total;
  cdf[weights.length - 1] = 1;
  return cdf;
}

/** Unit-length topic prototypes, a function of (seed, T, D). */
export function topicPrototypes(seed: number, topics: number, dim: number): Float32Array {
  const key = keyOf(seed, streamOf('population.prototypes'), 0);
  const p = sharedArray('f32', topics * dim);
  for (let t = 0; t < topics; t++) {
    let norm = 0;
    for (let d = 0; d < dim; d++) {
      const v = normal(key, t * dim + d);
      p[t * dim + d] = v;
      norm += v * v;
    }
    norm = Math.sqrt(norm);
    for (let d = 0; d < dim; d++) p[t * dim + d] /= norm;
  }
  return p;
}

/** Generates `agents` synthetic users; a pure function of (agents, config, seed). */
export function synthesizePopulation(agents: number, seed: number, input: PopulationConfig = {}): Population {
  const { population, args } = plan(agents, seed, input);
  K.synthesizeRows.fn(args, 0, agents);
  return population;
}

/** synthesizePopulation with the rows filled on `exec`'s threads (the same bytes). */
export async function synthesizePopulationOn(exec: Executor, agents: number, seed: number, input: PopulationConfig = {}): Promise<Population> {
  const { population, args } = plan(agents, seed, input);
  await exec.run(K.synthesizeRows, args, agents);
  return population;
}

/** The table (columns zeroed) and the arguments of the row kernel (population/kernels.ts). */
function plan(agents: number, seed: number, input: PopulationConfig) {
  const config = populationConfig.parse(input);
  const D = config.interestDim;
  const T = config.topics;
  const schema = agentSchema({
    ageBand: config.ageBand.labels,
    gender: config.gender.labels,
    region: config.region.labels,
    leaning: config.leaning.labels,
    interestDim: D,
  });
  const table = createTable(schema, agents);
  const key = (name: string) => keyOf(seed, streamOf(`population.${name}`), 0);
  const marginals = [config.ageBand.weights, config.gender.weights, config.region.weights, config.leaning.weights, [0.2, 0.35, 0.3, 0.15]];
  const cdfs = sharedArray('f64', marginals.reduce((n, w) => n + w.length, 0));
  let at = 0;
  for (const w of marginals) {
    cdfs.set(cdfOf(w), at);
    at += w.length;
  }
  const L = config.leaning.labels.length;
  const centres = sharedArray('f64', L);
  centres.set(config.leaningCentres ?? Array.from({ length: L }, (_, i) => (L === 1 ? 0 : -1 + (2 * i) / (L - 1))));
  // Activity: Pareto(shape a, scale xm) capped at activityCap, with xm chosen so the capped mean
  // is activityMean (the uncapped mean a*xm/(a-1) would be 37% higher at the defaults, more for
  // shapes nearer 1). Tiers: below the median, below the top 20%, the rest.
  const a = config.activityShape;
  const xm = paretoScaleForCappedMean(config.activityMean, a, config.activityCap);
  // Interests: noise keyed by (row, dimension) rather than by row * D + dimension, which would
  // wrap at 2^32 (16.7M agents at D = 256) and repeat rows.
  const prototypes = topicPrototypes(seed, T, D);
  const c = table.columns;
  const args = {
    ...(c as Record<string, TypedArray>),
    cdfs,
    centres,
    prototypes,
    kAge: key('age_band'),
    kGender: key('gender'),
    kRegion: key('region'),
    kLeaning: key('leaning'),
    kChrono: key('chronotype'),
    kOp: key('opinion'),
    kAct: key('activity'),
    kTop: key('topic'),
    kInt: key('interest'),
    nAge: config.ageBand.weights.length,
    nGender: config.gender.weights.length,
    nRegion: config.region.weights.length,
    nLeaning: L,
    spread: config.opinionSpread,
    xm,
    shape: a,
    cap: config.activityCap,
    tierLow: xm * 2 ** (1 / a),
    tierHigh: xm * 5 ** (1 / a),
    topics: T,
    dim: D,
    perLeaning: Math.max(1, Math.floor(T / L)),
    tiers: ACTIVITY_TIERS.length,
  } as unknown as ArgsOf<(typeof K.synthesizeRows)['spec']>;
  const population: Population = { agents: table, prototypes, config, archetypes: config.ageBand.labels.length * L * ACTIVITY_TIERS.length };
  return { population, args };
}

/** Bytes per agent the synthetic population's columns take (for memory estimates). */
export function populationBytesPerAgent(interestDim = 16): number {
  return 7 + 2 + 4 + 4 + 4 * interestDim;
}
