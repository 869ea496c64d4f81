/**
 * The social step: the one place that says what happens in a step of the social platform, in order
 * (docs/social-platform.md, "The step"). Each phase declares the agent columns it reads and writes and the metrics
 * it reports; scenarios compose a step by calling `socialStep`, never by listing phases themselves.
 *
 *   intervene     the scenario's interventions due this step (label, remove, suspend, inject, ...)
 *   activate      who is online this hour (24-hour profile x activity x archetype factor)
 *   recommend     every active user's feed: candidate generation + ranking (recsys/, passed in)
 *   act           each active user reads its feed and samples actions into the event buffer
 *   archetypes-ask   (with an LLM) summarise what each archetype saw and did; send the calls
 *   apply         events in user order -> posts, counters, mutes, follow deltas, cascades
 *   notes         (with platform.notes.enabled) contributors rate and write Community Notes; scoring
 *   update        opinion dynamics from exposure (bounded confidence with backfire)
 *   archetypes    (with an LLM) collect the replies into the behaviour table for the next step
 *   maintain      expire posts past the window, fold follow deltas into the CSR, cascade metrics
 *   opinion       opinion mean, variance and polarization of the population
 *
 * The recommender and the archetype layer live above the platform (they read its state), so they
 * are handed in as phases rather than imported.
 */
import type { Phase } from '../sim-core/phase.ts';
import { opinionStats } from '../models/opinion.ts';
import { activatePhase, actPhase, maintainPhase, updatePhase } from './phases.ts';
import { applyPhase, type StoryOptions } from './applyPhase.ts';
import type { SocialState } from './state.ts';
import { intervenePhase } from './intervene.ts';
import { notesPhase } from './notes/notesPhase.ts';
import type { InterventionBase } from './interventions/time.ts';

export interface SocialStepParts {
  /** The feed builder, e.g. recsys's `recommendPhase(s)`. */
  recommend: Phase;
  /** With an LLM: the [ask, collect] pair of the archetype layer. */
  archetypes?: readonly [Phase, Phase];
  /** A news story posted by chosen accounts at a chosen step. */
  story?: StoryOptions;
  /** Scheduled interventions (interventions/registry.ts), as the scenario's schema parsed them. */
  interventions?: readonly InterventionBase[];
}

/** The ordered phases of one social step. */
export function socialStep(s: SocialState, parts: SocialStepParts): Phase[] {
  const [ask, collect] = parts.archetypes ?? [];
  return [
    intervenePhase(s, parts.interventions ?? []),
    activatePhase(s),
    parts.recommend,
    actPhase(s),
    ...(ask ? [ask] : []),
    applyPhase(s, parts.story),
    ...(s.cfg.notes.enabled ? [notesPhase(s)] : []),
    updatePhase(s),
    ...(collect ? [collect] : []),
    maintainPhase(s),
    opinionStats(),
  ];
}
