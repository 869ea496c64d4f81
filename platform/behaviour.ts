/**
 * Per-archetype behaviour parameters: one row per archetype, one column per parameter. The act and
 * update phases read only this table, so whoever fills it (the offline heuristic policy below now,
 * LLM archetypes later) changes behaviour without touching the phases.
 */
import { sharedArray } from '../sim-core/table.ts';
import { StateTable } from '../sim-core/stateTable.ts';

/** Parameter columns, in table order. Probabilities are per session (post, follow) or per feed item. */
export const BEHAVIOUR_PARAMS = [
  'post', // create an original post, per session
  'like', // per item read
  'dislike',
  'repost',
  'quote',
  'comment',
  'report',
  'mute', // mute the item's author, per item
  'unfollow', // unfollow a followed author, per item
  'follow', // follow someone from the who-to-follow candidates, per session
  'eps', // confidence bound of the opinion update
  'mu', // rate of moving toward content within eps
  'backfire', // rate of moving away from content beyond the backfire distance
  'activity', // multiplier on the activity clock
] as const;
export type BehaviourParam = (typeof BEHAVIOUR_PARAMS)[number];
export const P = Object.fromEntries(BEHAVIOUR_PARAMS.map((p, i) => [p, i])) as Record<BehaviourParam, number>;
export const NPARAMS = BEHAVIOUR_PARAMS.length;

/**
 * The behaviour table (a state table: sim-core/stateTable.ts). Its values are uploaded to a device
 * at every kernel call (a host table: sim-core/gpu/gpuKernels.ts), so host writes need no
 * announcement.
 */
export class BehaviourTable extends StateTable {
  /** archetypes x NPARAMS, row-major, on a SharedArrayBuffer. */
  values: Float32Array;
  /** setParam changes of behaviour parameters, applied again when an LLM round rewrites a row. */
  overrides: BehaviourOverride[] = [];
  /** The median activity level: the reference of the platform's postExponent (set-up sets it). */
  activityRef = 1;

  readonly archetypes: number;

  constructor(archetypes: number) {
    super();
    this.archetypes = archetypes;
    this.values = sharedArray('f32', archetypes * NPARAMS);
  }
}

export function createBehaviourTable(archetypes: number): BehaviourTable {
  return new BehaviourTable(archetypes);
}

export function getParam(t: BehaviourTable, archetype: number, p: BehaviourParam): number {
  return t.values[archetype * NPARAMS + P[p]];
}

export function setParam(t: BehaviourTable, archetype: number, p: BehaviourParam, v: number): void {
  t.values[archetype * NPARAMS + P[p]] = v;
}

/**
 * A persistent change of behaviour parameters (the setParam intervention on `behaviour.*`), kept
 * in the platform state so that it is applied again whenever something rewrites a row of the table
 * (an LLM archetype round).
 */
export interface BehaviourOverride {
  param: number;
  /** Archetype rows, or null for all. */
  archetypes: number[] | null;
  value?: number;
  scale?: number;
}

/** Applies one override to archetype row k: sets the value, or multiplies by the scale. */
export function applyOverride(t: BehaviourTable, o: BehaviourOverride, k: number): void {
  const i = k * NPARAMS + o.param;
  t.values[i] = o.value !== undefined ? o.value : t.values[i] * o.scale!;
}

/** Applies the table's overrides that cover archetype row k, in order (after something rewrote the row). */
export function reapplyOverrides(t: BehaviourTable, k: number): void {
  for (const o of t.overrides) if (o.archetypes === null || o.archetypes.includes(k)) applyOverride(t, o, k);
}

/**
 * The offline heuristic policy (not an LLM): plausible rates that depend on the archetype's
 * attributes. More active tiers post more; users with more extreme leanings react more (dislike,
 * repost, report, mute, unfollow) and have narrower confidence bounds and some backfire; older
 * users move less. Likes are a few percent of impressions; per session a user posts with
 * probability 4-12%.
 *
 * Reshare rates are the one figure calibrated to data: on Twitter 11.1% of tweets were retweets
 * (Suh, Hong, Pirolli and Chi, "Want to be Retweeted?", IEEE SocialCom 2010, 74M tweets), about
 * 0.125 retweets per other tweet. The rates below (0.04-0.12% reposts and 0.01-0.04% quotes per
 * impression, before the act phase's factors) give ~0.15 reposts and ~0.2 reshares per original
 * post on the default platform at 100k agents (`socsim validate`); everything else the validation
 * table shows (never-reshared share, tail, depth, virality) follows from the mechanisms, not from
 * tuning. The previous rates, ten times higher, gave ~1.8 reshares per original post.
 */
export function heuristicBehaviour(o: {
  ageBands: number;
  leaningCentres: readonly number[];
  tiers: number;
  scale?: Partial<Record<BehaviourParam, number>>;
}): BehaviourTable {
  const L = o.leaningCentres.length;
  const K = o.ageBands * L * o.tiers;
  const t = createBehaviourTable(K);
  for (let a = 0; a < o.ageBands; a++) {
    for (let l = 0; l < L; l++) {
      for (let tier = 0; tier < o.tiers; tier++) {
        const k = (a * L + l) * o.tiers + tier;
        const e = Math.min(1, Math.abs(o.leaningCentres[l]));
        const age = o.ageBands > 1 ? a / (o.ageBands - 1) : 0;
        const tierF = o.tiers > 1 ? tier / (o.tiers - 1) : 0;
        const v: Record<BehaviourParam, number> = {
          post: 0.15,
          like: 0.03,
          dislike: 0.005 + 0.01 * e,
          repost: 0.0034 + 0.0068 * e,
          quote: 0.00085 + 0.00255 * e,
          comment: 0.003 + 0.006 * tierF,
          report: 0.0005 + 0.002 * e,
          mute: 0.0005 + 0.002 * e,
          unfollow: 0.001 + 0.003 * e,
          follow: 0.05 + 0.1 * tierF,
          eps: 0.5 - 0.25 * e,
          mu: 0.08 - 0.04 * age,
          backfire: 0.03 * e,
          activity: 1,
        };
        for (const p of BEHAVIOUR_PARAMS) setParam(t, k, p, v[p] * (o.scale?.[p] ?? 1));
      }
    }
  }
  return t;
}
