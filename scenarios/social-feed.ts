/**
 * Social feed: a synthetic population on a homophilous follow graph, on a platform with posts,
 * the OASIS action space, an activity clock, an x-interest feed and opinion dynamics from
 * exposure; a news story is posted by a few hub accounts at the first step. The default demo.
 */
import { z } from 'zod';
import { heuristicBehaviour } from '../platform/behaviour.ts';
import { buildSociety, graphSpec } from '../population/buildSociety.ts';
import { socialStep } from '../platform/socialStep.ts';
import { createSocialState, socialConfig } from '../platform/state.ts';
import { interventionList } from '../platform/interventions/registry.ts';
import { checkInterventionTimes } from '../platform/interventions/time.ts';
import { ACTIVITY_TIERS, populationConfig } from '../population/synthesize.ts';
import { recommendPhase } from '../recsys/recommend.ts';
import { checkRankerNames, rankerName } from '../recsys/rankerRegistry.ts';
import { defineScenario } from '../runner/run/defineScenario.ts';
import { archetypesPhases } from '../llm-archetypes/decide.ts';
import type { Phase } from '../sim-core/phase.ts';
import { InputError } from '../sim-core/errors.ts';
import { archetypePersonas } from '../llm-archetypes/personas.ts';

export default defineScenario({
  name: 'social-feed',
  description: 'Posts, feeds and opinion dynamics on a homophilous follow graph, with a news story seeded at hubs',
  params: z
    .strictObject({
    population: populationConfig.default(populationConfig.parse({})).describe("the synthetic population: attribute mixes, opinions, interests and the activity clock's levels"),
    graph: graphSpec.default({ kind: 'homophilous', meanFollowing: 45, homophily: 0.7, preferential: 0.8, reciprocity: 0.1 }),
    // The ranker's name is checked against recsys/'s registry, which plugins extend.
    platform: socialConfig.safeExtend({ ranker: rankerName.describe(socialConfig.shape.ranker.description ?? '') }).default(socialConfig.parse({})).describe('the platform: feeds and their ranker, candidates, attention, labels, votes'),
    story: z
      .strictObject({
        seeds: z.enum(['hubs', 'leaves', 'random']).default('hubs').describe('who posts it: hubs (most followers), leaves (fewest, at least one) or random accounts'),
        count: z.number().int().min(0).default(5).describe('accounts that post the story (0: no story)'),
        step: z.number().int().min(0).default(0).describe('the step in which it is posted, counted from 0 (as in posts.arrow)'),
        stance: z.number().min(-1).max(1).default(0.8).describe("the story's opinion stance in [-1, 1]"),
        topic: z.number().int().min(0).max(254).default(0).describe('its topic prototype (below population.topics)'),
      })
      .default({ seeds: 'hubs', count: 5, step: 0, stance: 0.8, topic: 0 })
      .describe('a news story posted by a few accounts at one step'),
    interventions: interventionList.describe('scheduled changes to the platform, each a kind (listed below) with a time (hour or step) and what it acts on'),
  })
    .superRefine((p, ctx) => checkRankerNames(p.interventions, ctx, ['interventions'])),
  defaults: { agents: 200_000, steps: 24, snapshotEvery: 12 },
  async setup(ctx) {
    const p = ctx.params;
    // Scheduled events past the end would silently never happen: refuse them before any work.
    // (A run of 0 steps only builds the world.)
    if (ctx.steps > 0) checkInterventionTimes(p.interventions, ctx.steps, ctx.stepSeconds);
    if (ctx.steps > 0 && p.story.count > 0 && p.story.step >= ctx.steps) throw new InputError(`story.step ${p.story.step} comes after the run's last step (${ctx.steps - 1}), so the story would never be posted; lower it, set story.count=0, or run longer (--steps)`);
    const society = await buildSociety(ctx.exec, {
      agents: ctx.agents,
      seed: ctx.seed,
      graph: p.graph,
      population: p.population,
      phaseBytesPerAgent: 100,
      // Nothing in a social step reads the followers' rows: follower counts are the platform's state.
      lazyFollowers: true,
      following: ctx.following,
      log: ctx.log,
    });
    const L = society.agents.schema.leaning.dictionary!.length;
    const behaviour = heuristicBehaviour({
      ageBands: society.agents.schema.age_band.dictionary!.length,
      leaningCentres: Array.from({ length: L }, (_, i) => (L === 1 ? 0 : -1 + (2 * i) / (L - 1))),
      tiers: ACTIVITY_TIERS.length,
      scale: p.platform.behaviour,
    });
    const topics = society.prototypes.length / (society.agents.schema.interest.width ?? 1);
    if (p.story.topic >= topics) throw new InputError(`story.topic must be below ${topics}`);
    // Never clamped: more story seeds than accounts is a mistake to name before anything runs.
    if (p.story.count > society.agents.length) throw new InputError(`story.count ${p.story.count} is more than the ${society.agents.length} accounts; lower it (--set story.count=N) or add agents`);
    const world = { agents: society.agents, graph: society.graph, exec: ctx.exec, seed: ctx.seed, stepSeconds: 3600 };
    const s = createSocialState(world, p.platform, behaviour, society.prototypes, topics);
    let archetypes: readonly [Phase, Phase] | undefined;
    if (ctx.llm) {
      const o = ctx.llm.options;
      archetypes = archetypesPhases(s, {
        client: ctx.llm.client,
        every: o.every,
        budget: o.budget,
        samples: o.samples,
        temperature: o.temperature,
        maxTokens: o.maxTokens,
        concurrency: o.concurrency,
        retries: o.retries,
        personas: archetypePersonas(society.agents, ctx.llm.personas),
        cost: ctx.llm.cost,
        news: (step: number) => (step >= p.story.step && p.story.count > 0 ? [`A news story with stance ${p.story.stance} was posted by ${p.story.count} accounts at step ${p.story.step}.`] : []),
      });
    }
    const phases = socialStep(s, { recommend: recommendPhase(s), archetypes, story: p.story, interventions: p.interventions });
    return { agents: society.agents, graph: society.graph, phases };
  },
});
