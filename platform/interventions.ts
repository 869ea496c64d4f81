/**
 * Interventions: changes to the platform at a chosen time, given as data in a scenario's
 * `interventions` list (validated strictly here; applied by the `intervene` phase, intervene.ts).
 *
 *   label      matching posts get a fact-check label: likes and reshares of labelled posts are
 *              scaled by platform.labels (the intervention may set those multipliers); reposts and
 *              quotes of a labelled post carry the label
 *   remove     matching posts leave every feed (and the candidate lists)
 *   downrank   matching posts' ranking scores are multiplied by `factor`
 *   suspend    matching accounts stop acting; their posts and reshares of them leave every feed
 *   inject     `count` accounts among the matching ones each post one original post with the given
 *              stance, topic, veracity and novelty, tagged `tag` (stories.arrow follows each one)
 *   setRanker  the feed ranker from then on
 *   setParam   a platform parameter (`platform.<key>`) or an archetype behaviour parameter
 *              (`behaviour.<param>`, set to `value` or multiplied by `scale`, for all archetypes or
 *              the listed ones) from then on
 *   assign     post-level random assignment: from then on (until `until`), each new post of the
 *              given kinds joins a treatment group with the group's share, and gets the group's
 *              artificial vote at creation (shown in its score; never counted in likes/dislikes);
 *              the group is recorded per post (posts.arrow `group`)
 *
 * Time: `hour` (simulated hours since the start; applied at the start of the first step that
 * begins at or after it) or `step`. Selectors are conjunctions of their fields; an empty selector
 * matches everything. Random choices (`fraction`, inject's authors and topics, assignment) come from
 * the counter RNG keyed by the intervention's position, so arms that share a seed and an
 * intervention draw the same posts and accounts.
 */
import { z } from 'zod';
import { POST_KINDS, VERACITY } from './posts.ts';
import { BEHAVIOUR_PARAMS } from './behaviour.ts';
import { InputError } from '../sim-core/errors.ts';

const range = z.tuple([z.number().min(-1).max(1), z.number().min(-1).max(1)]).refine(([lo, hi]) => lo <= hi, 'the range [lo, hi] needs lo <= hi');
const ids = z.array(z.number().int().min(0)).min(1);

/** Which accounts: all listed conditions hold. */
export const agentSelector = z.strictObject({
  /** Agent ids. */
  agents: ids.optional(),
  /** Archetype rows (the population's age band x leaning x activity tier index). */
  archetypes: ids.optional(),
  /** Among the k accounts with the most followers at that time (ties: lower id). */
  topFollowers: z.number().int().min(1).optional(),
  /** A random fraction of accounts. */
  fraction: z.number().gt(0).max(1).optional(),
  /** Opinion in [lo, hi]. */
  opinion: range.optional(),
});
export type AgentSelector = z.output<typeof agentSelector>;

/** Which posts (in memory, i.e. inside the recommendation window): all listed conditions hold. */
export const postSelector = z.strictObject({
  /** Posts of an injected story (the inject intervention's tag), its reposts and quotes included. */
  tag: z.string().min(1).optional(),
  veracity: z.enum(VERACITY).optional(),
  /** Topic cluster. */
  topic: z.number().int().min(0).max(254).optional(),
  kinds: z.array(z.enum(POST_KINDS)).min(1).optional(),
  /** Post stance in [lo, hi]. */
  stance: range.optional(),
  /** Author ids. */
  authors: ids.optional(),
  /** Authors' archetypes. */
  archetypes: ids.optional(),
  /** Authors among the k accounts with the most followers. */
  topFollowers: z.number().int().min(1).optional(),
  /** A random fraction of posts. */
  fraction: z.number().gt(0).max(1).optional(),
});
export type PostSelector = z.output<typeof postSelector>;

const time = {
  /** Simulated hours since the start of the run. */
  hour: z.number().min(0).optional(),
  step: z.number().int().min(0).optional(),
  /** Name in interventions.arrow (default: kind-index). */
  name: z.string().min(1).optional(),
};

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
] as const;

const settable = [...SETTABLE_PLATFORM.map((k) => `platform.${k}`), ...BEHAVIOUR_PARAMS.map((p) => `behaviour.${p}`)] as [string, ...string[]];

export const intervention = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('label'),
    ...time,
    posts: postSelector,
    /** Set platform.labels.reshare / .like from then on (default: keep the platform's). */
    reshare: z.number().min(0).optional(),
    like: z.number().min(0).optional(),
  }),
  z.strictObject({ kind: z.literal('remove'), ...time, posts: postSelector }),
  z.strictObject({ kind: z.literal('downrank'), ...time, posts: postSelector, factor: z.number().min(0).max(1) }),
  z.strictObject({ kind: z.literal('suspend'), ...time, agents: agentSelector }),
  z.strictObject({
    kind: z.literal('inject'),
    ...time,
    authors: agentSelector.default({}),
    /** Posts to inject: one each by `count` accounts drawn at random among the matching ones. */
    count: z.number().int().min(1),
    stance: z.number().min(-1).max(1),
    /** Topic cluster of the posts, or `random` (one drawn per post). */
    topic: z.union([z.number().int().min(0).max(254), z.literal('random')]).default('random'),
    veracity: z.enum(VERACITY).default('unrated'),
    /** Novelty in standard deviations above ordinary content (platform.noveltyWeight; organic posts 0). */
    novelty: z.number().min(-5).max(5).default(0),
    /** Name of the story (stories.arrow, selectors' `tag`). */
    tag: z.string().min(1),
    /**
     * Injects naming the same sample draw the same authors (given the same selector and count):
     * a matched design, e.g. each author posts one false and one true story. Topics stay drawn
     * per inject.
     */
    sample: z.string().min(1).optional(),
  }),
  // The name is checked against recsys/'s ranker registry by the scenario (a layer above).
  z.strictObject({ kind: z.literal('setRanker'), ...time, ranker: z.string().min(1).describe('a ranker name, as platform.ranker takes') }),
  z.strictObject({
    kind: z.literal('setParam'),
    ...time,
    param: z.enum(settable),
    value: z.union([z.number(), z.string()]).optional(),
    /** behaviour.* only: multiply instead of set. */
    scale: z.number().min(0).optional(),
    /** behaviour.* only: the archetypes to change (default all). */
    archetypes: ids.optional(),
  }),
  z.strictObject({
    kind: z.literal('assign'),
    ...time,
    /** End of assignment (exclusive), in hours or steps; default: the end of the run. */
    untilHour: z.number().min(0).optional(),
    untilStep: z.number().int().min(0).optional(),
    kinds: z.array(z.enum(POST_KINDS)).min(1).default(['original']),
    /** Group name -> share of new posts and the artificial vote they get (+1 up, -1 down, 0 none). */
    groups: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/, 'group names are letters, digits, _ and -'), z.strictObject({ share: z.number().gt(0).max(1), vote: z.union([z.literal(-1), z.literal(0), z.literal(1)]).default(0) })),
  }),
]);
export type Intervention = z.output<typeof intervention>;
export const INTERVENTION_KINDS = ['label', 'remove', 'downrank', 'suspend', 'inject', 'setRanker', 'setParam', 'assign'] as const;

export const interventionList = z
  .array(intervention)
  .default([])
  .superRefine((list, ctx) => {
    const tags = new Set<string>();
    list.forEach((iv, i) => {
      const at = (message: string, field?: string) => ctx.addIssue({ code: 'custom', path: [i, ...(field ? [field] : [])], message });
      if ((iv.hour === undefined) === (iv.step === undefined)) at(`give the time as exactly one of hour or step`, 'hour');
      if (iv.kind === 'inject') {
        if (tags.has(iv.tag)) at(`tag "${iv.tag}" is used by an earlier inject; give each injected story its own tag`, 'tag');
        tags.add(iv.tag);
      }
      if (iv.kind === 'setParam') {
        const beh = iv.param.startsWith('behaviour.');
        if (beh && (iv.value === undefined) === (iv.scale === undefined)) at('behaviour parameters take exactly one of value or scale', 'value');
        if (!beh && (iv.value === undefined || iv.scale !== undefined || iv.archetypes)) at('platform parameters take value only (no scale or archetypes)', 'value');
        if (beh && typeof iv.value === 'string') at('behaviour parameters take a number', 'value');
      }
      if (iv.kind === 'assign') {
        const total = Object.values(iv.groups).reduce((t, g) => t + g.share, 0);
        if (Object.keys(iv.groups).length === 0) at('give at least one group', 'groups');
        if (total > 1 + 1e-9) at(`group shares add up to ${total}; they must add up to at most 1`, 'groups');
        if (iv.untilHour !== undefined && iv.untilStep !== undefined) at('give at most one of untilHour or untilStep', 'untilHour');
      }
    });
    for (const [i, iv] of list.entries()) {
      if ((iv.kind === 'label' || iv.kind === 'remove' || iv.kind === 'downrank') && iv.posts.tag !== undefined && !tags.has(iv.posts.tag)) {
        ctx.addIssue({ code: 'custom', path: [i, 'posts', 'tag'], message: `no inject has tag "${iv.posts.tag}" (tags: ${[...tags].join(', ') || 'none'})` });
      }
    }
  });

/** The step at which an intervention applies: `step`, or the first step starting at or after `hour`. */
export function stepOf(t: { hour?: number; step?: number }, stepSeconds: number): number {
  if (t.step !== undefined) return t.step;
  return Math.max(0, Math.ceil(((t.hour ?? 0) * 3600) / stepSeconds - 1e-9));
}

/**
 * Throws an InputError for the first intervention that would never apply because it comes after
 * the run's last step (`steps` steps of `stepSeconds`): it would be a silent no-op.
 */
export function checkInterventionTimes(list: readonly Intervention[], steps: number, stepSeconds: number): void {
  list.forEach((iv, i) => {
    const at = stepOf(iv, stepSeconds);
    if (at < steps) return;
    const when = iv.step !== undefined ? `step ${iv.step}` : `hour ${iv.hour}`;
    throw new InputError(`interventions[${i}] (${iv.kind} at ${when}) comes after the run's last step (${steps} steps of ${stepSeconds / 3600} h, the last at step ${steps - 1}), so it would never apply; move it earlier or run longer (--steps, --hours)`);
  });
}

/** Every assign group name, in order of appearance; '' (index 0) is "no treatment". */
export function groupNames(list: readonly Intervention[]): string[] {
  const out = [''];
  for (const iv of list) if (iv.kind === 'assign') for (const g of Object.keys(iv.groups)) if (!out.includes(g)) out.push(g);
  return out;
}

/** Every inject tag, in order; '' (index 0) is "no tag". */
export function tagNames(list: readonly Intervention[]): string[] {
  return ['', ...list.flatMap((iv) => (iv.kind === 'inject' ? [iv.tag] : []))];
}
