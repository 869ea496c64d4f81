/**
 * Conducting an experiment: plan it, hold its directory, run every run (or one shard of them) and
 * write its tables when all are complete. `socsim experiment FILE`, `socsim validate` and the
 * `experiment` function of the API all come through here; they differ only in how they report.
 */
import path from 'node:path';
import { InputError } from '../../sim-core/errors.ts';
import type { BackendName } from '../../sim-core/backend.ts';
import { llmOptions, setupLlm } from '../../llm-archetypes/setup.ts';
import { lockDirectory } from '../run/dirLock.ts';
import { llmRunOptions } from '../run/llmFlags.ts';
import { loadExperiment, type Experiment } from './defineExperiment.ts';
import { planExperiment, type ExperimentJson, type Plan, type PlannedRun } from './experimentPlan.ts';
import { executePlan, prepareExperimentDir, writeFileAtomic, type Shard } from './experimentRun.ts';
import { writeTables, type EffectRow } from './experimentTables.ts';
import { evaluateOutcome, openRun } from './outcomes.ts';

export interface ExperimentRequest {
  /** Experiment directory (default runs/<experiment name>). */
  out?: string;
  seeds?: number;
  /** Only these arms (the reference among them). */
  arms?: string[];
  /** Runs at once (child processes). */
  jobs?: number;
  threads?: number;
  backend?: BackendName;
  agents?: number;
  hours?: number;
  steps?: number;
  stepSeconds?: number;
  /** `i/N`: only this shard of the runs (no tables; merge with `socsim experiment merge`). */
  shard?: string;
  force?: boolean;
  /** No progress bar on stderr. */
  quiet?: boolean;
}

/** `i/N` or `auto/N` (i from JOB_COMPLETION_INDEX, or SLURM_ARRAY_TASK_ID minus SLURM_ARRAY_TASK_MIN). */
export function parseShard(raw: string, env: NodeJS.ProcessEnv = process.env): Shard {
  const m = /^(auto|\d+)\/(\d+)$/.exec(raw.trim());
  if (!m) throw new InputError(`--shard expects i/N or auto/N, e.g. 0/4 (got "${raw}")`);
  const count = Number(m[2]);
  let index: number;
  if (m[1] === 'auto') {
    const k8s = env.JOB_COMPLETION_INDEX;
    const slurm = env.SLURM_ARRAY_TASK_ID;
    if (k8s !== undefined && k8s !== '') index = Number(k8s);
    else if (slurm !== undefined && slurm !== '') index = Number(slurm) - Number(env.SLURM_ARRAY_TASK_MIN || 0);
    else throw new InputError('--shard auto/N reads the shard index from JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID (Slurm array), and neither is set; give it as --shard i/N');
  } else index = Number(m[1]);
  if (!(count >= 1) || !Number.isInteger(index) || index < 0 || index >= count) throw new InputError(`--shard ${raw}: the index must be a whole number from 0 to ${count - 1} and N at least 1 (got index ${index})`);
  return { index, count };
}

/** Checks every outcome on one finished run, so a mistyped metric or table stops the experiment early. */
function outcomeCheck(e: Experiment) {
  return (run: PlannedRun, dir: string) => {
    const view = openRun(dir);
    for (const [name, o] of Object.entries(e.outcomes)) evaluateOutcome(name, o, view, run.id);
  };
}

/** The flags of `socsim experiment FILE` (commander's parsed values); `socsim validate` passes its own. */
export interface ExperimentFlags extends ExperimentRequest {
  /** The `--llm*` values (flags.ts), when given. */
  llm?: string;
  [llmOption: string]: string | string[] | number | boolean | undefined;
}

/** What `conductExperiment` did: the runs it ran, skipped or lost, and the effects when it wrote the tables. */
export interface ExperimentResult {
  /** The experiment directory (absolute). */
  dir: string;
  /** How the user named it (`--out`, else runs/<name>). */
  label: string;
  json: ExperimentJson;
  planned: number;
  ran: string[];
  resumed: string[];
  skipped: string[];
  failures: Array<{ id: string; message: string }>;
  interrupted: boolean;
  shard?: Shard;
  /** The effects table, when every run is complete and no shard was asked for (the tables are written). */
  effects?: EffectRow[];
}

/**
 * Plans, runs and tabulates an experiment file (`socsim experiment FILE`, and the `experiment`
 * function of the API). llmFlags: the `--llm*` flags every run gets. Prints only the progress bar
 * (unless `quiet`); the caller reports.
 */
export async function conductExperiment(fileArg: string, opts: ExperimentFlags, llmFlags: string[]): Promise<ExperimentResult> {
  if (opts.hours !== undefined && opts.steps !== undefined) throw new InputError('give --hours or --steps, not both');
  const shard = opts.shard === undefined ? undefined : parseShard(opts.shard);
  const { experiment: e, file } = await loadExperiment(fileArg);
  // Fail fast on the LLM configuration (no key, no server, a bad cache), as `run` does, before
  // any run starts; every run checks it again.
  const llm = llmOptions.safeParse(llmRunOptions(opts as Parameters<typeof llmRunOptions>[0]));
  if (!llm.success) throw new InputError(`--llm options: ${llm.error.issues[0].path.join('.')}: ${llm.error.issues[0].message}`);
  await setupLlm(llm.data);
  const plan = await planExperiment(e, file, fileArg, { seeds: opts.seeds, arms: opts.arms, agents: opts.agents, hours: opts.hours, steps: opts.steps, stepSeconds: opts.stepSeconds, llm: llmFlags });
  const label = opts.out ?? path.join('runs', e.name);
  const dir = path.resolve(label);
  // Shards share a directory by design (shared lock); a whole experiment has it to itself.
  const lock = lockDirectory(dir, { mode: shard ? 'shared' : 'exclusive', label, what: `socsim experiment ${fileArg}${shard ? ` --shard ${shard.index}/${shard.count}` : ''}` });
  try {
    return await conductLocked(e, plan, dir, label, shard, opts);
  } finally {
    lock.release();
  }
}

async function conductLocked(e: Experiment, plan: Plan, dir: string, label: string, shard: Shard | undefined, opts: ExperimentFlags): Promise<ExperimentResult> {
  prepareExperimentDir(plan, { dir, label, force: !!opts.force });
  if (shard) writeFileAtomic(path.join(dir, `shard-${shard.index}-of-${shard.count}.json`), JSON.stringify({ shard: shard.index, count: shard.count }) + '\n');
  const r = await executePlan(plan, { dir, label, jobs: opts.jobs ?? 1, threads: opts.threads ?? 1, backend: opts.backend, shard, force: !!opts.force, quiet: !!opts.quiet, validate: outcomeCheck(e) });
  const result: ExperimentResult = { dir, label, json: plan.json, planned: r.planned, ran: r.ran, resumed: r.resumed, skipped: r.skipped, failures: r.failures, interrupted: r.interrupted, shard };
  if (!r.interrupted && r.failures.length === 0 && !shard) result.effects = writeTables(plan.json, e.outcomes, (run) => path.join(dir, run.dir), dir);
  return result;
}
