/**
 * Runs a scenario end to end: validates parameters, builds the world, steps it, and writes the run
 * directory. Interruption (SIGINT/SIGTERM) stops at the next step boundary; every completed step is
 * already on disk (metrics are appended crash-safely after each step, a step's row once the next
 * step's kernels are queued) and the manifest says `"status": "interrupted"`.
 */
import os from 'node:os';
import path from 'node:path';
import { InputError } from '../../sim-core/errors.ts';
import { releaseArrays, type Executor } from '../../sim-core/exec.ts';
import { backendOf, kernelCalls, kernelTimes, kernelTransfers, openBackend } from '../../sim-core/backend.ts';
import { checkPhases, measureInitial, metricSchema, queueStep, type World } from '../../sim-core/phase.ts';
import type { Csr } from '../../sim-core/csr.ts';
import { checkCanCreate } from '../../sim-core/io/makeDirectory.ts';
import { llmOptions, setupLlm } from '../../llm-archetypes/setup.ts';
import type { Scenario } from './defineScenario.ts';
import { paramError } from './strictParams.ts';
import { CheckpointPolicy, resumableRun, resumeCheckpoint } from './resume.ts';
import { describeHolder, lockDirectory, type DirLock } from './dirLock.ts';
import { checkRunDirectory, fileSizes, MetricsWriter, prepareRunDirectory, peakResidentBytes, writeEdges, writeGraph, writeJsonAtomic, type Manifest } from './runDirectory.ts';
import { freshManifest } from './runManifest.ts';
import { Outputs } from './runOutputs.ts';
import { RunSnapshots } from './runSnapshots.ts';
import { BackgroundGraphWrite } from './graphWrite.ts';
import { restoreRun, RunCheckpoints, stateRoot, type CheckpointMeta } from './runCheckpoints.ts';
import type { RunOptions, RunResult } from './runOptions.ts';

export type { RunOptions, RunResult };

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
    const fresh = freshManifest(scenario, o, { params, agents, steps, seed, threads, stepSeconds, snapshotEvery }, opened, llm, started);
    // A resumed run keeps its manifest (parameters, start time, the steps it has) and says so.
    // Its threads and backend are those of this process (a run may be resumed on others).
    const manifest: Manifest = resuming ? { ...resuming.manifest, threads, backend: opened.backend, adapter: opened.adapter, status: 'running', error: undefined, stopped: undefined, finished_at: undefined } : fresh;
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
    const graphWrite = new BackgroundGraphWrite();
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
          manifest.llm.spent = llm.cost.spent();
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
      const checkpoints = new RunCheckpoints(dir, policy, !taken?.fellBack, log);
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
      finishPhases = async () => {
        await graphWrite.written();
        await snapshots.settle();
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

      const snapshots = new RunSnapshots(dir, world.agents, manifest);
      let first = 0;
      if (ckpt && resuming) {
        // Same set-up, then the state of the checkpoint on top; the files go back to that step too.
        const tr = performance.now();
        metrics = await restoreRun({ dir, file: taken!.file, checkpoint: ckpt, world, phases, exec, llmState: llm?.cache.state, tookSaved, manifest });
        first = ckpt.meta.step;
        (manifest.resumed ??= []).push({ from_step: first, at: new Date().toISOString(), threads, backend: opened.backend, setup_seconds: (tr - t0) / 1000, restore_seconds: (performance.now() - tr) / 1000 });
      } else {
        writeJsonAtomic(manifestFile, manifest);
        graphWrite.start(path.join(dir, 'graph.arrow'), world.graph, log);
        snapshots.write(0);
        metrics = new MetricsWriter(path.join(dir, 'metrics.arrow'), metricSchema(phases));
        // Classic models also report the initial state, as a first row with step 0 (runDirectory.ts: MetricsWriter).
        const initial = await measureInitial(world, phases);
        if (initial) metrics.append(0, 0, initial);
      }
      const checkpoint = (done: number) => {
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
        checkpoints.write(meta, stateRoot(world.agents, graphChanged ? world.graph : null, phases, llm?.cache.state), manifest);
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
      // `done` counts the steps completed with this one: the row's step (step N = the state after N steps).
      const complete = (done: number, wall: number, pending: Promise<Map<string, number>>) => {
        completed = completed
          .then(() => pending)
          .then((m) => {
            metrics!.append(done, done * stepSeconds, m);
            manifest.step_wall_ms.push(Math.round(wall * 1000) / 1000);
            manifest.steps_completed = done;
            o.onStep?.(done, steps, wall, m);
            if (done === first + 1) graphWrite.whenWritten(() => o.onReady?.());
          });
        completed.catch(() => undefined); // surfaces where it is awaited
      };
      for (let step = first; step < steps; step++) {
        // With one thread a step never leaves the microtask queue; yield so signals get handled.
        await new Promise((resolve) => setImmediate(resolve));
        if (graphWrite.error) await graphWrite.written();
        // --llm-max-cost: stop as an interrupted run stops, before a round that could pass it.
        const overBudget = o.signal?.stopRequested ? undefined : llm?.cost.stopBefore(step);
        if (overBudget) manifest.stopped = overBudget;
        if (o.signal?.stopRequested || overBudget) {
          await completed;
          if (step > (manifest.checkpoint?.step ?? -1) && (o.checkpointEvery ?? 1) > 0) {
            await snapshots.settle();
            await exec.sync?.();
            await graphWrite.written();
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
        // The loop's step s (0-based, as the phases see it) leaves the state after s + 1 steps: its
        // snapshot is step-(s+1) and its metrics row step s + 1 (step-000000 is the start).
        const done = step + 1;
        const snapshotDue = (snapshotEvery > 0 && done % snapshotEvery === 0) || done === steps;
        // Arrays a device holds come back to the host only when a file needs them.
        const checkpointDue = policy.due(done, steps);
        if (snapshotDue || checkpointDue) await snapshots.settle();
        if (checkpointDue || (snapshotDue && !exec.capture)) await exec.sync?.();
        if (snapshotDue) {
          if (exec.capture && !checkpointDue) snapshots.writeLater(done, exec as Executor & { capture: NonNullable<Executor['capture']> });
          else snapshots.write(done);
        }
        complete(done, performance.now() - ts, pending);
        if (!overlap) await completed;
        peakRss = Math.max(peakRss, process.memoryUsage.rss());
        if (checkpointDue) {
          await completed;
          await graphWrite.written();
          checkpoint(done);
        }
        if (snapshotDue || checkpointDue || manifestPolicy.due(done, steps)) {
          const tm = performance.now();
          manifest.kernel_calls = kernelCalls(exec);
          manifest.kernel_transfer_bytes = kernelTransfers(exec);
          manifest.kernel_device_ms = kernelTimes(exec);
          manifest.kernel_clock_ms = kernelTimes(exec, 'clock');
          if (llm) manifest.llm.spent = llm.cost.spent();
          writeJsonAtomic(manifestFile, manifest);
          manifestPolicy.record(performance.now() - tm);
        }
      }
      await completed;
      checkpoints.dropAll(manifest);
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
