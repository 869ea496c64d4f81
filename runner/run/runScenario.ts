/**
 * Runs a scenario end to end: validates parameters, builds the world, steps it, and writes the run
 * directory. Interruption (SIGINT/SIGTERM) stops at the next step boundary; every completed step is
 * already on disk (metrics are appended crash-safely after each step, a step's row once the next
 * step's kernels are queued) and the manifest says `"status": "interrupted"`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { z } from 'zod';
import { InputError } from '../../sim-core/errors.ts';
import { releaseArrays, type Executor } from '../../sim-core/exec.ts';
import { backendOf, kernelCalls, kernelTimes, kernelTransfers, openBackend, type BackendName } from '../../sim-core/backend.ts';
import { checkPhases, INITIAL_STEP, measureInitial, metricSchema, queueStep, type RunOutputs, type World } from '../../sim-core/phase.ts';
import { ArrowFileAppender, writeArrowFile, type AppenderState, type ColumnData } from '../../sim-core/io/arrowFile.ts';
import { writeCheckpoint } from '../../sim-core/checkpoint.ts';
import { pinRows, withLazyFollowers, type Csr, type Graph } from '../../sim-core/csr.ts';
import type { Phase } from '../../sim-core/phase.ts';
import { sharedArray } from '../../sim-core/table.ts';
import type { Scenario, SetupContext } from './defineScenario.ts';
import { keysAt, unknownKeyMessage } from './strictParams.ts';
import { CHECKPOINT_FILE, CheckpointPolicy, PREVIOUS_CHECKPOINT_FILE, resumableRun, resumeCheckpoint } from './resume.ts';
import { llmOptions, setupLlm, type LlmOptions } from '../../llm-archetypes/setup.ts';
import { redactUrl } from '../../llm-archetypes/providers.ts';
import { PACKAGE_VERSION } from '../packageInfo.ts';
import { describeHolder, lockDirectory, type DirLock } from './dirLock.ts';
import { checkCanCreate } from '../../sim-core/io/makeDirectory.ts';
import {
  checkRunDirectory,
  fileSizes,
  MetricsWriter,
  prepareRunDirectory,
  snapshotColumns,
  snapshotName,
  peakResidentBytes,
  writeEdges,
  writeGraph,
  writeGraphLater,
  writeJsonAtomic,
  type Manifest,
} from './runDirectory.ts';

/** What a checkpoint records besides the state itself: the step and where every file stood. */
interface CheckpointMeta {
  step: number;
  appenders: Record<string, AppenderState>;
  metrics: AppenderState;
  /** Whether follows had changed the graph (graph-end.arrow is then written at the end). */
  graphChanged: boolean;
  /**
   * Written since phases keep in their state what they derive from the graph at init (the
   * story's seeds): a resumed set-up may then take the checkpoint's graph instead of generating
   * set-up's (SetupContext.following). Absent in older checkpoints, which resume as before.
   */
  graphForSetup?: boolean;
  /** Bytes of llm-cache.jsonl at the checkpoint. */
  llmCacheBytes?: number;
  manifest: Pick<Manifest, 'steps_completed' | 'step_wall_ms' | 'phase_wall_ms'> & { agents: string[] };
}

/**
 * Everything a run carries between steps, as a checkpoint saves it: agent columns, the graph, each
 * phase's state. `graph` is null while the run's graph is still the one set-up built: a resumed run
 * builds that graph again (the same set-up), so a checkpoint need not hold it (at 10M agents, 4 GB
 * of the file). A changed graph is saved as its following rows: the followers direction is their
 * transpose, built again when something reads it (withLazyFollowers).
 */
function stateRoot(agents: World['agents'], graph: Graph | null, phases: readonly Phase[], llm: object | undefined): object {
  return { agents: agents.columns, graph: graph && { following: graph.following }, phases: Object.fromEntries(phases.map((p, i) => [`${i}:${p.name}`, p.state ?? null])), llm: llm ?? null };
}

export interface RunOptions {
  agents?: number;
  steps?: number;
  seed?: number;
  threads?: number;
  graphFile?: string;
  /** How graphFile is read (`--ids`, `--directed`/`--undirected`); unset: the scenario's default. */
  graphRead?: SetupContext<unknown>['graphRead'];
  out?: string;
  /** Replace an earlier run in `out` (only the files a run writes are removed). */
  force?: boolean;
  snapshotEvery?: number;
  stepSeconds?: number;
  /** LLM provider options (`--llm*`); default heuristic (no LLM). */
  llm?: Partial<LlmOptions>;
  /** Write the full action trace (events.arrow). */
  events?: boolean;
  /** Scenario parameter overrides (already parsed from `--set key=value`). */
  params?: Record<string, unknown>;
  scenarioFile?: string;
  /** Called after every step with its metrics and wall time. */
  onStep?(step: number, steps: number, wallMs: number, metrics: Map<string, number>): void;
  /**
   * Called once the run's files can be read: the first step's metrics are in and graph.arrow is
   * written (it is written while the first steps run). Not called when no step completes or when
   * graph.arrow cannot be written.
   */
  onReady?(): void;
  log?(line: string): void;
  /**
   * Lines the user must see even when `log` is off (a resume that passes over a damaged checkpoint
   * for the previous one); default `log`.
   */
  warn?(line: string): void;
  /** Resolves to true once the run should stop at the next step boundary. */
  signal?: { stopRequested: boolean };
  /** Run kernels on this executor instead of creating one for `threads` (the caller closes it). */
  executor?: Executor;
  /** The backend that steps the agents (default cpu; sim-core/backend.ts). Not with `executor`. */
  backend?: BackendName;
  /** Checkpoint every this many steps (0 = never); unset: automatic (runner/run/resume.ts). */
  checkpointEvery?: number;
  /**
   * Continue the interrupted run in `out` from its last checkpoint. The other options must be
   * the recorded run's (the CLI reads them from its manifest's `invocation`); `threads` may differ.
   */
  resume?: boolean;
}

/** The run directory's extra files, opened by phases through `world.out`. */
class Outputs implements RunOutputs {
  readonly dir: string;
  readonly events: boolean;
  private readonly resume?: Record<string, AppenderState>;
  private readonly open = new Map<string, ArrowFileAppender>();
  private readonly written: string[] = [];
  /** `resume`: where each appended file stood at the checkpoint being resumed. */
  constructor(dir: string, events: boolean, resume?: Record<string, AppenderState>) {
    this.dir = dir;
    this.events = events;
    this.resume = resume;
  }
  appender(name: string, schema: ColumnData[]): ArrowFileAppender {
    if (this.open.has(name)) throw new Error(`${name} is already open`);
    const file = path.join(this.dir, name);
    const at = this.resume?.[name];
    const a = at ? ArrowFileAppender.resume(file, schema, at) : ArrowFileAppender.open(file, schema);
    this.open.set(name, a);
    return a;
  }
  /** Where every open appender stands (for a checkpoint). */
  states(): Record<string, AppenderState> {
    return Object.fromEntries([...this.open].map(([name, a]) => [name, a.state()]));
  }
  writeFile(name: string, columns: ColumnData[], rows: number, metadata?: Record<string, string>): void {
    writeArrowFile(path.join(this.dir, name), columns, rows, metadata);
    this.written.push(name);
  }
  /** Closes every appender; returns the names of all files written. */
  close(): string[] {
    for (const a of this.open.values()) a.close();
    return [...this.open.keys(), ...this.written].sort();
  }
}

export interface RunResult {
  dir: string;
  manifest: Manifest;
}

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

/**
 * Formats a zod error as one line naming the parameter and the fix. An unknown key comes first (a
 * typo often explains the other issues) and names the closest valid key; `schema` and `input` (what
 * was parsed) say which keys are valid where.
 */
export function paramError(scenario: string, err: z.ZodError, schema?: z.core.$ZodType, input?: unknown): InputError {
  const i = err.issues.find((x) => x.code === 'unrecognized_keys') ?? err.issues[0];
  if (i.code === 'unrecognized_keys') {
    const valid = schema ? keysAt(schema, i.path, input) : undefined;
    return new InputError(`scenario ${scenario}: ${unknownKeyMessage(i.path, i.keys[0], valid)}`);
  }
  const field = i.path.join('.') || '(parameters)';
  return new InputError(`scenario ${scenario}: parameter ${field}: ${i.message}; set it with --set ${field}=VALUE`);
}

export async function runScenario(scenario: Scenario, o: RunOptions = {}): Promise<RunResult> {
  const log = o.log ?? (() => {});
  const warn = o.warn ?? log;
  const parsed = scenario.params.safeParse(o.params ?? {});
  if (!parsed.success) throw paramError(scenario.name, parsed.error, scenario.params, o.params ?? {});
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
  const outLabel = o.out ?? path.join('runs', scenario.name);
  const dir = path.resolve(outLabel);
  // Refuse a directory we may not write into before creating or locking anything (again when
  // preparing it, under the lock).
  if (!o.resume) {
    checkRunDirectory(dir, { force: o.force, label: outLabel });
    checkCanCreate(dir, outLabel);
  }
  // One writer per run directory (dirLock.ts), from before a resume reads the directory, or before
  // a fresh run writes its first file (so a run refused for its set-up leaves nothing behind), to
  // the end of the run.
  let lock: DirLock | undefined;
  const takeLock = () => {
    lock = lockDirectory(dir, { label: outLabel, what: `socsim run ${o.resume ? `--resume ${outLabel}` : scenario.name}` });
    if (lock.tookOverFrom) log(`${outLabel}: its last writer, ${describeHolder(lock.tookOverFrom)}, is gone; taking the directory over`);
  };
  if (o.resume) takeLock();
  try {
    return await runWithLock();
  } finally {
    lock?.release();
  }

  async function runWithLock(): Promise<RunResult> {
    const resuming = o.resume ? resumableRun(dir, outLabel, true) : undefined;

    // Fail fast on LLM configuration (missing key, unreachable server) before building anything.
    const llmParsed = llmOptions.safeParse(o.llm ?? {});
    if (!llmParsed.success) throw new InputError(`--llm options: ${llmParsed.error.issues[0].path.join('.')}: ${llmParsed.error.issues[0].message}`);
    const llm = await setupLlm(llmParsed.data);
    const opened = o.executor ? { exec: o.executor, ...backendOf(o.executor) } : await openBackend(o.backend ?? 'cpu', threads, log);
    const exec = opened.exec;
    const started = new Date();
    const t0 = performance.now();
    let peakRss = process.memoryUsage().rss;
    const fresh: Manifest = {
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
    // A resumed run keeps its manifest (parameters, start time, the steps it has) and says so.
    // Its threads and backend are those of this process (a run may be resumed on others).
    const manifest: Manifest = resuming ? { ...resuming.manifest, threads, backend: opened.backend, adapter: opened.adapter, status: 'running', error: undefined, finished_at: undefined } : fresh;
    manifest.pid = process.pid;
    manifest.host = os.hostname();
    const policy = new CheckpointPolicy(o.checkpointEvery);
    // The manifest is rewritten after a step by the checkpoints' rule (when the time since the last
    // rewrite is 20 times what it took), and always after a checkpoint or snapshot: its per-step
    // arrays grow with the run, and a rewrite at every step made long runs quadratic (12,000 voter
    // steps of 2,000 agents took 36 s, 1.7 s of it stepping).
    const manifestPolicy = new CheckpointPolicy(undefined);
    let metrics: MetricsWriter | undefined;
    let prepared = false;
    let finishPhases: (() => Promise<void>) | undefined;
    let closeOutputs: (() => string[]) | undefined;
    // graph.arrow is written while the run goes on (writeGraphLater): what its write came to, once
    // settled (undefined: written), and whether its error was already thrown.
    let graphWrite: Promise<Error | undefined> = Promise.resolve(undefined);
    let graphError: Error | undefined;
    let graphErrorThrown = false;
    const graphWritten = async () => {
      const err = await graphWrite;
      if (err && !graphErrorThrown) {
        graphErrorThrown = true;
        throw err;
      }
    };
    const manifestFile = path.join(dir, 'manifest.json');
    const finish = async (status: Manifest['status'], error?: string) => {
      try {
        await finishPhases?.();
      } catch (err) {
        // Finishing after a failure can fail too (a disk that was full is still full); the manifest
        // must still say that the run failed and why, so keep both errors and go on to write it.
        if (status !== 'failed') throw err;
        error = `${error}; then, finishing: ${(err as Error).message}`;
      } finally {
        finishPhases = undefined;
        metrics?.close();
        const extra = closeOutputs?.() ?? [];
        if (llm) {
          llm.cache.close();
          extra.push('llm-cache.jsonl');
        }
        manifest.files.other = extra.sort();
      }
      manifest.status = status;
      if (error) manifest.error = error;
      if (status === 'completed') {
        const f = manifest.files;
        manifest.file_bytes = fileSizes(dir, [f.metrics, f.graph, ...(f.graph_end ? [f.graph_end] : []), ...(f.other ?? []), ...f.agents]);
      }
      manifest.finished_at = new Date().toISOString();
      manifest.peak_rss_bytes = Math.max(peakRss, process.memoryUsage().rss, peakResidentBytes());
      if (prepared) writeJsonAtomic(manifestFile, manifest);
    };

    try {
      // Verified before anything is set up (a damaged newest checkpoint gives way to the previous one).
      const taken = resuming ? resumeCheckpoint<CheckpointMeta>(dir, outLabel, warn) : undefined;
      const ckpt = taken?.checkpoint;
      // Whether checkpoint.bin holds a good checkpoint to keep as the previous one when the next is
      // written: not when the resume passed over it as damaged (the next one replaces it).
      let keepNewest = !taken?.fellBack;
      // A changed graph in the checkpoint stands in for set-up's: the generator (~1 min at 10M
      // agents) and the CSR are skipped, and set-up's rows are never in memory beside the saved ones.
      const saved = ckpt?.meta.graphChanged && ckpt.meta.graphForSetup ? (ckpt.readField('graph') as { following: Csr }).following : undefined;
      const world0 = await scenario.setup({
        agents,
        steps,
        stepSeconds,
        seed,
        exec,
        params,
        graphFile: o.graphFile,
        graphRead: o.graphRead,
        agentsGiven: o.agents !== undefined,
        log,
        llm,
        following: saved,
      });
      const tookSaved = saved !== undefined && world0.graph.following === saved;
      if (world0.graphSource) {
        // A loaded file replaces the generator: record the file, not the unused generator spec.
        const { graph: _unusedSpec, ...rest } = params;
        manifest.parameters = rest;
        manifest.graph_file = world0.graphSource;
      }
      await releaseArrays(exec);
      if (!resuming) {
        takeLock();
        prepareRunDirectory(dir, { force: o.force, label: outLabel });
      }
      prepared = true;
      // The manifest comes first, so the directory is recognisable as a run from now on.
      writeJsonAtomic(manifestFile, manifest);
      if (ckpt && llm) llm.cache.resumeTo(path.join(dir, 'llm-cache.jsonl'), ckpt.meta.llmCacheBytes ?? 0);
      else llm?.cache.recordTo(path.join(dir, 'llm-cache.jsonl'));
      const outputs = new Outputs(dir, o.events ?? false, ckpt?.meta.appenders);
      closeOutputs = () => outputs.close();
      const world: World = { agents: world0.agents, graph: world0.graph, exec, seed, stepSeconds, out: outputs };
      const phases = world0.phases;
      // Held weakly: a rebuild's old graph must be free to go (8 bytes per edge).
      const initialGraph = new WeakRef(world0.graph);
      let graphChanged = ckpt?.meta.graphChanged ?? false;
      // A snapshot whose columns a device holds is written when their copies arrive, while the next
      // step runs (exec.capture); at most one is pending, and it is settled before anything that
      // lists or needs the snapshots (the next snapshot, a checkpoint, the end of the run).
      let pendingSnapshot: Promise<void> | undefined;
      let snapshotError: Error | undefined;
      const settleSnapshot = async () => {
        await pendingSnapshot;
        pendingSnapshot = undefined;
        if (snapshotError) throw snapshotError;
      };
      finishPhases = async () => {
        await graphWritten();
        await settleSnapshot();
        await exec.sync?.();
        for (const p of phases) await p.finish?.(world);
        const file = path.join(dir, 'graph-end.arrow');
        if (world.endEdges) writeEdges(file, world.endEdges);
        else if (graphChanged || world.graph !== initialGraph.deref()) writeGraph(file, world.graph);
        if (world.endEdges || graphChanged || world.graph !== initialGraph.deref()) manifest.files.graph_end = 'graph-end.arrow';
      };
      manifest.agents = world.agents.length;
      // Set-up's edges (a resumed run that took its checkpoint's graph keeps its manifest's figure).
      if (!tookSaved) manifest.edges = world.graph.directed ? world.graph.edges : world.graph.edges / 2;
      manifest.directed = world.graph.directed;
      manifest.events = outputs.events;
      for (const p of phases) await p.init?.(world);
      checkPhases(world, phases);

      const ids = sharedArray('i32', world.agents.length);
      for (let i = 0; i < ids.length; i++) ids[i] = i;
      const snapshot = (step: number, cols = snapshotColumns(world.agents, ids)) => {
        const name = snapshotName(step);
        writeArrowFile(path.join(dir, name), cols, world.agents.length, { step: String(step) });
        manifest.files.agents.push(name);
      };
      const snapshotLater = (step: number, capture: NonNullable<typeof exec.capture>) => {
        const cols = snapshotColumns(world.agents, ids);
        const arrays = cols.flatMap((c) => (ArrayBuffer.isView(c.values) ? [c.values] : []));
        pendingSnapshot = capture
          .call(exec, arrays)
          .then((copies) => snapshot(step, cols.map((c) => (ArrayBuffer.isView(c.values) ? { ...c, values: copies[arrays.indexOf(c.values)] } : c))))
          .catch((err: Error) => {
            snapshotError = err;
          });
      };
      let first = 0;
      if (ckpt && resuming) {
        // Same set-up, then the state of the checkpoint on top; the files go back to that step too.
        const tr = performance.now();
        // Arrays restored in place get new contents on the host: a device's copies of them go stale
        // (its other copies come back first, so that the host's are valid).
        await exec.sync?.();
        const overwritten = ckpt.restoreInto(stateRoot(world.agents, ckpt.meta.graphChanged ? world.graph : null, phases, llm?.cache.state), tookSaved ? ['graph'] : []);
        for (const a of overwritten) exec.hostWrote?.(a);
        // The following rows were restored in place of set-up's; the followers are their transpose.
        if (ckpt.meta.graphChanged && !tookSaved) world.graph = await withLazyFollowers(exec, world.agents.length, world.graph.following);
        const m = ckpt.meta;
        first = m.step;
        metrics = new MetricsWriter(path.join(dir, 'metrics.arrow'), metricSchema(phases), m.metrics);
        manifest.steps_completed = m.manifest.steps_completed;
        manifest.step_wall_ms = m.manifest.step_wall_ms;
        manifest.phase_wall_ms = m.manifest.phase_wall_ms;
        manifest.files.agents = m.manifest.agents;
        // The checkpoint restored, which a stop before the next one need not write again.
        const file = path.join(dir, taken!.file);
        const prior = manifest.checkpoint;
        manifest.checkpoint = { step: m.step, file: taken!.file, bytes: fs.statSync(file).size, ...(prior?.step === m.step && prior.file === taken!.file && { seconds: prior.seconds }) };
        // Snapshots past the checkpoint are written again when their step comes.
        const keep = new Set(m.manifest.agents);
        for (const f of fs.readdirSync(path.join(dir, 'agents'))) if (!keep.has(`agents/${f}`)) fs.rmSync(path.join(dir, 'agents', f), { force: true });
        (manifest.resumed ??= []).push({ from_step: first, at: new Date().toISOString(), threads, backend: opened.backend, setup_seconds: (tr - t0) / 1000, restore_seconds: (performance.now() - tr) / 1000 });
      } else {
        writeJsonAtomic(manifestFile, manifest);
        // ~4 GB at 10M agents (~16 s of this machine's disk): written while the first steps run.
        // A checkpoint waits for it (a run that can be resumed has its graph.arrow), as do the end
        // of the run and onReady; a failed write stops the run at the next step.
        // Its rows stay pinned meanwhile: the daily fold does not rewrite them in place.
        const tg = performance.now();
        const unpin = pinRows(world.graph.following.targets);
        graphWrite = writeGraphLater(path.join(dir, 'graph.arrow'), world.graph)
          .finally(unpin)
          .then(
            () => void log(`wrote graph.arrow in ${((performance.now() - tg) / 1000).toFixed(1)} s`),
            (err: Error) => (graphError = err),
          );
        snapshot(0);
        metrics = new MetricsWriter(path.join(dir, 'metrics.arrow'), metricSchema(phases));
        // Classic models also report the initial state, as a first row with step -1.
        const initial = await measureInitial(world, phases);
        if (initial) metrics.append(INITIAL_STEP, INITIAL_STEP * stepSeconds, initial);
      }
      const checkpoint = (done: number) => {
        const tc = performance.now();
        graphChanged ||= world.graph !== initialGraph.deref();
        const meta: CheckpointMeta = {
          step: done,
          appenders: outputs.states(),
          metrics: metrics!.state(),
          graphChanged,
          graphForSetup: true,
          llmCacheBytes: llm?.cache.position(),
          manifest: { steps_completed: done, step_wall_ms: [...manifest.step_wall_ms], phase_wall_ms: structuredClone(manifest.phase_wall_ms), agents: [...manifest.files.agents] },
        };
        let bytes: number;
        try {
          const previous = keepNewest ? { previous: path.join(dir, PREVIOUS_CHECKPOINT_FILE) } : {};
          bytes = writeCheckpoint(path.join(dir, CHECKPOINT_FILE), stateRoot(world.agents, graphChanged ? world.graph : null, phases, llm?.cache.state), meta, previous);
        } catch (err) {
          // A checkpoint is insurance, not a result: a full disk must not end a run that can go on.
          // The previous checkpoint (if any) stays valid; the manifest says what happened.
          const kept = manifest.checkpoint ? `the checkpoint of step ${manifest.checkpoint.step} stays` : 'there is no checkpoint to resume from';
          manifest.checkpoint_error = `step ${done}: ${(err as Error).message}; ${kept}`;
          log(`could not write the checkpoint after step ${done} (${(err as Error).message}); the run goes on and ${kept}`);
          policy.record(performance.now() - tc);
          return;
        }
        keepNewest = true;
        const ms = performance.now() - tc;
        policy.record(ms);
        manifest.checkpoint = { step: done, file: CHECKPOINT_FILE, bytes, seconds: Math.round(ms) / 1000 };
        manifest.checkpoint_error = undefined;
      };
      if (!resuming) manifest.setup_seconds = (performance.now() - t0) / 1000;
      manifest.rss_after_setup_bytes = process.memoryUsage().rss;
      peakRss = Math.max(peakRss, manifest.rss_after_setup_bytes);
      writeJsonAtomic(manifestFile, manifest);
      log(`set up ${world.agents.length} agents, ${manifest.edges} edges in ${((performance.now() - t0) / 1000).toFixed(1)} s${resuming ? `; resuming after step ${first}` : ''}`);

      // A step counts as completed (its metrics row, wall time and onStep) once its metrics are in.
      // An executor that reads sums back late (a device: exec.queueReduce, StepContext.later) gets the
      // next step queued meanwhile, so the read-back overlaps its kernels: steps complete in order, at
      // most one behind the loop. Elsewhere a step completes before the next begins.
      const overlap = !!exec.queueReduce;
      let completed: Promise<void> = Promise.resolve();
      const complete = (step: number, wall: number, pending: Promise<Map<string, number>>) => {
        completed = completed
          .then(() => pending)
          .then((m) => {
            metrics!.append(step, step * stepSeconds, m);
            manifest.step_wall_ms.push(Math.round(wall * 1000) / 1000);
            manifest.steps_completed = step + 1;
            o.onStep?.(step, steps, wall, m);
            if (step === first) void graphWrite.then((err) => err || o.onReady?.());
          });
        completed.catch(() => undefined); // surfaces where it is awaited
      };
      for (let step = first; step < steps; step++) {
        // With one thread a step never leaves the microtask queue; yield so signals get handled.
        await new Promise((resolve) => setImmediate(resolve));
        if (graphError) await graphWritten();
        if (o.signal?.stopRequested) {
          await completed;
          if (step > (manifest.checkpoint?.step ?? -1) && (o.checkpointEvery ?? 1) > 0) {
            await settleSnapshot();
            await exec.sync?.();
            await graphWritten();
            checkpoint(step);
          }
          await finish('interrupted');
          return { dir, manifest };
        }
        const ts = performance.now();
        const phaseMs = new Map<string, number>();
        const before = completed;
        let pending: Promise<Map<string, number>>;
        try {
          ({ metrics: pending } = await queueStep(world, phases, step, phaseMs));
        } catch (err) {
          // The steps before this failing one are finished all the same: keep them.
          await before.catch(() => undefined);
          throw err;
        }
        await before;
        for (const [name, ms] of phaseMs) (manifest.phase_wall_ms[name] ??= []).push(Math.round(ms * 1000) / 1000);
        // Snapshots carry the state at the end of step s under the name s + 1 (step-000000 is the start).
        const done = step + 1;
        const snapshotDue = (snapshotEvery > 0 && done % snapshotEvery === 0) || done === steps;
        // Arrays a device holds come back to the host only when a file needs them.
        const checkpointDue = policy.due(done, steps);
        if (snapshotDue || checkpointDue) await settleSnapshot();
        if (checkpointDue || (snapshotDue && !exec.capture)) await exec.sync?.();
        if (snapshotDue) {
          if (exec.capture && !checkpointDue) snapshotLater(done, exec.capture);
          else snapshot(done);
        }
        complete(step, performance.now() - ts, pending);
        if (!overlap) await completed;
        peakRss = Math.max(peakRss, process.memoryUsage.rss());
        if (checkpointDue) {
          await completed;
          await graphWritten();
          checkpoint(done);
        }
        if (snapshotDue || checkpointDue || manifestPolicy.due(done, steps)) {
          const tm = performance.now();
          manifest.kernel_calls = kernelCalls(exec);
          manifest.kernel_transfer_bytes = kernelTransfers(exec);
          manifest.kernel_device_ms = kernelTimes(exec);
          manifest.kernel_clock_ms = kernelTimes(exec, 'clock');
          writeJsonAtomic(manifestFile, manifest);
          manifestPolicy.record(performance.now() - tm);
        }
      }
      await completed;
      // A complete run needs no checkpoint (they can be large): drop both.
      for (const f of [CHECKPOINT_FILE, PREVIOUS_CHECKPOINT_FILE]) fs.rmSync(path.join(dir, f), { force: true });
      manifest.checkpoint = undefined;
      await finish('completed');
      return { dir, manifest };
    } catch (err) {
      await finish('failed', (err as Error).message).catch((again: Error) => {
        log(`could not record the failure in ${manifestFile}: ${again.message}`);
      });
      throw err;
    } finally {
      if (!o.executor) await exec.close();
    }
  }
}
