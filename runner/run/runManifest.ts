/**
 * The manifest a fresh run starts with: what was asked (scenario, parameters, sizes, the
 * invocation `--resume` replays), what runs it (threads, backend, versions) and where it stands.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { LlmSetup } from '../../llm-archetypes/setup.ts';
import { redactUrl } from '../../llm-archetypes/providers.ts';
import { PACKAGE_VERSION } from '../packageInfo.ts';
import type { Scenario } from './defineScenario.ts';
import type { Manifest } from './runDirectory.ts';
import type { RunOptions } from './runOptions.ts';

function versions(): Record<string, string> {
  const require = createRequire(import.meta.url);
  const read = (file: string) => (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  return {
    socsim: PACKAGE_VERSION,
    node: process.versions.node,
    // apache-arrow's exports map hides its package.json; find it next to the resolved entry.
    'apache-arrow': read(path.join(path.dirname(require.resolve('apache-arrow')), 'package.json')),
  };
}

/** The run's sizes as resolved from the options and the scenario's defaults. */
export interface RunShape {
  params: Record<string, unknown>;
  agents: number;
  steps: number;
  seed: number;
  threads: number;
  stepSeconds: number;
  snapshotEvery: number;
}

export function freshManifest(scenario: Scenario, o: RunOptions, shape: RunShape, opened: { backend: Manifest['backend']; adapter?: Manifest['adapter'] }, llm: LlmSetup | undefined, started: Date): Manifest {
  const { params, agents, steps, seed, threads, stepSeconds, snapshotEvery } = shape;
  return {
    format: 'socsim-run/1',
    scenario: { name: scenario.name, file: o.scenarioFile ?? '', description: scenario.description },
    parameters: params,
    seed,
    threads,
    backend: opened.backend,
    ...(opened.adapter ? { adapter: opened.adapter } : {}),
    agents,
    edges: 0,
    directed: true,
    step_seconds: stepSeconds,
    snapshot_every: snapshotEvery,
    steps_requested: steps,
    steps_completed: 0,
    status: 'running',
    versions: versions(),
    started_at: started.toISOString(),
    setup_seconds: 0,
    step_wall_ms: [],
    phase_wall_ms: {},
    // The provider that served the run (`replay` for a replay) and the model and samples it used
    // (a replay's come from its cache); `cache` is the cache replayed, or reused by `openai`.
    llm: llm
      ? { provider: llm.options.provider, model: llm.options.model, base_url: llm.options.baseURL ? redactUrl(llm.options.baseURL) : undefined, cache: llm.options.cacheFile, every: llm.options.every, budget: llm.options.budget, samples: llm.options.samples }
      : { provider: 'heuristic' },
    peak_rss_bytes: 0,
    files: { metrics: 'metrics.arrow', graph: 'graph.arrow', agents: [] },
    invocation: {
      scenarioFile: o.scenarioFile ? path.resolve(o.scenarioFile) : undefined,
      ...(o.plugins?.length && { plugins: o.plugins }),
      agents: o.agents,
      steps,
      params,
      graphFile: o.graphFile,
      graphRead: o.graphRead as Record<string, unknown> | undefined,
      snapshotEvery,
      stepSeconds,
      events: o.events ?? false,
      checkpointEvery: o.checkpointEvery,
      // The LLM options as given (never the key, which comes from the environment again, nor
      // credentials in the URL).
      llm: o.llm && { ...o.llm, ...(o.llm.baseURL && { baseURL: redactUrl(o.llm.baseURL) }) },
    },
  };
}
