/**
 * The population's rows as a kernel (population/synthesize.ts): each row's attributes are drawn
 * from (key, row) alone, so rows can be filled in any order and on any number of threads with the
 * same bytes. The set-up of a run fills them on its executor; synthesizePopulation inline.
 */
import { kernel, kernelList } from '../sim-core/kernel.ts';

const TWO_POW_32 = 4294967296;
import { normal, rowDraw, rowNormal, rowSeed, uniform } from '../sim-core/rng.ts';

/** Categorical draw: the first class whose cumulative weight exceeds a uniform draw. */
function categorical(cdfs: Float64Array, from: number, k: number, key: number, row: number): number {
  const u = uniform(key, row);
  let c = 0;
  while (c < k - 1 && u >= cdfs[from + c]) c++;
  return c;
}

/**
 * Rows [start, end) of a population. `cdfs` holds the cumulative weights of age band, gender,
 * region, leaning and chronotype back to back (nAge, nGender, nRegion, nLeaning, 4 entries);
 * `centres` the opinion centre of each leaning; `prototypes` the T x D topic prototypes. Keys are
 * the per-attribute stream keys (synthesize.ts `key`).
 */
const synthesizeRows = kernel(
  {
    reads: { cdfs: 'f64', centres: 'f64', prototypes: 'f32' },
    writes: {
      age_band: 'u8',
      gender: 'u8',
      region: 'u8',
      leaning: 'u8',
      chronotype: 'u8',
      opinion: 'f32',
      activity: 'f32',
      activity_tier: 'u8',
      topic: 'u8',
      interest: 'f32',
      archetype: 'u16',
    },
    params: ['kAge', 'kGender', 'kRegion', 'kLeaning', 'kChrono', 'kOp', 'kAct', 'kTop', 'kInt', 'nAge', 'nGender', 'nRegion', 'nLeaning', 'spread', 'xm', 'shape', 'cap', 'tierLow', 'tierHigh', 'topics', 'dim', 'perLeaning', 'tiers'],
  },
  (a, start, end): void => {
    const { cdfs, centres, prototypes: P, nAge, nGender, nRegion, nLeaning: L, topics: T, dim: D, perLeaning } = a;
    const [oGender, oRegion, oLeaning, oChrono] = [nAge, nAge + nGender, nAge + nGender + nRegion, nAge + nGender + nRegion + L];
    const Interest = a.interest;
    for (let i = start; i < end; i++) {
      const age = categorical(cdfs, 0, nAge, a.kAge, i);
      a.age_band[i] = age;
      a.gender[i] = categorical(cdfs, oGender, nGender, a.kGender, i);
      a.region[i] = categorical(cdfs, oRegion, nRegion, a.kRegion, i);
      const leaning = categorical(cdfs, oLeaning, L, a.kLeaning, i);
      a.leaning[i] = leaning;
      a.chronotype[i] = categorical(cdfs, oChrono, 4, a.kChrono, i);

      const o = centres[leaning] + a.spread * normal(a.kOp, i);
      a.opinion[i] = o < -1 ? -1 : o > 1 ? 1 : o;

      // Activity: Pareto(shape, scale xm) capped at cap (synthesize.ts).
      const v = a.xm / Math.pow(1 - uniform(a.kAct, i), 1 / a.shape);
      const act = v > a.cap ? a.cap : v;
      a.activity[i] = act;
      const tier = act < a.tierLow ? 0 : act < a.tierHigh ? 1 : 2;
      a.activity_tier[i] = tier;

      // Interests: primary prototype biased by leaning, a weaker secondary one and noise, normalised.
      // Draws of one row from its seed (rng.ts rowSeed): the same values at half the hashing.
      const top = rowSeed(a.kTop, i);
      const u = rowDraw(top, 0) / TWO_POW_32;
      const t1 = u < 0.6 ? (leaning * perLeaning + Math.floor((rowDraw(top, 1) / TWO_POW_32) * perLeaning)) % T : Math.floor((rowDraw(top, 2) / TWO_POW_32) * T);
      const t2 = Math.floor((rowDraw(top, 3) / TWO_POW_32) * T);
      a.topic[i] = t1;
      let norm = 0;
      const base = i * D;
      const noise = rowSeed(a.kInt, i);
      for (let d = 0; d < D; d++) {
        const x = P[t1 * D + d] + 0.4 * P[t2 * D + d] + 0.15 * rowNormal(noise, d);
        Interest[base + d] = x;
        norm += x * x;
      }
      norm = Math.sqrt(norm) || 1;
      for (let d = 0; d < D; d++) Interest[base + d] /= norm;

      a.archetype[i] = (age * L + leaning) * a.tiers + tier;
    }
  },
);

export const kernels = kernelList(import.meta.url, { synthesizeRows });
