/**
 * `setParam`: a platform parameter or an archetype behaviour parameter from then on.
 */
import { z } from 'zod';
import { applyOverride, BEHAVIOUR_PARAMS, P, type BehaviourOverride, type BehaviourParam } from '../behaviour.ts';
import { socialConfig } from '../state.ts';
import { defineIntervention } from './kind.ts';
import { ids } from './selectors.ts';

/** Platform parameters an intervention may change during a run (the rest size buffers at set-up). */
export const SETTABLE_PLATFORM = [
  'inNetwork',
  'ranker',
  'recency',
  'tauHours',
  'perAuthor',
  'maxScan',
  'backfireDistance',
  'rebuildEvery',
  'reportThreshold',
  'noveltyWeight',
  'labels.like',
  'labels.reshare',
  'labels.report',
  'votes.herding',
  'votes.correction',
  'votes.scale',
  'counts',
  'outPartisan',
  'dominant.share',
  'dominant.factor',
] as const;

const settable = [...SETTABLE_PLATFORM.map((k) => `platform.${k}`), ...BEHAVIOUR_PARAMS.map((p) => `behaviour.${p}`)] as [string, ...string[]];

function setPath(obj: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let at = obj;
  for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
  at[keys[keys.length - 1]] = value;
}

export default defineIntervention({
  name: 'setParam',
  doc:
    'A platform parameter (`platform.<key>`, one of SETTABLE_PLATFORM) set to `value`, or an archetype behaviour parameter (`behaviour.<param>`) ' +
    'set to `value` or multiplied by `scale`, for all archetypes or the listed ones, from then on; behaviour changes hold even when LLM archetypes rewrite the row. ' +
    'Its row counts the accounts whose archetype changed.',
  fields: {
    param: z.enum(settable).describe('What it changes: platform.<key> or behaviour.<param>.'),
    value: z.union([z.number(), z.string()]).optional().describe('The new value (a number, or a name such as a ranker\'s).'),
    scale: z.number().min(0).optional().describe('behaviour.* only: multiply instead of set.'),
    archetypes: ids.optional().describe('behaviour.* only: the archetypes to change (default all).'),
  },
  rankerNamed: (iv) => (iv.param === 'platform.ranker' ? ['value', String(iv.value)] : undefined),
  check(iv, issue) {
    const beh = iv.param.startsWith('behaviour.');
    if (beh && (iv.value === undefined) === (iv.scale === undefined)) issue('behaviour parameters take exactly one of value or scale', 'value');
    if (!beh && (iv.value === undefined || iv.scale !== undefined || iv.archetypes)) issue('platform parameters take value only (no scale or archetypes)', 'value');
    if (beh && typeof iv.value === 'string') issue('behaviour parameters take a number', 'value');
  },
  checkWorld(iv, ctx) {
    const K = ctx.social.behaviour.archetypes;
    const big = iv.archetypes?.find((k) => k >= K);
    if (big !== undefined) ctx.fail('archetypes', `archetype ${big} is not below the number of archetypes (${K})`);
    if (iv.param.startsWith('platform.')) {
      const cfg = structuredClone(ctx.social.cfg) as unknown as Record<string, unknown>;
      setPath(cfg, iv.param.slice('platform.'.length), iv.value);
      const r = socialConfig.safeParse(cfg);
      if (!r.success) ctx.fail('value', `${iv.param} = ${JSON.stringify(iv.value)}: ${r.error.issues[0].message}`);
    }
  },
  apply(iv, ctx) {
    const s = ctx.social;
    if (iv.param.startsWith('platform.')) {
      setPath(s.cfg as unknown as Record<string, unknown>, iv.param.slice('platform.'.length), iv.value);
      return { posts: 0, agents: 0 };
    }
    const o: BehaviourOverride = { param: P[iv.param.slice('behaviour.'.length) as BehaviourParam], archetypes: iv.archetypes ?? null, value: iv.value as number | undefined, scale: iv.scale };
    s.behaviour.overrides.push(o);
    for (let k = 0; k < s.behaviour.archetypes; k++) if (o.archetypes === null || o.archetypes.includes(k)) applyOverride(s.behaviour, o, k);
    const A = ctx.world.agents.columns.archetype;
    let agents = 0;
    for (let v = 0; v < ctx.world.agents.length; v++) if (o.archetypes === null || o.archetypes.includes(A[v])) agents++;
    return { posts: 0, agents };
  },
});
