/**
 * socsim's public API: what a study's scenario and experiment files, and scripts that drive
 * socsim, import from 'socsim'. Everything not exported here is internal and may change between
 * versions; everything here follows semantic versioning.
 */

// Experiments: arms x seeds of one scenario, and the outcomes measured on every run.
export { defineExperiment, type Experiment, type ExperimentInput } from './runner/experiment/defineExperiment.ts';
export { custom, metric, rows, type MetricOutcomes, type Outcome, type OutcomeValue, type Row, type RowsSpec, type RunView } from './runner/experiment/outcomes.ts';
export { diffusionPatterns, readPostColumns, type DiffusionPatterns, type PatternOptions, type PostColumns } from './runner/analysis/diffusionPatterns.ts';

// Scenarios: parameters, default size, and the set-up that builds agents, graph and phases.
export { defineScenario, type Scenario, type ScenarioWorld, type SetupContext } from './runner/run/defineScenario.ts';
export { classicScenario } from './scenarios/classic.ts';
export { independentCascade, linearThreshold, sir, type SeedOptions } from './models/cascade.ts';
export { deffuant, degroot, hegselmannKrause, opinionStats, voter } from './models/opinion.ts';
export { seedSpec, type SeedStrategy } from './models/seeds.ts';
export { buildSociety, graphSpec, type GraphSpec } from './population/buildSociety.ts';
export type { MetricType, Phase, StepContext, World } from './sim-core/phase.ts';
/** Kernels: a study's own heavy loops, run by the worker pool over the shared columns. */
export { kernel, kernelList, type Kernel, type KernelSpec } from './sim-core/kernel.ts';
/** The zod that socsim's schemas are made with: scenario parameters must use this one. */
export { z } from 'zod';

// The social platform's configuration and interventions (scenario `social-feed`).
export type { SocialConfig } from './platform/state.ts';
export { registerInterventionKind, type Intervention } from './platform/interventions/registry.ts';
export { agentSelector, postSelector, type AgentSelector, type PostSelector } from './platform/interventions/selectors.ts';
/**
 * A study's own intervention kind, in a plugin module whose default export is
 * defineIntervention({...}); a run loads it with --plugin FILE (or a scenario's or experiment's
 * `plugins`), a script may register it with registerInterventionKind.
 */
export { defineIntervention, type ApplyContext, type CheckContext, type InterventionKind, type InterventionSpec, type RunContext, type Touched } from './platform/interventions/kind.ts';
/**
 * A study's own ranker, in a plugin module whose default export is defineRanker({...}); a run
 * loads it with --plugin FILE (or a scenario's or experiment's `plugins`).
 */
export { defineRanker, type PostFeatures, type RankerDefinition, type RankerPlugin, type ScoreFunction, type UserFeatures } from './recsys/defineRanker.ts';

// Running from code.
export { experiment, run, type ExperimentDone, type ExperimentRequest, type RunDone, type RunRequest } from './runner/api.ts';
export type { Manifest } from './runner/run/runDirectory.ts';
export type { EffectRow } from './runner/experiment/experimentTables.ts';
export type { BackendName } from './sim-core/backend.ts';
export { InputError } from './sim-core/errors.ts';
