/** `socsim calibrate SCENARIO_OR_EXPERIMENT (--target FILE.csv --match COLUMN | --moments FILE.json) --fit NAME=LO..HI --out DIR`. */
import path from 'node:path';
import { Command } from 'commander';
import { InputError } from '../../sim-core/errors.ts';
import { addLlmOptions, addRunSetOptions, intFlag, llmChildFlags, numFlag, parseSets } from './flags.ts';
import { parseMatch, readTarget } from '../calibrate/calibrationTarget.ts';
import { parseShard } from '../experiment/conduct.ts';
import { calibrationBase, checkFits, parseFit, sha256, type CalibrationJson } from '../calibrate/calibrationSetup.ts';
import { readMoments, type Moment } from '../calibrate/momentsFile.ts';
import { checkMoments, momentArms, type MomentContext } from '../calibrate/momentValues.ts';
import { formatMomentFits } from '../calibrate/momentLoss.ts';
import { loadExperiment } from '../experiment/defineExperiment.ts';
import { VALIDATE_EXPERIMENT } from '../analysis/validate.ts';

const collect = (v: string, prev: string[] = []) => [...prev, v];
const SIGMA0 = 0.3;

export function registerCalibrateCommand(program: Command): void {
  const cmd = program
    .command('calibrate')
    .description('Fit scenario parameters to an observed series and/or published moments: CMA-ES over the --fit ranges, minimising the NRMSE (RMSE / target range) between metrics column(s) and the target, and/or the moment loss (mean over moments of (simulated - published)^2 / sigma^2), of the means over seeds 1..N (the same seeds at every point); writes DIR/calibration.arrow (every run), DIR/best.json, DIR/moments.arrow (each moment at the best point) and DIR/best/ (the best run with the target, for socsim serve); a re-run continues where it stopped')
    .argument('<scenario-or-experiment>', 'a bundled scenario, a scenario .ts file, or an experiment file (its reference arm, parameters and defaults are the base)')
    .option('--target <file>', 'CSV with a header step,COLUMN... (one column per --match, nothing else) and one row per step')
    .requiredOption('--fit <name=lo..hi>', 'a parameter to fit, named as --set names it, and its range (repeatable), e.g. beta=0.01..0.2 or platform.feedSize=10..60', collect)
    .option('--match <column[:weight]>', 'with --target: a metrics column to match against the target column of the same name (repeatable; weights default 1)', collect, [])
    .option('--moments <file>', 'JSON file of published moments to fit ({"format": "socsim-moments/1", "moments": [...]}: experiment effects, validate patterns, run summaries, each with its published value and 95% interval or standard error; see docs/calibration.md)')
    .option('--series-weight <w>', 'with --target and --moments: the objective is the moment loss + w x NRMSE^2', numFlag('--series-weight', 0), 1)
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
    if (opts.target === undefined && opts.moments === undefined) throw new InputError('give --target FILE.csv (with --match COLUMN) or --moments FILE.json, or both: what the calibration fits');
    if ((opts.target === undefined) !== ((opts.match as string[]).length === 0)) throw new InputError(opts.target === undefined ? '--match names a column of the --target series; give --target FILE.csv too, or drop --match' : '--target needs --match COLUMN: the metrics column(s) to match against the target');
    const matches = (opts.match as string[]).map(parseMatch);
    if (new Set(matches.map((m) => m.column)).size !== matches.length) throw new InputError('--match names a column twice; give each column once');
    const target = opts.target === undefined ? undefined : readTarget(opts.target, matches);
    const moments: Moment[] | undefined = opts.moments === undefined ? undefined : readMoments(opts.moments);
    const llm = llmChildFlags(c);
    const base = await calibrationBase(arg, { agents: opts.agents, hours: opts.hours, steps: opts.steps, stepSeconds: opts.stepSeconds, sets: parseSets(opts.set), llm });
    const fits = checkFits(base, (opts.fit as string[]).map(parseFit));
    let context: MomentContext | undefined;
    if (moments) {
      const patterns = moments.some((m) => m.kind === 'pattern') ? (await loadExperiment(VALIDATE_EXPERIMENT)).experiment.outcomes : undefined;
      context = { reference: base.reference, arms: [base.reference, ...Object.keys(base.arms)], outcomes: base.outcomes, patterns };
      checkMoments(moments, context, opts.moments);
    }
    const cal: CalibrationJson = {
      format: 'socsim-calibration/1',
      scenario: base.scenario.name,
      source: arg,
      base: base.base,
      fits,
      matches,
      ...(target && { target: { file: path.resolve(opts.target), sha256: sha256(opts.target) } }),
      ...(moments && { moments: { file: path.resolve(opts.moments), sha256: sha256(opts.moments), series_weight: opts.seriesWeight, arms: momentArms(moments, context!).slice(1) } }),
      seeds: Array.from({ length: opts.seeds }, (_, i) => i + 1),
      search: { method: 'cma-es', seed: opts.seed, lambda: 4 + Math.floor(3 * Math.log(fits.length)), sigma0: SIGMA0 },
      options: base.options,
    };
    const t0 = performance.now();
    const { calibrate } = await import('../calibrate/calibrate.ts'); // CMA-ES and ml-matrix load only here
    const goal = { target, matches, moments: moments && { list: moments, context: context!, seriesWeight: opts.seriesWeight } };
    const r = await calibrate(base, cal, goal, { dir: path.resolve(opts.out), label: opts.out, budget: opts.budget, jobs: opts.jobs, threads: opts.threads, backend: opts.backend, force: !!opts.force, quiet: !!opts.quiet, tolerance: opts.tolerance, shard: opts.shard === undefined ? undefined : parseShard(opts.shard) });
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    if (r.interrupted) {
      process.stdout.write(`interrupted after ${r.evaluations.length} evaluations; run the same command again to continue\n`);
      process.exitCode = 130;
      return;
    }
    const b = r.best!;
    const fmt = (v: number) => v.toPrecision(4);
    const what = moments ? `moment loss${target ? ` + ${opts.seriesWeight} x NRMSE^2` : ''}` : 'NRMSE';
    const perfect = moments ? b.noise_moment_loss! + (target ? opts.seriesWeight * b.noise_nrmse! ** 2 : 0) : b.noise_nrmse!;
    process.stdout.write(
      `${b.evaluations} evaluations (${b.runs} runs, ${b.generations} generations, stopped on ${b.stopped}) in ${secs} s\n` +
        // One seed gives no estimate of the seed noise: say so rather than print NaN.
        (Number.isFinite(b.loss_standard_error)
          ? `best loss (${what}) ${fmt(b.loss)}; seed noise: standard error ${fmt(b.loss_standard_error)}, a perfect model would score ${fmt(perfect)}\n` +
            Object.entries(b.parameters).map(([k, v]) => `  ${k} = ${fmt(v)}  (near-best ${b.near_best.ranges[k].map(fmt).join('..')}, ${b.near_best.count} evaluations within 2 standard errors)\n`).join('')
          : `best loss (${what}) ${fmt(b.loss)}; seed noise not estimated from one seed (--seeds 2 or more gives it, and the near-best ranges)\n` +
            Object.entries(b.parameters).map(([k, v]) => `  ${k} = ${fmt(v)}\n`).join('')) +
        (b.moments ? `moments at the best point (mean over ${cal.seeds.length} seeds; contributions sum to the moment loss):\n${formatMomentFits(b.moments)}` : '') +
        `files: ${opts.out}/ (calibration.json, calibration.arrow, ${target ? 'target.arrow, ' : ''}${moments ? 'moments.arrow, moment-values/, ' : ''}best.json, best/, runs/)\n` +
        `dashboard (${target ? 'target and fit' : 'the best run'}): npx socsim serve ${path.join(opts.out, 'best')}\n`,
    );
  });
}
