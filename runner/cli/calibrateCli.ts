/** `socsim calibrate SCENARIO_OR_EXPERIMENT --target FILE.csv --fit NAME=LO..HI --match COLUMN --out DIR`. */
import path from 'node:path';
import { Command } from 'commander';
import { InputError } from '../../sim-core/errors.ts';
import { addLlmOptions, addRunSetOptions, intFlag, llmChildFlags, numFlag, parseSets } from './flags.ts';
import { parseMatch, readTarget } from '../calibrate/calibrationTarget.ts';
import { parseShard } from '../experiment/conduct.ts';
import { calibrationBase, checkFits, parseFit, sha256, type CalibrationJson } from '../calibrate/calibrationSetup.ts';

const collect = (v: string, prev: string[] = []) => [...prev, v];
const SIGMA0 = 0.3;

export function registerCalibrateCommand(program: Command): void {
  const cmd = program
    .command('calibrate')
    .description('Fit scenario parameters to an observed series: CMA-ES over the --fit ranges, minimising the NRMSE (RMSE / target range) between metrics column(s) and the target, averaged over seeds 1..N; writes DIR/calibration.arrow (every run), DIR/best.json and DIR/best/ (the best run with the target, for socsim serve); a re-run continues where it stopped')
    .argument('<scenario-or-experiment>', 'a bundled scenario, a scenario .ts file, or an experiment file (its reference arm, parameters and defaults are the base)')
    .requiredOption('--target <file>', 'CSV with a header step,COLUMN... (one column per --match, nothing else) and one row per step')
    .requiredOption('--fit <name=lo..hi>', 'a parameter to fit, named as --set names it, and its range (repeatable), e.g. beta=0.01..0.2 or platform.feedSize=10..60', collect)
    .requiredOption('--match <column[:weight]>', 'a metrics column to match against the target column of the same name (repeatable; weights default 1)', collect)
    .requiredOption('--out <dir>', 'calibration directory: new, empty, or this calibration (continued)')
    .option('--seeds <n>', 'seeds 1..n per evaluation, the same at every evaluation (common random numbers)', intFlag('--seeds', 1, 1000), 3)
    .option('--budget <n>', 'evaluations (parameter points) at most, in whole generations of the search; each costs --seeds runs', intFlag('--budget', 1), 60)
    .option('--seed <n>', 'seed of the search itself', intFlag('--seed', 0), 1)
    .option('--set <key=value>', 'a fixed parameter override for every run (repeatable), as for socsim run', collect, [])
    .option('--tolerance <x>', 'stop when the search\'s largest standard deviation is below x of a parameter\'s range', numFlag('--tolerance', 0), 1e-3)
    .option('--shard <i/N>', 'run only the runs of each generation whose index is i mod N, then wait for the other shards\' runs in the shared --out (auto/N: i from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID); every shard follows the same search, shard 0 writes the tables')
    .option('--force', 'replace another calibration in --out and run every run again')
    .option('--quiet', 'no progress output');
  addLlmOptions(addRunSetOptions(cmd)).action(async (arg: string, opts, c: Command) => {
    const matches = (opts.match as string[]).map(parseMatch);
    if (new Set(matches.map((m) => m.column)).size !== matches.length) throw new InputError('--match names a column twice; give each column once');
    const target = readTarget(opts.target, matches);
    const llm = llmChildFlags(c);
    const base = await calibrationBase(arg, { agents: opts.agents, hours: opts.hours, steps: opts.steps, stepSeconds: opts.stepSeconds, sets: parseSets(opts.set), llm });
    const fits = checkFits(base, (opts.fit as string[]).map(parseFit));
    const cal: CalibrationJson = {
      format: 'socsim-calibration/1',
      scenario: base.scenario.name,
      source: arg,
      base: base.base,
      fits,
      matches,
      target: { file: path.resolve(opts.target), sha256: sha256(opts.target) },
      seeds: Array.from({ length: opts.seeds }, (_, i) => i + 1),
      search: { method: 'cma-es', seed: opts.seed, lambda: 4 + Math.floor(3 * Math.log(fits.length)), sigma0: SIGMA0 },
      options: base.options,
    };
    const t0 = performance.now();
    const { calibrate } = await import('../calibrate/calibrate.ts'); // CMA-ES and ml-matrix load only here
    const r = await calibrate(base, cal, target, { dir: path.resolve(opts.out), label: opts.out, budget: opts.budget, jobs: opts.jobs, threads: opts.threads, backend: opts.backend, force: !!opts.force, quiet: !!opts.quiet, tolerance: opts.tolerance, shard: opts.shard === undefined ? undefined : parseShard(opts.shard) });
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    if (r.interrupted) {
      process.stdout.write(`interrupted after ${r.evaluations.length} evaluations; run the same command again to continue\n`);
      process.exitCode = 130;
      return;
    }
    const b = r.best!;
    const fmt = (v: number) => v.toPrecision(4);
    process.stdout.write(
      `${b.evaluations} evaluations (${b.runs} runs, ${b.generations} generations, stopped on ${b.stopped}) in ${secs} s\n` +
        // One seed gives no estimate of the seed noise: say so rather than print NaN.
        (Number.isFinite(b.loss_standard_error)
          ? `best loss (NRMSE) ${fmt(b.loss)}; seed noise: standard error ${fmt(b.loss_standard_error)}, a perfect model would score ${fmt(b.noise_nrmse)}\n` +
            Object.entries(b.parameters).map(([k, v]) => `  ${k} = ${fmt(v)}  (near-best ${b.near_best.ranges[k].map(fmt).join('..')}, ${b.near_best.count} evaluations within 2 standard errors)\n`).join('')
          : `best loss (NRMSE) ${fmt(b.loss)}; seed noise not estimated from one seed (--seeds 2 or more gives it, and the near-best ranges)\n` +
            Object.entries(b.parameters).map(([k, v]) => `  ${k} = ${fmt(v)}\n`).join('')) +
        `files: ${opts.out}/ (calibration.json, calibration.arrow, target.arrow, best.json, best/, runs/)\n` +
        `dashboard (target and fit): npx socsim serve ${path.join(opts.out, 'best')}\n`,
    );
  });
}
