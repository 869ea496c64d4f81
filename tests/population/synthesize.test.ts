import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { ACTIVITY_TIERS, CHRONOTYPES, synthesizePopulation, synthesizePopulationOn, type PopulationConfig } from '../../population/synthesize.ts';

const N = 200_000;

/** Counts of each code 0..k-1. */
function counts(codes: ArrayLike<number>, k: number): number[] {
  const c = new Array<number>(k).fill(0);
  for (let i = 0; i < codes.length; i++) c[codes[i]]++;
  return c;
}

/** Each category's share is within 4 binomial standard errors of its normalised weight. */
function expectMarginal(codes: ArrayLike<number>, weights: readonly number[], what: string): void {
  const total = weights.reduce((a, b) => a + b, 0);
  const c = counts(codes, weights.length);
  expect(c.reduce((a, b) => a + b, 0), `${what}: codes out of range`).toBe(codes.length);
  for (let k = 0; k < weights.length; k++) {
    const w = weights[k] / total;
    const share = c[k] / codes.length;
    if (w === 0) {
      expect(c[k], `${what}[${k}] has weight 0`).toBe(0);
      continue;
    }
    const se = Math.sqrt((w * (1 - w)) / codes.length);
    expect(Math.abs(share - w), `${what}[${k}]: share ${share} vs weight ${w} (se ${se})`).toBeLessThan(4 * se);
  }
}

function bytesOf(a: ArrayBufferView): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/** Issue paths of a ZodError thrown by `fn` (fails if it throws anything else or nothing). */
function issuePaths(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ZodError);
    return (e as ZodError).issues.map((i) => i.path.join('.'));
  }
  throw new Error('expected a validation error');
}

const custom: PopulationConfig = {
  ageBand: { labels: ['young', 'mid', 'old'], weights: [2, 5, 3] },
  gender: { labels: ['f', 'm', 'x'], weights: [0.7, 0, 0.3] },
  region: { labels: ['a', 'b'], weights: [1, 9] },
  leaning: { labels: ['l', 'c', 'r'], weights: [0.25, 0.5, 0.25] },
  leaningCentres: [-0.6, 0.1, 0.5],
  opinionSpread: 0.1,
  topics: 30,
  interestDim: 8,
};

const pop = synthesizePopulation(N, 1);
const popCustom = synthesizePopulation(N, 2, custom);

describe('synthesizePopulation marginals', () => {
  it('categorical columns match the default weights within 4 standard errors', () => {
    const c = pop.agents.columns;
    const cfg = pop.config;
    expectMarginal(c.age_band as Uint8Array, cfg.ageBand.weights, 'age_band');
    expectMarginal(c.gender as Uint8Array, cfg.gender.weights, 'gender');
    expectMarginal(c.region as Uint8Array, cfg.region.weights, 'region');
    expectMarginal(c.leaning as Uint8Array, cfg.leaning.weights, 'leaning');
    expectMarginal(c.chronotype as Uint8Array, [0.2, 0.35, 0.3, 0.15], 'chronotype');
    expect(pop.agents.schema.chronotype.dictionary).toEqual(CHRONOTYPES);
    expect(pop.agents.schema.gender.dictionary).toEqual(cfg.gender.labels);
  });

  it('custom, unnormalised and zero weights are honoured (another seed)', () => {
    const c = popCustom.agents.columns;
    expectMarginal(c.age_band as Uint8Array, [2, 5, 3], 'age_band');
    expectMarginal(c.gender as Uint8Array, [0.7, 0, 0.3], 'gender');
    expectMarginal(c.region as Uint8Array, [1, 9], 'region');
    expectMarginal(c.leaning as Uint8Array, [0.25, 0.5, 0.25], 'leaning');
    expect(popCustom.agents.schema.region.dictionary).toEqual(['a', 'b']);
  });
});

describe('synthesizePopulation determinism', () => {
  it('the same seed gives the same bytes; rows do not depend on the population size', () => {
    const a = synthesizePopulation(20_000, 7, custom);
    const b = synthesizePopulation(20_000, 7, custom);
    const small = synthesizePopulation(5_000, 7, custom);
    expect(Object.keys(a.agents.columns).sort()).toEqual(Object.keys(b.agents.columns).sort());
    for (const [name, col] of Object.entries(a.agents.columns)) {
      expect(bytesOf(col).equals(bytesOf(b.agents.columns[name])), name).toBe(true);
      // Every draw is keyed by row: the first 5,000 rows of a larger population are the same.
      const s = small.agents.columns[name];
      expect(bytesOf(s).equals(bytesOf(col.subarray(0, s.length))), `${name} prefix`).toBe(true);
    }
    expect(bytesOf(a.prototypes).equals(bytesOf(b.prototypes))).toBe(true);
  });

  it('rows filled on two threads (a run set-up) are the bytes of the inline fill', async () => {
    const exec = createExecutor(2);
    try {
      for (const cfg of [{}, custom]) {
        const a = synthesizePopulation(150_001, 9, cfg);
        const b = await synthesizePopulationOn(exec, 150_001, 9, cfg);
        for (const [name, col] of Object.entries(a.agents.columns)) expect(bytesOf(col).equals(bytesOf(b.agents.columns[name])), name).toBe(true);
      }
    } finally {
      await exec.close();
    }
  });

  it('different seeds give different populations', () => {
    const a = synthesizePopulation(20_000, 7);
    const b = synthesizePopulation(20_000, 8);
    const ca = a.agents.columns;
    const cb = b.agents.columns;
    for (const name of ['opinion', 'activity', 'interest']) {
      expect(bytesOf(ca[name]).equals(bytesOf(cb[name])), name).toBe(false);
    }
    expect(bytesOf(a.prototypes).equals(bytesOf(b.prototypes))).toBe(false);
    // Independent draws agree on the leaning with probability sum(w^2) = 0.235, not 1.
    const la = ca.leaning as Uint8Array;
    const lb = cb.leaning as Uint8Array;
    let same = 0;
    for (let i = 0; i < la.length; i++) if (la[i] === lb[i]) same++;
    const w = [0.15, 0.2, 0.3, 0.2, 0.15];
    const p = w.reduce((s, x) => s + x * x, 0);
    expect(Math.abs(same / la.length - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / la.length));
  });
});

describe('synthesizePopulation opinion', () => {
  for (const [label, p, centres] of [
    ['default centres', pop, [-1, -0.5, 0, 0.5, 1]],
    ['custom centres', popCustom, [-0.6, 0.1, 0.5]],
  ] as const) {
    it(`is centred on the leaning's centre (${label})`, () => {
      const Op = p.agents.columns.opinion as Float32Array;
      const Le = p.agents.columns.leaning as Uint8Array;
      const sd = p.config.opinionSpread;
      for (let l = 0; l < centres.length; l++) {
        const xs: number[] = [];
        for (let i = 0; i < Op.length; i++) if (Le[i] === l) xs.push(Op[i]);
        xs.sort((a, b) => a - b);
        const n = xs.length;
        expect(n).toBeGreaterThan(1000);
        expect(xs[0]).toBeGreaterThanOrEqual(-1);
        expect(xs[n - 1]).toBeLessThanOrEqual(1);
        // The median is unaffected by clipping at +-1: SE of a normal median is 1.2533 sd / sqrt(n).
        const median = xs[n >> 1];
        expect(Math.abs(median - centres[l]), `leaning ${l} median`).toBeLessThan((4 * 1.2533 * sd) / Math.sqrt(n) + 1e-6);
        // Away from the clip, the mean and the spread match too.
        if (Math.abs(centres[l]) + 5 * sd < 1) {
          const mean = xs.reduce((a, b) => a + b, 0) / n;
          const sdHat = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
          expect(Math.abs(mean - centres[l]), `leaning ${l} mean`).toBeLessThan((4 * sd) / Math.sqrt(n));
          expect(Math.abs(sdHat - sd), `leaning ${l} sd`).toBeLessThan((4 * sd) / Math.sqrt(2 * n));
        }
      }
    });
  }
});

describe('synthesizePopulation interests and topics', () => {
  it('interest rows and prototypes are unit vectors; topics follow leaning 60% of the time', () => {
    for (const p of [pop, popCustom]) {
      const D = p.config.interestDim;
      const T = p.config.topics;
      const L = p.config.leaning.labels.length;
      const I = p.agents.columns.interest as Float32Array;
      const Top = p.agents.columns.topic as Uint8Array;
      const Le = p.agents.columns.leaning as Uint8Array;
      expect(I.length).toBe(N * D);
      let worst = 0;
      for (let i = 0; i < N; i++) {
        let s = 0;
        for (let d = 0; d < D; d++) s += I[i * D + d] ** 2;
        worst = Math.max(worst, Math.abs(Math.sqrt(s) - 1));
      }
      expect(worst).toBeLessThan(1e-5);
      for (let t = 0; t < T; t++) {
        let s = 0;
        for (let d = 0; d < D; d++) s += p.prototypes[t * D + d] ** 2;
        expect(Math.abs(Math.sqrt(s) - 1)).toBeLessThan(1e-5);
      }
      // Primary topic: with prob 0.6 uniform within the leaning's band of floor(T/L) topics, else
      // uniform over all T; so P(topic in own band) = 0.6 + 0.4 * band / T.
      const band = Math.floor(T / L);
      let inBand = 0;
      let ownDot = 0;
      let otherDot = 0;
      let maxTopic = 0;
      for (let i = 0; i < N; i++) {
        const t = Top[i];
        maxTopic = Math.max(maxTopic, t);
        if (t >= Le[i] * band && t < (Le[i] + 1) * band) inBand++;
        const o = (t + 1) % T;
        for (let d = 0; d < D; d++) {
          ownDot += I[i * D + d] * p.prototypes[t * D + d];
          otherDot += I[i * D + d] * p.prototypes[o * D + d];
        }
      }
      expect(maxTopic).toBeLessThan(T);
      const q = 0.6 + (0.4 * band) / T;
      expect(Math.abs(inBand / N - q)).toBeLessThan(4 * Math.sqrt((q * (1 - q)) / N));
      // Each interest vector is built around its primary topic's prototype.
      expect(ownDot / N).toBeGreaterThan(0.6);
      expect(Math.abs(otherDot / N)).toBeLessThan(0.3);
    }
  });
});

describe('synthesizePopulation activity', () => {
  const heavy = synthesizePopulation(N, 3, { activityShape: 1.3, activityMean: 0.2 });
  for (const [label, p] of [
    ['defaults (shape 1.2, mean 0.065, cap 4)', pop],
    ['heavy tail (shape 1.3, mean 0.2)', heavy],
  ] as const) {
    it(`mean is activityMean within 4 standard errors; tiers split at the median and top 20% (${label})`, () => {
      const A = p.agents.columns.activity as Float32Array;
      const Tier = p.agents.columns.activity_tier as Uint8Array;
      let s = 0;
      let s2 = 0;
      let min = Infinity;
      let max = -Infinity;
      for (let i = 0; i < N; i++) {
        s += A[i];
        s2 += A[i] * A[i];
        min = Math.min(min, A[i]);
        max = Math.max(max, A[i]);
      }
      const mean = s / N;
      const se = Math.sqrt((s2 / N - mean * mean) / (N - 1));
      expect(min).toBeGreaterThan(0);
      expect(max).toBeLessThanOrEqual(p.config.activityCap);
      expect(Math.abs(mean - p.config.activityMean), `mean ${mean}, se ${se}`).toBeLessThan(4 * se);
      // Tier 0 below the Pareto median (share 1/2), tier 2 in the top 20%; tiers are ordered.
      const c = counts(Tier, ACTIVITY_TIERS.length);
      for (const [k, q] of [
        [0, 0.5],
        [2, 0.2],
      ] as const) {
        expect(Math.abs(c[k] / N - q), `tier ${k}`).toBeLessThan(4 * Math.sqrt((q * (1 - q)) / N));
      }
      const hi = [-Infinity, -Infinity, -Infinity];
      const lo = [Infinity, Infinity, Infinity];
      for (let i = 0; i < N; i++) {
        hi[Tier[i]] = Math.max(hi[Tier[i]], A[i]);
        lo[Tier[i]] = Math.min(lo[Tier[i]], A[i]);
      }
      expect(hi[0]).toBeLessThan(lo[1]);
      expect(hi[1]).toBeLessThan(lo[2]);
    });
  }
});

describe('synthesizePopulation archetypes', () => {
  it('archetype = (age * L + leaning) * 3 + tier', () => {
    for (const p of [pop, popCustom]) {
      const c = p.agents.columns;
      const L = p.config.leaning.labels.length;
      const A = p.config.ageBand.labels.length;
      expect(p.archetypes).toBe(A * L * 3);
      const Age = c.age_band as Uint8Array;
      const Le = c.leaning as Uint8Array;
      const Tier = c.activity_tier as Uint8Array;
      const Arch = c.archetype as Uint16Array;
      let bad = 0;
      const seen = new Set<number>();
      for (let i = 0; i < N; i++) {
        if (Arch[i] !== (Age[i] * L + Le[i]) * 3 + Tier[i]) bad++;
        seen.add(Arch[i]);
      }
      expect(bad).toBe(0);
      // All combinations occur at this size (the rarest default one has probability ~0.13*0.15*0.2).
      expect(seen.size).toBe(p.archetypes);
    }
  });
});

describe('synthesizePopulation config validation', () => {
  it('errors name the offending field', () => {
    expect(issuePaths(() => synthesizePopulation(10, 1, { gender: { labels: ['a', 'b'], weights: [1] } }))).toContain('gender.weights');
    expect(issuePaths(() => synthesizePopulation(10, 1, { region: { labels: ['a', 'b'], weights: [0, 0] } }))).toContain('region.weights');
    expect(issuePaths(() => synthesizePopulation(10, 1, { leaningCentres: [0, 1] }))).toContain('leaningCentres');
    expect(issuePaths(() => synthesizePopulation(10, 1, { activityShape: 1 }))).toContain('activityShape');
    expect(issuePaths(() => synthesizePopulation(10, 1, { activityMean: 4 }))).toContain('activityMean');
    expect(issuePaths(() => synthesizePopulation(10, 1, { activityMean: 2, activityCap: 1 }))).toContain('activityMean');
    expect(issuePaths(() => synthesizePopulation(10, 1, { ageBand: { labels: ['a'], weights: [-1] } }))).toContain('ageBand.weights.0');
    // The archetype id is a u16: 255 age bands x 255 leanings x 3 tiers would overflow it.
    const many = (k: number) => ({ labels: Array.from({ length: k }, (_, i) => `l${i}`), weights: new Array<number>(k).fill(1) });
    expect(issuePaths(() => synthesizePopulation(10, 1, { ageBand: many(255), leaning: many(255) }))).toContain('ageBand.labels');
    expect(synthesizePopulation(10, 1, { ageBand: many(100), leaning: many(200) }).archetypes).toBe(60_000);
  });
});
