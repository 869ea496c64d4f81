/**
 * Running an experiment's plan: each run is a child `socsim run` writing an ordinary run directory
 * under DIR/runs/<id>, with its parameters in DIR/plans/<id>.json (`--params`). Up to `jobs` children
 * at once. A run already completed with the same parameters, seed, steps and agents is skipped; an
 * interrupted one with a checkpoint is resumed; any other is run again (`--force`, which removes
 * only the files a run writes). A failed child is reported and the others go on.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import cliProgress from 'cli-progress';
import { InputError } from '../../sim-core/errors.ts';
import { hasCheckpoint } from '../run/resume.ts';
import { effectiveStatus, readRunManifest, runFilesDamage, writerState, type Manifest } from '../run/runDirectory.ts';
import { describeHolder, LOCK_ENTRY, readHolder } from '../run/dirLock.ts';
import { makeDirectory } from '../../sim-core/io/makeDirectory.ts';
import { SharedLlmCache } from '../run/sharedLlmCache.ts';
import { planFile, readExperimentJson, samePlan, type Plan, type PlannedRun, type RunCommonOptions } from './experimentPlan.ts';
import { BIN } from '../packageInfo.ts';

/** What running a plan needs: its runs, the scenario argument and the options they share (socsim calibrate builds one per generation). */
export interface RunnablePlan {
  scenarioArg: string;
  /** Plugin modules, absolute, that each run loads (--plugin). */
  plugins?: string[];
  json: { options: RunCommonOptions };
  runs: PlannedRun[];
}

/** The tables an experiment writes at the top of its directory. */
export const TABLE_FILES = ['summary.arrow', 'effects.arrow', 'series.arrow'];

export interface Shard {
  index: number;
  count: number;
}

export interface ExecuteOptions {
  /** The experiment directory, absolute, and as the user named it. */
  dir: string;
  label: string;
  jobs: number;
  threads: number;
  /** Each run's `--backend` (default cpu); results do not depend on it. */
  backend?: string;
  shard?: Shard;
  force: boolean;
  quiet: boolean;
  /** Called once, on the first run found or finished complete (checks the outcomes early). */
  validate?(run: PlannedRun, dir: string): void;
  /** Called as each started run ends (completed or failed), e.g. for a caller's own progress bar with `quiet`. */
  onDone?(run: PlannedRun): void;
}

export interface Failure {
  id: string;
  message: string;
}

export interface ExecuteResult {
  planned: number;
  skipped: string[];
  ran: string[];
  /** Of `ran`, those continued from a checkpoint. */
  resumed: string[];
  failures: Failure[];
  interrupted: boolean;
}

/** Writes a file via a temporary name unique to this process, so shards on a shared volume never collide. */
export function writeFileAtomic(file: string, text: string): void {
  const tmp = `${file}.${os.hostname()}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/** What an experiment (and socsim validate) writes at the top of its directory (and the temporary files of those writes). */
const EXPERIMENT_ENTRY = /^(experiment\.json|shard-\d+-of-\d+\.json|summary\.arrow|effects\.arrow|series\.arrow|validate\.md)(\..*\.tmp|\.tmp)?$|^(plans|runs)$/;

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

/** JSON with object keys sorted, for comparing values whatever their key order. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x as object).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  );
}

/** Whether the run in `dir` is the planned run, completed, its files as its completion record says. */
export function runComplete(m: Partial<Manifest> | undefined, run: PlannedRun, plan: RunnablePlan, dir: string): boolean {
  return !!m && m.status === 'completed' && sameRun(m, run, plan) && runFilesDamage(dir, m) === undefined;
}

function sameRun(m: Partial<Manifest>, run: PlannedRun, plan: RunnablePlan): boolean {
  const o = plan.json.options;
  return m.seed === run.seed && m.steps_requested === o.steps && m.agents === o.agents && m.step_seconds === o.step_seconds && canonical(m.parameters) === canonical(run.params);
}

/**
 * Makes DIR an experiment directory for `plan`: refuses one that holds another plan (unless
 * `force`) or files that are not an experiment's; writes experiment.json first, then the plans.
 */
export function prepareExperimentDir(plan: Plan, o: Pick<ExecuteOptions, 'dir' | 'label' | 'force'>): void {
  const { dir, label } = o;
  if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory()) throw new InputError(`${label} is not a directory; choose another --out`);
  const old = fs.existsSync(dir) ? readExperimentJson(dir) : undefined;
  // Another shard on a shared volume may be writing this very plan: its files are no obstacle.
  const foreign = !old && fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => !EXPERIMENT_ENTRY.test(f) && !LOCK_ENTRY.test(f)) : undefined;
  if (foreign !== undefined) {
    throw new InputError(`${label} is not empty (${foreign}) and holds no experiment.json; choose a new or empty directory with --out`);
  }
  const differs = old && (!samePlan(old, plan.json) || plan.runs.some((r) => {
    const f = planFile(dir, r.id);
    return fs.existsSync(f) && fs.readFileSync(f, 'utf8') !== json(r.overrides);
  }));
  if (differs && !o.force) {
    throw new InputError(`${label} holds another plan (experiment ${old!.name}, ${old!.runs.length} runs; arms, grid, seeds, options or parameters differ); pass --force to replace it, or choose another --out`);
  }
  makeDirectory(dir, label);
  if (old && o.force) {
    // Only what an experiment writes: its tables and the plan files of the old plan.
    for (const t of TABLE_FILES) fs.rmSync(path.join(dir, t), { force: true });
    for (const f of fs.readdirSync(dir)) if (/^shard-\d+-of-\d+\.json$/.test(f)) fs.rmSync(path.join(dir, f), { force: true });
    for (const r of old.runs) if (/^[A-Za-z0-9._=-]+$/.test(r.id)) fs.rmSync(planFile(dir, r.id), { force: true });
  }
  writeFileAtomic(path.join(dir, 'experiment.json'), json(plan.json));
  makeDirectory(path.join(dir, 'plans'));
  for (const r of plan.runs) {
    const f = planFile(dir, r.id);
    if (!fs.existsSync(f) || fs.readFileSync(f, 'utf8') !== json(r.overrides)) writeFileAtomic(f, json(r.overrides));
  }
  makeDirectory(path.join(dir, 'runs'));
}

/** The runs of a shard: plan index = i mod N. */
export function shardRuns(runs: readonly PlannedRun[], shard?: Shard): PlannedRun[] {
  return shard ? runs.filter((r) => r.index % shard.count === shard.index) : [...runs];
}

type Action = { kind: 'skip' } | { kind: 'resume' } | { kind: 'fresh'; redo?: string } | { kind: 'busy'; why: string };

function actionFor(run: PlannedRun, plan: RunnablePlan, dir: string, force: boolean): Action {
  const runDir = path.join(dir, run.dir);
  const m = readRunManifest(runDir);
  if (writerState(m ?? {}, runDir) === 'alive') return { kind: 'busy', why: `run ${run.id} is being written by ${describeHolder(readHolder(runDir))}; wait for it or stop it` };
  if (!m) return { kind: 'fresh' };
  const status = effectiveStatus(m, runDir);
  if (force) return { kind: 'fresh' };
  if (runComplete(m, run, plan, runDir)) return { kind: 'skip' };
  if (status === 'completed' && sameRun(m, run, plan)) return { kind: 'fresh', redo: runFilesDamage(runDir, m) };
  if (status !== 'completed' && m.checkpoint && hasCheckpoint(runDir) && sameRun(m, run, plan)) return { kind: 'resume' };
  return { kind: 'fresh' };
}

function childArgs(run: PlannedRun, plan: RunnablePlan, o: ExecuteOptions, action: Action, cache: SharedLlmCache | undefined): string[] {
  const runDir = path.join(o.dir, run.dir);
  const backend = ['--backend', o.backend ?? 'cpu'];
  if (action.kind === 'resume') return [BIN, 'run', '--resume', runDir, '--threads', String(o.threads), ...backend, '--quiet'];
  const opt = plan.json.options;
  return [
    BIN, 'run', plan.scenarioArg, '--out', runDir, '--force', '--seed', String(run.seed), '--threads', String(o.threads), ...backend, '--quiet',
    '--params', planFile(o.dir, run.id), '--agents', String(opt.agents), '--steps', String(opt.steps), '--step-seconds', String(opt.step_seconds), '--snapshot-every', String(opt.snapshot_every),
    ...(plan.plugins ?? []).flatMap((p) => ['--plugin', p]),
    ...(cache ? cache.argsFor(run.id) : (opt.llm ?? [])),
  ];
}

/**
 * Runs one child; resolves to an error message (the last lines of its stderr) or undefined. The
 * child gets an IPC channel only so that it notices when this process ends, however it ends (the
 * channel closes): it then stops at its next step boundary, resumable, instead of writing on as an
 * orphan (runner/cli/cli.ts).
 */
function runChild(args: string[], children: Set<ReturnType<typeof spawn>>): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    child.channel?.unref();
    children.add(child);
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-20_000);
    });
    child.on('error', (e) => err += e.message);
    child.on('close', (code, signal) => {
      children.delete(child);
      if (code === 0) return resolve(undefined);
      const tail = err.trim().split('\n').slice(-5).join('\n    ');
      resolve(`exit ${code ?? signal}${tail ? `:\n    ${tail}` : ''}`);
    });
  });
}

interface Bar {
  tick(failures: number): void;
  stop(): void;
}

function progressBar(total: number, quiet: boolean): Bar {
  if (quiet) return { tick: () => {}, stop: () => {} };
  const stream = process.stderr;
  if (!stream.isTTY) {
    let done = 0;
    const t0 = performance.now();
    return {
      tick(failures) {
        done++;
        const eta = ((performance.now() - t0) / done) * (total - done) / 1000;
        stream.write(`runs ${done}/${total}  eta ${eta.toFixed(0)} s  failures ${failures}\n`);
      },
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    { stream, format: 'runs {value}/{total} [{bar}] eta {eta_formatted}  failures {failures}', hideCursor: true, etaBuffer: 20 },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { failures: 0 });
  return { tick: (failures) => bar.increment(1, { failures }), stop: () => bar.stop() };
}

/** Runs the plan's runs (those of the shard) that are not done yet. */
export async function executePlan(plan: RunnablePlan, o: ExecuteOptions): Promise<ExecuteResult> {
  const mine = shardRuns(plan.runs, o.shard);
  const actions = mine.map((r) => ({ run: r, action: actionFor(r, plan, o.dir, o.force) }));
  const result: ExecuteResult = { planned: mine.length, skipped: [], ran: [], resumed: [], failures: [], interrupted: false };
  let validated = !o.validate;
  const validate = (run: PlannedRun) => {
    if (validated) return;
    validated = true;
    o.validate!(run, path.join(o.dir, run.dir));
  };
  for (const { run, action } of actions) {
    if (action.kind === 'fresh' && action.redo) process.stderr.write(`run ${run.id} is marked completed but ${action.redo}; running it again\n`);
    if (action.kind === 'skip') {
      result.skipped.push(run.id);
      validate(run);
    }
    if (action.kind === 'busy') result.failures.push({ id: run.id, message: action.why });
  }
  const todo = actions.filter((a) => a.action.kind === 'resume' || a.action.kind === 'fresh');
  const bar = progressBar(todo.length, o.quiet);
  const children = new Set<ReturnType<typeof spawn>>();
  const cache = SharedLlmCache.of(o.dir, plan.json.options.llm);
  let stop: Error | undefined;
  const onSignal = () => {
    result.interrupted = true;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let next = 0;
  const worker = async () => {
    while (next < todo.length && !stop && !result.interrupted) {
      const { run, action } = todo[next++];
      const message = await runChild(childArgs(run, plan, o, action, cache), children);
      if (message === undefined) {
        cache?.absorb(path.join(o.dir, run.dir));
        result.ran.push(run.id);
        if (action.kind === 'resume') result.resumed.push(run.id);
        try {
          validate(run);
        } catch (err) {
          stop = err as Error;
          // The outcomes cannot be computed: stop the others (they stop at a step boundary, resumable).
          for (const c of children) c.kill('SIGTERM');
        }
      } else if (!result.interrupted && !stop) {
        result.failures.push({ id: run.id, message });
      }
      bar.tick(result.failures.length);
      o.onDone?.(run);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(o.jobs, todo.length) }, worker));
  } finally {
    bar.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (stop) throw stop;
  // Report failures in plan order, whatever order they finished in.
  const order = new Map(plan.runs.map((r) => [r.id, r.index]));
  result.failures.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  return result;
}
