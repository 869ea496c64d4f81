/**
 * `socsim experiment FILE` (plan, run, tables), `socsim experiment merge DIR...` (tables from
 * shards) and `socsim describe SCENARIO_OR_EXPERIMENT`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { InputError } from '../../sim-core/errors.ts';
import { loadExperiment, type Experiment } from '../experiment/defineExperiment.ts';
import { planExperiment, readExperimentJson, samePlan, type ExperimentJson, type Plan, type PlannedRun } from '../experiment/experimentPlan.ts';
import { executePlan, prepareExperimentDir, runComplete, writeFileAtomic, type Shard } from '../experiment/experimentRun.ts';
import { formatEffects, writeTables, type EffectRow } from '../experiment/experimentTables.ts';
import { evaluateOutcome, openRun } from '../experiment/outcomes.ts';
import { readRunManifest } from '../run/runDirectory.ts';
import { describeTarget } from './describe.ts';
import { addLlmOptions, addRunSetOptions, intFlag, llmChildFlags } from './flags.ts';
import { llmOptions, setupLlm } from '../../llm-archetypes/setup.ts';
import { conductExperiment, parseShard, type ExperimentFlags } from '../experiment/conduct.ts';
import { LOCK_ENTRY, lockDirectory } from '../run/dirLock.ts';

/** `--arms a,b,c` as a list (names checked against the experiment when it is planned). */
function armsFlag(raw: string): string[] {
  const names = raw.split(',').map((a) => a.trim());
  if (names.some((a) => a === '')) throw new InputError(`--arms expects arm names separated by commas, e.g. --arms true,false (got "${raw}")`);
  return [...new Set(names)];
}

const rel = (p: string) => {
  const r = path.relative(process.cwd(), p);
  return r === '' ? '.' : r.startsWith('..') ? p : r;
};

/** Prints the effects, the files and the serve command of tables written to `outDir`. */
function printTables(json: ExperimentJson, effects: EffectRow[], outDir: string, report: ExperimentReport = formatEffects): void {
  const where = rel(outDir);
  process.stdout.write(
    report(json, effects, outDir) +
      `\nfiles: ${where}/ (experiment.json, summary.arrow, effects.arrow, series.arrow, runs/<id>/)\n` +
      `dashboard: npx socsim serve ${where}\n`,
  );
}

/** What a finished experiment reports: by default its effects table (formatEffects). */
export type ExperimentReport = (json: ExperimentJson, effects: EffectRow[], dir: string) => string;

/** `socsim experiment FILE`: conducts it, then prints what happened, the effects and where the files are. */
export async function runExperimentFile(fileArg: string, opts: ExperimentFlags, llmFlags: string[], report: ExperimentReport = formatEffects): Promise<void> {
  const r = await conductExperiment(fileArg, opts, llmFlags);
  const shardText = r.shard ? ` (shard ${r.shard.index}/${r.shard.count})` : '';
  process.stdout.write(`${r.planned} runs${shardText}: ${r.ran.length} ran${r.resumed.length ? ` (${r.resumed.length} resumed from a checkpoint)` : ''}, ${r.skipped.length} already complete, ${r.failures.length} failed\n`);
  if (r.interrupted) {
    process.stdout.write(`interrupted; run the same command again to finish (completed runs are kept, interrupted ones resume)\n`);
    process.exitCode = 130;
    return;
  }
  if (r.failures.length > 0) {
    process.stderr.write(`failed runs:\n${r.failures.map((f) => `  ${f.id}: ${f.message}`).join('\n')}\nno tables written; fix the cause and run the same command again (completed runs are skipped)\n`);
    process.exitCode = 1;
    return;
  }
  if (r.shard) {
    process.stdout.write(`a shard writes no tables; when every shard is done: npx socsim experiment merge ${r.label}\n`);
    return;
  }
  printTables(r.json, r.effects!, r.dir, report);
}

export function registerExperimentCommands(program: Command): void {
  const experiment = program
    .command('experiment')
    .description('Run an experiment file (arms x grid x seeds of one scenario) and write its tables; or merge shards (socsim experiment merge)');

  const runCmd = experiment
    .command('run', { isDefault: true })
    .description('Plan and run an experiment (also: socsim experiment FILE ...): runs are child `socsim run` processes under DIR/runs/<id>; a re-run skips completed runs and resumes interrupted ones; then writes summary.arrow, effects.arrow and series.arrow')
    .argument('<file>', 'experiment file (.ts, export default defineExperiment({...}))')
    .option('--out <dir>', 'experiment directory (default: runs/<experiment name>)')
    .option('--seeds <n>', 'replications: seeds 1..n for every arm (default: the experiment\'s)', intFlag('--seeds', 1, 100_000))
    .option('--arms <names>', 'run only these arms, comma-separated, the reference among them (default: every arm)', armsFlag);
  addRunSetOptions(runCmd)
    .option('--shard <i/N>', 'run only the runs whose plan index is i mod N (auto/N: i from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID); a shard writes no tables: merge them with socsim experiment merge')
    .option('--force', 'replace another plan in DIR, and run every run again (removes only files an experiment or a run writes)')
    .option('--quiet', 'no progress bar');
  addLlmOptions(runCmd)
    .option('--plan', 'print the LLM plan summed over every run (arms x grid x seeds; how many are complete in DIR already) and exit, calling no model and writing nothing')
    .action(async (fileArg: string, opts, cmd: Command) => {
      if (opts.plan) {
        const { planExperimentLlm } = await import('../experiment/experimentLlmPlan.ts');
        const { planText } = await import('./planOutput.ts');
        const p = await planExperimentLlm(fileArg, opts, llmChildFlags(cmd));
        process.stdout.write(planText(p.all, `${p.runs} runs`));
        if (p.all) process.stdout.write('  the arms of a seed share replies (DIR/llm-cache.jsonl): what they ask alike is sent once, so the server gets at most these calls\n');
        if (p.done > 0) process.stdout.write(`${p.done} of ${p.runs} runs are complete in ${rel(path.resolve(opts.out ?? path.join('runs', p.name)))} already${p.remaining ? `; the other ${p.runs - p.done}: ${p.remaining.calls.toLocaleString('en-US')} calls${p.remaining.costUsd !== undefined ? `, at most $${p.remaining.costUsd.toFixed(2)}` : ''}` : ''}\n`);
        return;
      }
      await runExperimentFile(fileArg, opts, llmChildFlags(cmd));
    });
  // `socsim experiment FILE` is `run`, the default subcommand, so its help shows run's options too.
  experiment.addHelpText('after', () => `\nsocsim experiment FILE [options] is socsim experiment run FILE [options]:\n\n${runCmd.helpInformation()}`);

  experiment
    .command('merge')
    .description('Write the tables of an experiment run in shards: DIR... hold the same plan (one shared directory, or one per shard); every run must be complete in one of them')
    .argument('<dirs...>', 'experiment directories written with --shard')
    .option('--out <dir>', 'where the tables go (default: the first DIR); runs are read where they are, nothing is copied')
    .action(async (dirArgs: string[], opts) => {
      const dirs = dirArgs.map((d) => path.resolve(d));
      const jsons = dirs.map((d, i) => {
        const j = readExperimentJson(d);
        if (!j) throw new InputError(`${dirArgs[i]} holds no experiment.json; give directories written by socsim experiment --shard`);
        return j;
      });
      const json = jsons[0];
      jsons.forEach((j, i) => {
        if (!samePlan(json, j)) throw new InputError(`${dirArgs[i]} holds another plan than ${dirArgs[0]} (experiment.json differs); merge only shards of one experiment`);
      });
      const fileArg = fs.existsSync(json.file_abs) ? json.file_abs : json.file;
      const { experiment: e, file } = await loadExperiment(fileArg);
      const o = json.options;
      const plan: Plan = await planExperiment(e, file, fileArg, { seeds: json.seeds.length, arms: json.arms, agents: o.agents, steps: o.steps, llm: o.llm });
      if (!samePlan(plan.json, json)) throw new InputError(`${fileArg} no longer gives the plan in ${dirArgs[0]}/experiment.json (it changed since the shards ran); run the experiment again`);
      const where = new Map<string, string>();
      const missing: PlannedRun[] = [];
      for (const run of plan.runs) {
        const d = dirs.find((x) => runComplete(readRunManifest(path.join(x, run.dir)), run, plan, path.join(x, run.dir)));
        if (d) where.set(run.id, path.join(d, run.dir));
        else missing.push(run);
      }
      if (missing.length > 0) throw new InputError(missingMessage(missing, dirs, dirArgs, json));
      const outDir = path.resolve(opts.out ?? dirArgs[0]);
      const lock = lockDirectory(outDir, { label: opts.out ?? dirArgs[0], what: `socsim experiment merge ${dirArgs.join(' ')}` });
      try {
      if (!dirs.includes(outDir)) {
        const there = fs.existsSync(outDir) ? readExperimentJson(outDir) : undefined;
        if (there && !samePlan(there, json)) throw new InputError(`${opts.out} holds another plan; choose another --out`);
        if (!there && fs.readdirSync(outDir).some((f) => !LOCK_ENTRY.test(f))) throw new InputError(`${opts.out} is not empty and holds no experiment.json; choose a new or empty directory with --out`);
        writeFileAtomic(path.join(outDir, 'experiment.json'), JSON.stringify(json, null, 2) + '\n');
      }
      printTables(json, writeTables(json, e.outcomes, (run) => where.get(run.id)!, outDir), outDir);
      } finally {
        lock.release();
      }
    });

  program
    .command('describe')
    .description('Describe a scenario (every parameter: type, default, doc) or an experiment file (arms, reference, seeds, grid, outcomes, runs)')
    .argument('<scenario-or-experiment>', 'a bundled scenario name, a scenario .ts file or an experiment .ts file')
    .action(async (arg: string) => {
      process.stdout.write(await describeTarget(arg));
    });
}

/** One line naming the missing runs and the shard commands that produce them. */
function missingMessage(missing: PlannedRun[], dirs: string[], dirArgs: string[], json: ExperimentJson): string {
  const counts = new Set<number>();
  const shardDir = new Map<number, string>();
  dirs.forEach((d, k) => {
    for (const f of fs.readdirSync(d)) {
      const m = /^shard-(\d+)-of-(\d+)\.json$/.exec(f);
      if (!m) continue;
      counts.add(Number(m[2]));
      if (!shardDir.has(Number(m[1]))) shardDir.set(Number(m[1]), dirArgs[k]);
    }
  });
  const ids = missing.slice(0, 20).map((r) => r.id).join(', ') + (missing.length > 20 ? ` and ${missing.length - 20} more` : '');
  const cmd = (extra: string, out: string = dirArgs[0]) => `socsim experiment ${json.file} --out ${out}${extra}`;
  let fix: string;
  if (counts.size === 1) {
    const n = [...counts][0];
    const shards = [...new Set(missing.map((r) => r.index % n))].sort((a, b) => a - b);
    fix = shards.map((i) => cmd(` --shard ${i}/${n}`, shardDir.get(i))).join(' ; ');
  } else fix = `${cmd('')} (runs only what is missing)`;
  return `${missing.length} of ${json.runs.length} planned runs are not complete in ${dirArgs.join(', ')}: ${ids}; produce them with: ${fix}`;
}
