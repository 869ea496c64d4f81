/**
 * The programmatic face of the CLI: `run` is `socsim run`, `experiment` is `socsim experiment`,
 * with the same checks and the same files, for studies that drive socsim from a script or a
 * notebook. Both resolve to where the results went.
 */
import path from 'node:path';
import type { BackendName } from '../sim-core/backend.ts';
import type { LlmOptions } from '../llm-archetypes/setup.ts';
import type { Scenario } from './run/defineScenario.ts';
import { loadScenario } from './run/loadScenario.ts';
import { loadPlugins } from './run/plugins.ts';
import { runScenario, type RunOptions } from './run/runScenario.ts';
import { mergeParams, paramError } from './run/strictParams.ts';
import type { Manifest } from './run/runDirectory.ts';
import type { EffectRow } from './experiment/experimentTables.ts';

export interface RunRequest {
  /** A bundled scenario's name, the path of a scenario file, or a scenario made with defineScenario. */
  scenario: string | Scenario;
  /** Plugin modules to load first (paths relative to the working directory), as `--plugin`: e.g. a study's ranker. */
  plugins?: string[];
  /** Parameter overrides, nested as the scenario declares them (`socsim describe` lists them); checked strictly. */
  params?: Record<string, unknown>;
  agents?: number;
  steps?: number;
  /** Default 1, as on the command line. */
  seed?: number;
  /** Kernel threads (default 1: the main thread only). */
  threads?: number;
  backend?: BackendName;
  /** The run directory (default runs/<scenario name>, under the working directory). */
  out?: string;
  /** Replace the run already in `out` (removes only the files a run writes). */
  force?: boolean;
  snapshotEvery?: number;
  stepSeconds?: number;
  /** Also write events.arrow, the full action trace. */
  events?: boolean;
  /** Load the follow graph from an edge list instead of generating it (scenarios that accept one). */
  graphFile?: string;
  /** LLM archetype provider options (default: the offline heuristic policy). */
  llm?: Partial<LlmOptions>;
  /** Called after every step. */
  onStep?: RunOptions['onStep'];
  /** Progress lines of the set-up (default: none). */
  log?(line: string): void;
}

export interface RunDone {
  /** The run directory (absolute). */
  dir: string;
  /** Its manifest.json, as written. */
  manifest: Manifest;
}

/** Runs a scenario to completion and writes its run directory, as `socsim run` does. */
export async function run(r: RunRequest): Promise<RunDone> {
  const plugins = await loadPlugins(r.plugins ?? []);
  const loaded = typeof r.scenario === 'string' ? await loadScenario(r.scenario) : undefined;
  const scenario = loaded?.scenario ?? (r.scenario as Scenario);
  const defaults = scenario.params.safeParse({});
  if (!defaults.success) throw paramError(scenario.name, defaults.error, scenario.params, {});
  const params = mergeParams(scenario.params, defaults.data, r.params ?? {}) as Record<string, unknown>;
  const checked = scenario.params.safeParse(params);
  if (!checked.success) throw paramError(scenario.name, checked.error, scenario.params, params);
  const { dir, manifest } = await runScenario(scenario, {
    agents: r.agents,
    steps: r.steps,
    seed: r.seed ?? 1,
    threads: r.threads ?? 1,
    backend: r.backend,
    graphFile: r.graphFile ? path.resolve(r.graphFile) : undefined,
    out: r.out,
    force: !!r.force,
    snapshotEvery: r.snapshotEvery,
    stepSeconds: r.stepSeconds,
    events: !!r.events,
    llm: r.llm,
    params,
    scenarioFile: loaded ? path.relative(process.cwd(), loaded.file) : undefined,
    plugins,
    onStep: r.onStep,
    log: r.log,
  });
  return { dir, manifest };
}

import type { ExperimentRequest } from './experiment/conduct.ts';
export type { ExperimentRequest };

export interface ExperimentDone {
  /** The experiment directory (absolute): experiment.json, summary.arrow, effects.arrow, series.arrow, runs/<id>/. */
  dir: string;
  planned: number;
  ran: string[];
  skipped: string[];
  /** The effects table (arm or group x outcome, with intervals); absent for a shard. */
  effects?: EffectRow[];
}

/**
 * Plans, runs and tabulates an experiment file, as `socsim experiment FILE` does (a re-run skips
 * completed runs). Throws when a run fails or the experiment is interrupted: no tables are written
 * then, and calling it again finishes the work.
 */
export async function experiment(file: string, o: ExperimentRequest = {}): Promise<ExperimentDone> {
  const { conductExperiment } = await import('./experiment/conduct.ts');
  const r = await conductExperiment(file, { ...o, quiet: o.quiet ?? true }, []);
  if (r.interrupted) throw new Error(`experiment ${file} was interrupted; call experiment() again to finish it (completed runs are kept)`);
  if (r.failures.length > 0) throw new Error(`experiment ${file}: ${r.failures.length} runs failed, no tables written: ${r.failures.map((f) => `${f.id}: ${f.message.split('\n')[0]}`).join('; ')}`);
  return { dir: r.dir, planned: r.planned, ran: r.ran, skipped: r.skipped, effects: r.effects };
}

