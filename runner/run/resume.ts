/**
 * Checkpoints and resume at the run level. A run takes a checkpoint (sim-core/checkpoint.ts) after
 * a step: the agent columns, the graph, every phase's `state`, and where each appended Arrow file
 * stood. `socsim run --resume DIR` sets the same run up again from its manifest, restores the last
 * checkpoint, cuts the appended files back to that point and goes on; the files it ends with are
 * byte-identical to those of the same run uninterrupted.
 *
 * When to checkpoint (`--checkpoint-every`): every N steps when given (0 = never). Otherwise
 * automatically: after the first step, then after any step once the wall time since the last
 * checkpoint reaches 20x what that checkpoint took to write, so checkpoints cost at most about 5%
 * of the run and a crash loses at most about 20 checkpoint-writes' worth of work (measured on the
 * 2-core machine: 86 MB in 0.2 s at 100k social agents, 623 MB in 1.6 s at 1M). A resume sets
 * the scenario up again before restoring, so it also pays the set-up time (32 s at 1M social
 * agents). A completed run deletes its checkpoints; an
 * interrupted (Ctrl-C) run takes one at the step where it stopped.
 *
 * A run keeps its last two checkpoints: CHECKPOINT_FILE, the newest, and PREVIOUS_CHECKPOINT_FILE,
 * the one before (writeCheckpoint's `previous`: the new file is complete and fsynced before the
 * old one is renamed away). Every checkpoint is checksummed and verified before it is restored
 * (sim-core/checkpoint.ts). A resume takes the newest when it verifies, else the previous one,
 * saying so in one line; everything else a resume restores (steps, appended files, snapshots, the
 * LLM cache) comes from the meta of the checkpoint taken, so falling back to the older one cuts the
 * run's files back to that one's step and the run still ends byte-identical. A run that fell back
 * writes its next checkpoint over the damaged newest and keeps the previous one as it is.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CheckpointError, readCheckpoint, type Checkpoint } from '../../sim-core/checkpoint.ts';
import { InputError } from '../../sim-core/errors.ts';
import { readRunManifest, writerState, type Manifest } from './runDirectory.ts';
import { describeHolder, readHolder } from './dirLock.ts';

/** The newest checkpoint of a run, in its directory. */
export const CHECKPOINT_FILE = 'checkpoint.bin';
/** The checkpoint before the newest, kept in case the newest is damaged. */
export const PREVIOUS_CHECKPOINT_FILE = 'checkpoint.prev.bin';

/** Whether the run in `dir` has a checkpoint file (either one; neither is verified here). */
export function hasCheckpoint(dir: string): boolean {
  return fs.existsSync(path.join(dir, CHECKPOINT_FILE)) || fs.existsSync(path.join(dir, PREVIOUS_CHECKPOINT_FILE));
}

/** Decides after each step whether to take a checkpoint. */
export class CheckpointPolicy {
  private readonly every: number | undefined;
  private since = performance.now();
  private lastCost = 0;
  private taken = 0;
  constructor(every: number | undefined) {
    this.every = every;
  }
  due(done: number, steps: number): boolean {
    if (done >= steps) return false;
    if (this.every !== undefined) return this.every > 0 && done % this.every === 0;
    if (this.taken === 0) return true;
    return performance.now() - this.since >= 20 * this.lastCost;
  }
  record(costMs: number): void {
    this.taken++;
    this.lastCost = costMs;
    this.since = performance.now();
  }
}

/**
 * What a resume needs from the run directory, checked: the manifest, and a checkpoint file
 * (resumeCheckpoint verifies it). `locked`: the caller holds the directory's lock, so no other
 * writer can be alive.
 */
export function resumableRun(dir: string, label = dir, locked = false): { manifest: Manifest } {
  const m = readRunManifest(dir);
  if (!m) throw new InputError(`--resume ${label}: not a socsim run directory (no socsim manifest.json)`);
  if (!m.invocation) throw new InputError(`--resume ${label}: the run was written by a socsim without resume support; start it again`);
  if (m.status === 'completed') throw new InputError(`--resume ${label}: the run is complete (${m.steps_completed} steps); nothing to resume`);
  const writer = locked ? 'gone' : writerState(m, dir);
  if (m.status === 'running' && writer !== 'gone') {
    const where = writer === 'alive' ? `${describeHolder(readHolder(dir) ?? (m.pid !== undefined ? { pid: m.pid, host: m.host ?? '?', started_at: m.started_at ?? '?', command: 'socsim run' } : undefined))} is still running it` : `it may still be running on ${m.host ?? 'another host'} (process ${m.pid ?? '?'})`;
    throw new InputError(`--resume ${label}: ${where}; stop it first`);
  }
  if (!hasCheckpoint(dir)) {
    throw new InputError(`--resume ${label}: no checkpoint (the run stopped at step ${m.steps_completed ?? 0}, before its first); start it again with --force`);
  }
  return { manifest: m as Manifest };
}

/** What is wrong with a checkpoint that cannot be used, after its name: "is damaged (checksum mismatch)". */
export function unusable(err: CheckpointError): string {
  if (err.kind === 'missing') return 'is missing';
  if (err.kind === 'version') return `cannot be read (${err.problem})`;
  return `is damaged (${err.problem})`;
}

/**
 * The checkpoint a resume of `dir` restores, verified: the newest, or, when that one fails to
 * verify (or is missing), the previous one, after `warn` says so in one line. Throws an InputError
 * (one line, naming the files and what is wrong) when neither verifies. `label`: `dir` as the user
 * named it. `file`: the name of the checkpoint taken; `fellBack`: whether it is the previous one.
 */
export function resumeCheckpoint<M extends { step: number }>(dir: string, label: string, warn: (line: string) => void): { checkpoint: Checkpoint<M>; file: string; fellBack: boolean } {
  const shown = (name: string) => path.join(label, name);
  const read = (name: string): Checkpoint<M> | CheckpointError => {
    try {
      return readCheckpoint<M>(path.join(dir, name));
    } catch (err) {
      if (err instanceof CheckpointError) return err;
      throw err;
    }
  };
  const newest = read(CHECKPOINT_FILE);
  if (!(newest instanceof CheckpointError)) return { checkpoint: newest, file: CHECKPOINT_FILE, fellBack: false };
  const why = `${shown(CHECKPOINT_FILE)} ${unusable(newest)}`;
  if (!fs.existsSync(path.join(dir, PREVIOUS_CHECKPOINT_FILE))) {
    throw new InputError(`--resume ${label}: ${why}, and there is no previous checkpoint; start the run again with --force`);
  }
  const previous = read(PREVIOUS_CHECKPOINT_FILE);
  if (previous instanceof CheckpointError) {
    throw new InputError(`--resume ${label}: ${why}, and the previous one, ${shown(PREVIOUS_CHECKPOINT_FILE)}, ${unusable(previous)}; start the run again with --force`);
  }
  warn(`${why}; resuming from the previous checkpoint, ${shown(PREVIOUS_CHECKPOINT_FILE)} (after step ${previous.meta.step})`);
  return { checkpoint: previous, file: PREVIOUS_CHECKPOINT_FILE, fellBack: true };
}

/** One checkpoint file as `inspect` reports it: usable (with its step), or why not. */
export type CheckpointState = { name: string; step: number; bytes: number } | { name: string; error: CheckpointError };

/**
 * Verifies the checkpoints of the run in `dir` (each a full read of its file): the newest, and the
 * previous one when it exists (undefined when it does not).
 */
export function checkCheckpoints(dir: string): { newest: CheckpointState; previous?: CheckpointState } {
  const check = (name: string): CheckpointState => {
    const file = path.join(dir, name);
    try {
      const c = readCheckpoint<{ step: number }>(file);
      return { name, step: c.meta.step, bytes: fs.statSync(file).size };
    } catch (err) {
      if (err instanceof CheckpointError) return { name, error: err };
      throw err;
    }
  };
  const newest = check(CHECKPOINT_FILE);
  return { newest, previous: fs.existsSync(path.join(dir, PREVIOUS_CHECKPOINT_FILE)) ? check(PREVIOUS_CHECKPOINT_FILE) : undefined };
}
