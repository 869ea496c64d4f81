/**
 * A run's checkpoints: what one saves (the state root and where every file stood), writing one
 * without ever ending a run that can go on, and restoring one into a run set up again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeCheckpoint, type Checkpoint } from '../../sim-core/checkpoint.ts';
import { withLazyFollowers, type Graph } from '../../sim-core/csr.ts';
import type { Executor } from '../../sim-core/exec.ts';
import type { AppenderState } from '../../sim-core/io/arrowFile.ts';
import { metricSchema, type Phase, type World } from '../../sim-core/phase.ts';
import { CHECKPOINT_FILE, PREVIOUS_CHECKPOINT_FILE, type CheckpointPolicy } from './resume.ts';
import { MetricsWriter, type Manifest } from './runDirectory.ts';

/** What a checkpoint records besides the state itself: the step and where every file stood. */
export interface CheckpointMeta {
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
export function stateRoot(agents: World['agents'], graph: Graph | null, phases: readonly Phase[], llm: object | undefined): object {
  return { agents: agents.columns, graph: graph && { following: graph.following }, phases: Object.fromEntries(phases.map((p, i) => [`${i}:${p.name}`, p.state ?? null])), llm: llm ?? null };
}

/** Writes checkpoint.bin, keeping the one before as checkpoint.prev.bin while it is good. */
export class RunCheckpoints {
  private readonly dir: string;
  private readonly policy: CheckpointPolicy;
  private readonly log: (line: string) => void;
  /**
   * Whether checkpoint.bin holds a good checkpoint to keep as the previous one when the next is
   * written: not when a resume passed over it as damaged (the next one replaces it).
   */
  private keepNewest: boolean;
  constructor(dir: string, policy: CheckpointPolicy, keepNewest: boolean, log: (line: string) => void) {
    this.dir = dir;
    this.policy = policy;
    this.keepNewest = keepNewest;
    this.log = log;
  }

  /**
   * Writes the checkpoint after `meta.step` steps and records it in the manifest. A checkpoint is
   * insurance, not a result: a failed write (a full disk) leaves the previous one valid, says so in
   * the manifest and the log, and the run goes on.
   */
  write(meta: CheckpointMeta, root: object, manifest: Manifest): void {
    const t = performance.now();
    const done = meta.step;
    let bytes: number;
    try {
      const previous = this.keepNewest ? { previous: path.join(this.dir, PREVIOUS_CHECKPOINT_FILE) } : {};
      bytes = writeCheckpoint(path.join(this.dir, CHECKPOINT_FILE), root, meta, previous);
    } catch (err) {
      const kept = manifest.checkpoint ? `the checkpoint of step ${manifest.checkpoint.step} stays` : 'there is no checkpoint to resume from';
      manifest.checkpoint_error = `step ${done}: ${(err as Error).message}; ${kept}`;
      this.log(`could not write the checkpoint after step ${done} (${(err as Error).message}); the run goes on and ${kept}`);
      this.policy.record(performance.now() - t);
      return;
    }
    this.keepNewest = true;
    const ms = performance.now() - t;
    this.policy.record(ms);
    manifest.checkpoint = { step: done, file: CHECKPOINT_FILE, bytes, seconds: Math.round(ms) / 1000 };
    manifest.checkpoint_error = undefined;
  }

  /** A complete run needs no checkpoint (they can be large): drops both. */
  dropAll(manifest: Manifest): void {
    for (const f of [CHECKPOINT_FILE, PREVIOUS_CHECKPOINT_FILE]) fs.rmSync(path.join(this.dir, f), { force: true });
    manifest.checkpoint = undefined;
  }
}

export interface Restore {
  dir: string;
  /** The checkpoint file taken (checkpoint.bin, or the previous one when it was damaged). */
  file: string;
  checkpoint: Checkpoint<CheckpointMeta>;
  world: World;
  phases: readonly Phase[];
  exec: Executor;
  llmState: object | undefined;
  /** Set-up took the checkpoint's graph (SetupContext.following): it is not restored again. */
  tookSaved: boolean;
  manifest: Manifest;
}

/**
 * Puts a checkpoint's state over a run set up again the same way, and the run's files and manifest
 * back to its step; returns the metrics writer positioned there.
 */
export async function restoreRun(r: Restore): Promise<MetricsWriter> {
  const { world, exec, manifest } = r;
  const m = r.checkpoint.meta;
  // Arrays restored in place get new contents on the host: a device's copies of them go stale
  // (its other copies come back first, so that the host's are valid).
  await exec.sync?.();
  const overwritten = r.checkpoint.restoreInto(stateRoot(world.agents, m.graphChanged ? world.graph : null, r.phases, r.llmState), r.tookSaved ? ['graph'] : []);
  for (const a of overwritten) exec.hostWrote?.(a);
  // The following rows were restored in place of set-up's; the followers are their transpose.
  if (m.graphChanged && !r.tookSaved) world.graph = await withLazyFollowers(exec, world.agents.length, world.graph.following);
  const metrics = new MetricsWriter(path.join(r.dir, 'metrics.arrow'), metricSchema(r.phases), m.metrics);
  manifest.steps_completed = m.manifest.steps_completed;
  manifest.step_wall_ms = m.manifest.step_wall_ms;
  manifest.phase_wall_ms = m.manifest.phase_wall_ms;
  manifest.files.agents = m.manifest.agents;
  // The checkpoint restored, which a stop before the next one need not write again.
  const prior = manifest.checkpoint;
  manifest.checkpoint = { step: m.step, file: r.file, bytes: fs.statSync(path.join(r.dir, r.file)).size, ...(prior?.step === m.step && prior.file === r.file && { seconds: prior.seconds }) };
  // Snapshots past the checkpoint are written again when their step comes.
  const keep = new Set(m.manifest.agents);
  for (const f of fs.readdirSync(path.join(r.dir, 'agents'))) if (!keep.has(`agents/${f}`)) fs.rmSync(path.join(r.dir, 'agents', f), { force: true });
  return metrics;
}
