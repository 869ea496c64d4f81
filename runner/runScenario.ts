/**
 * Runs a scenario end to end: validates parameters, builds the world, steps it, and writes the run
 * directory. Interruption (SIGINT/SIGTERM) stops at the next step boundary; every completed step is
 * already on disk (metrics are appended crash-safely after each step) and the manifest says
 * `"status": "interrupted"`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { z } from 'zod';
import { InputError } from '../sim-core/errors.ts';
import { createExecutor } from '../sim-core/exec.ts';
import { checkPhases, metricSchema, runStep, type World } from '../sim-core/phase.ts';
import { writeArrowFile } from '../sim-core/arrowFile.ts';
import { sharedArray } from '../sim-core/table.ts';
import type { Scenario } from './defineScenario.ts';
import {
  MetricsWriter,
  prepareRunDirectory,
  snapshotColumns,
  snapshotName,
  writeGraph,
  writeJsonAtomic,
  type Manifest,
} from './runDirectory.ts';

export interface RunOptions {
  agents?: number;
  steps?: number;
  seed?: number;
  threads?: number;
  graphFile?: string;
  out?: string;
  snapshotEvery?: number;
  stepSeconds?: number;
  /** Scenario parameter overrides (already parsed from `--set key=value`). */
  params?: Record<string, unknown>;
  scenarioFile?: string;
  /** Called after every step with its metrics and wall time. */
  onStep?(step: number, steps: number, wallMs: number, metrics: Map<string, number>): void;
  log?(line: string): void;
  /** Resolves to true once the run should stop at the next step boundary. */
  signal?: { stopRequested: boolean };
}

export interface RunResult {
  dir: string;
  manifest: Manifest;
}

function versions(): Record<string, string> {
  const require = createRequire(import.meta.url);
  const read = (file: string) => (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  return {
    socsim: read(fileURLToPath(new URL('../package.json', import.meta.url))),
    node: process.versions.node,
    // apache-arrow's exports map hides its package.json; find it next to the resolved entry.
    'apache-arrow': read(path.join(path.dirname(require.resolve('apache-arrow')), 'package.json')),
  };
}

/** Formats a zod error as one line naming the parameter and the fix. */
export function paramError(scenario: string, err: z.ZodError): InputError {
  const i = err.issues[0];
  const field = i.path.join('.') || '(parameters)';
  return new InputError(`scenario ${scenario}: parameter ${field}: ${i.message}; set it with --set ${field}=VALUE`);
}

export async function runScenario(scenario: Scenario, o: RunOptions = {}): Promise<RunResult> {
  const log = o.log ?? (() => {});
  const parsed = scenario.params.safeParse(o.params ?? {});
  if (!parsed.success) throw paramError(scenario.name, parsed.error);
  const params = parsed.data as Record<string, unknown>;
  if (o.graphFile && !scenario.acceptsGraph) {
    throw new InputError(`scenario ${scenario.name} does not take --graph; use one of the classic-model scenarios`);
  }
  const agents = o.agents ?? scenario.defaults.agents;
  const steps = o.steps ?? scenario.defaults.steps;
  const seed = o.seed ?? 1;
  const threads = o.threads ?? 1;
  const stepSeconds = o.stepSeconds ?? scenario.defaults.stepSeconds ?? 3600;
  const snapshotEvery = o.snapshotEvery ?? scenario.defaults.snapshotEvery ?? 0;
  const dir = path.resolve(o.out ?? path.join('runs', scenario.name));

  const exec = createExecutor(threads);
  const started = new Date();
  const t0 = performance.now();
  let peakRss = process.memoryUsage().rss;
  const manifest: Manifest = {
    format: 'socsim-run/1',
    scenario: { name: scenario.name, file: o.scenarioFile ?? '', description: scenario.description },
    parameters: params,
    seed,
    threads,
    backend: 'cpu',
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
    peak_rss_bytes: 0,
    files: { metrics: 'metrics.arrow', graph: 'graph.arrow', agents: [] },
  };
  let metrics: MetricsWriter | undefined;
  let prepared = false;
  const manifestFile = path.join(dir, 'manifest.json');
  const finish = (status: Manifest['status'], error?: string) => {
    metrics?.close();
    manifest.status = status;
    if (error) manifest.error = error;
    manifest.finished_at = new Date().toISOString();
    manifest.peak_rss_bytes = Math.max(peakRss, process.memoryUsage().rss);
    if (prepared) writeJsonAtomic(manifestFile, manifest);
  };

  try {
    const world0 = await scenario.setup({
      agents,
      seed,
      exec,
      params,
      graphFile: o.graphFile,
      agentsGiven: o.agents !== undefined,
      log,
    });
    const world: World = { agents: world0.agents, graph: world0.graph, exec, seed, stepSeconds };
    const phases = world0.phases;
    manifest.agents = world.agents.length;
    manifest.edges = world.graph.directed ? world.graph.edges : world.graph.edges / 2;
    manifest.directed = world.graph.directed;
    for (const p of phases) await p.init?.(world);
    checkPhases(world, phases);

    prepareRunDirectory(dir);
    prepared = true;
    writeJsonAtomic(manifestFile, manifest);
    writeGraph(path.join(dir, 'graph.arrow'), world.graph);
    const ids = sharedArray('i32', world.agents.length);
    for (let i = 0; i < ids.length; i++) ids[i] = i;
    const snapshot = (step: number) => {
      const name = snapshotName(step);
      writeArrowFile(path.join(dir, name), snapshotColumns(world.agents, ids), world.agents.length, { step: String(step) });
      manifest.files.agents.push(name);
    };
    snapshot(0);
    metrics = new MetricsWriter(path.join(dir, 'metrics.arrow'), metricSchema(phases));
    manifest.setup_seconds = (performance.now() - t0) / 1000;
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    writeJsonAtomic(manifestFile, manifest);
    log(`set up ${world.agents.length} agents, ${manifest.edges} edges in ${manifest.setup_seconds.toFixed(1)} s`);

    for (let step = 0; step < steps; step++) {
      // With one thread a step never leaves the microtask queue; yield so signals get handled.
      await new Promise((resolve) => setImmediate(resolve));
      if (o.signal?.stopRequested) {
        finish('interrupted');
        return { dir, manifest };
      }
      const ts = performance.now();
      const m = await runStep(world, phases, step);
      metrics.append(step, step * stepSeconds, m);
      // Snapshots carry the state at the end of step s under the name s + 1 (step-000000 is the start).
      const done = step + 1;
      if ((snapshotEvery > 0 && done % snapshotEvery === 0) || done === steps) snapshot(done);
      const wall = performance.now() - ts;
      manifest.step_wall_ms.push(Math.round(wall * 1000) / 1000);
      manifest.steps_completed = done;
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      writeJsonAtomic(manifestFile, manifest);
      o.onStep?.(step, steps, wall, m);
    }
    finish('completed');
    return { dir, manifest };
  } catch (err) {
    finish('failed', (err as Error).message);
    throw err;
  } finally {
    await exec.close();
  }
}
