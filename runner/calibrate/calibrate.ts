/**
 * `socsim calibrate`: a CMA-ES search (cmaes.ts) over the fitted parameters for the values under
 * which a metrics column (or several, weighted) reproduces an observed series, by NRMSE
 * (calibrationTarget.ts) of the mean over seeds 1..N, and/or the simulated moments match published
 * ones, by the moment loss (momentLoss.ts) of their means over seeds 1..N. Every evaluation is N
 * ordinary `socsim run` children per arm (experimentRun.ts's executePlan, `--jobs` at a time)
 * under DIR/runs/e<eval>-s<seed> (the reference arm) and DIR/runs/e<eval>-<arm>-s<seed> (another
 * arm of an experiment file that a moment reads), with their parameters in DIR/plans/. The seeds
 * are the same at every evaluation and in every arm (common random numbers), so the loss is a
 * deterministic function of the parameters.
 *
 * Resuming: the search is a pure function of `--seed` and the losses it is told, so a re-run with
 * the same calibration.json asks for the same runs in the same order; runs already complete are
 * skipped (their metrics.arrow is read again, and the moment values recorded in
 * DIR/moment-values/) and an interrupted one resumes from its checkpoint. A larger `--budget`
 * continues a finished calibration.
 *
 * Disk: only the runs of the best evaluation so far are kept whole; the others keep manifest.json
 * and metrics.arrow, all that resuming and the tables need (moments are measured, and their
 * values recorded, before a run is pruned).
 *
 * Files: calibration.json (settings), calibration.arrow (one row per run: eval, generation, each
 * fitted parameter, seed, that seed's loss, and the evaluation's objective), target.arrow (the
 * target series), moments.arrow (every moment at the best point: simulated mean and 95% t interval
 * over seeds, published value and interval, weight, contribution to the loss), best.json (best
 * parameters, loss, noise level, near-best spread, the moments as in moments.arrow) and best/, a
 * copy of the best evaluation's seed-1 run (reference arm) with target.arrow, for `socsim serve
 * DIR/best`.
 */
import fs from 'node:fs';
import path from 'node:path';
import cliProgress from 'cli-progress';
import { escapeControls, InputError } from '../../sim-core/errors.ts';
import { writeArrowFile, type ColumnData } from '../../sim-core/io/arrowFile.ts';
import { Cmaes } from './cmaes.ts';
import { executePlan, runComplete, writeFileAtomic, type RunnablePlan, type Shard } from '../experiment/experimentRun.ts';
import { effectiveStatus, readRunManifest } from '../run/runDirectory.ts';
import { planFile, type PlannedRun } from '../experiment/experimentPlan.ts';
import type { Match, Target } from './calibrationTarget.ts';
import { paramsAt, sameCalibration, valueAt, type CalibrationBase, type CalibrationJson, type Fit } from './calibrationSetup.ts';
import { evaluate, momentNoise, seedNoise, type Evaluation, type Goal } from './evaluation.ts';
import { momentFits, type MomentFit } from './momentLoss.ts';
import { makeDirectory } from '../../sim-core/io/makeDirectory.ts';
import { LOCK_ENTRY, lockDirectory } from '../run/dirLock.ts';

export interface CalibrateOptions {
  dir: string;
  label: string;
  budget: number;
  jobs: number;
  threads: number;
  backend?: string;
  force: boolean;
  quiet: boolean;
  /** Stop when the search distribution's largest standard deviation is below this, in box units. */
  tolerance: number;
  /**
   * Run only the runs of each generation whose index is i mod N, then wait until the other shards'
   * runs of the generation are complete (a shared DIR), so every shard follows the same search.
   * Shard 0 (or an unsharded run) writes the tables and best/.
   */
  shard?: Shard;
}

/** Seconds between looks at the other shards' runs. */
const POLL_SECONDS = 1;

export { readSeries, type Evaluation, type Goal } from './evaluation.ts';

export interface BestJson {
  parameters: Record<string, number>;
  loss: number;
  eval: number;
  evaluations: number;
  runs: number;
  generations: number;
  stopped: 'budget' | 'tolerance';
  /**
   * Standard error of the loss from seed noise at the best point: of the seed-mean series in NRMSE
   * units (a series target alone), else of the moment loss (evaluation.ts's momentNoise).
   */
  loss_standard_error: number;
  /** With a series target: the NRMSE a perfect model's N-seed mean would have against one independent realisation. */
  noise_nrmse?: number;
  /** With moments: the moment loss a perfect model's N-seed means would score on average from seed noise alone. */
  noise_moment_loss?: number;
  /** With moments: the moment loss and the series NRMSE (with a series target) that make up `loss`. */
  moment_loss?: number;
  nrmse?: number;
  /** With moments: each moment at the best point. */
  moments?: MomentFit[];
  /** Per parameter: min and max over the evaluations within 2 standard errors of the best loss. */
  near_best: { count: number; threshold: number; ranges: Record<string, [number, number]> };
  /** CMA-ES's final mean and per-parameter standard deviation, in parameter units. */
  search: { mean: Record<string, number>; sd: Record<string, number> };
  run: string;
}

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

/** A run's id: e<eval>-s<seed> in the reference arm, e<eval>-<arm>-s<seed> in another. */
const runIdOf = (ev: number, seed: number, arm?: string) => `e${String(ev).padStart(4, '0')}${arm === undefined ? '' : `-${arm}`}-s${seed}`;

/** The arms an evaluation runs: the reference (undefined), then the others the moments read. */
const armsOf = (cal: CalibrationJson): Array<string | undefined> => [undefined, ...(cal.moments?.arms ?? [])];

/** Where an evaluation's moment values are recorded (read back on resuming, once its runs are pruned). */
const valuesFile = (dir: string, ev: number) => path.join(dir, 'moment-values', `e${String(ev).padStart(4, '0')}.json`);

/** Removes everything but manifest.json and metrics.arrow from a finished evaluation run. */
/**
 * Keeps only a run's manifest and metrics. Shards sharing DIR prune the same runs at the same
 * time: each leaves the others' temporary manifest writes alone and writes its own under a name
 * of its own (writeFileAtomic), with the same content.
 */
function prune(runDir: string): void {
  if (!fs.existsSync(runDir)) return;
  for (const f of fs.readdirSync(runDir)) if (f !== 'manifest.json' && f !== 'metrics.arrow' && !/^manifest\.json\..*\.tmp$/.test(f)) fs.rmSync(path.join(runDir, f), { recursive: true, force: true });
  // The completion record now lists what is kept, so a re-run still counts the run as done.
  const m = readRunManifest(runDir);
  const kept = m?.file_bytes?.['metrics.arrow'];
  if (kept !== undefined && Object.keys(m!.file_bytes!).length > 1) writeFileAtomic(path.join(runDir, 'manifest.json'), JSON.stringify({ ...m, file_bytes: { 'metrics.arrow': kept } }, null, 2) + '\n');
}

function writeTables(dir: string, cal: CalibrationJson, evals: Evaluation[]): void {
  const rows = evals.flatMap((e) => cal.seeds.map((seed, j) => ({ e, seed, j })));
  const cols: ColumnData[] = [
    { name: 'eval', type: 'i32', values: Int32Array.from(rows, (r) => r.e.eval) },
    { name: 'generation', type: 'i32', values: Int32Array.from(rows, (r) => r.e.generation) },
    ...cal.fits.map((f, i): ColumnData => ({ name: f.name, type: 'f64', values: Float64Array.from(rows, (r) => r.e.values[i]) })),
    { name: 'seed', type: 'i32', values: Int32Array.from(rows, (r) => r.seed) },
    { name: 'loss', type: 'f64', values: Float64Array.from(rows, (r) => r.e.seedLoss[r.j]) },
    { name: 'objective', type: 'f64', values: Float64Array.from(rows, (r) => r.e.objective) },
  ];
  const what = cal.moments
    ? `moment loss (1/K) sum w_i (s_i - t_i)^2, w_i = 1/sigma_i^2${cal.target ? ` + ${cal.moments.series_weight} NRMSE^2` : ''}; loss: of that seed's values; objective: of the means over seeds`
    : 'NRMSE (RMSE / target range), weighted over matched columns; objective: of the mean series over seeds';
  writeArrowFile(path.join(dir, 'calibration.arrow'), cols, rows.length, { loss: what });
}

/** moments.arrow: every moment's fit at the best point. */
function writeMoments(file: string, fits: MomentFit[]): void {
  const f64 = (name: string, f: (m: MomentFit) => number): ColumnData => ({ name, type: 'f64', values: Float64Array.from(fits, f) });
  writeArrowFile(file, [
    { name: 'moment', type: 'utf8', values: fits.map((m) => m.id) },
    { name: 'kind', type: 'utf8', values: fits.map((m) => m.kind) },
    { name: 'n', type: 'i32', values: Int32Array.from(fits, (m) => m.n) },
    f64('value', (m) => m.value), f64('ci_low', (m) => m.ci[0]), f64('ci_high', (m) => m.ci[1]),
    f64('target', (m) => m.target), f64('target_low', (m) => m.target_ci[0]), f64('target_high', (m) => m.target_ci[1]),
    f64('sigma', (m) => m.sigma), f64('weight', (m) => m.weight), f64('contribution', (m) => m.contribution),
    { name: 'source', type: 'utf8', values: fits.map((m) => `${m.source.paper}, ${m.source.where}`) },
  ], fits.length);
}

function writeTarget(file: string, target: Target, matches: Match[]): void {
  writeArrowFile(file, [{ name: 'step', type: 'i32', values: Int32Array.from(target.steps) }, ...matches.map((m): ColumnData => ({ name: m.column, type: 'f64', values: Float64Array.from(target.values[m.column]) }))], target.steps.length);
}

function progress(total: number, quiet: boolean) {
  if (quiet) return { tick: () => {}, generation: (_: string) => {}, stop: () => {} };
  if (!process.stderr.isTTY) return { tick: () => {}, generation: (line: string) => process.stderr.write(line + '\n'), stop: () => {} };
  const bar = new cliProgress.SingleBar({ stream: process.stderr, format: 'runs {value}/{total} [{bar}] eta {eta_formatted}  {info}', hideCursor: true, etaBuffer: 50 }, cliProgress.Presets.shades_classic);
  bar.start(total, 0, { info: '' });
  let info = '';
  return { tick: () => bar.increment(1, { info }), generation: (line: string) => { info = line; bar.update({ info }); }, stop: () => bar.stop() };
}

/** Refuses a DIR that is not new, empty or this calibration (unless `force`); writes calibration.json. */
function prepareDir(cal: CalibrationJson, o: CalibrateOptions): void {
  const file = path.join(o.dir, 'calibration.json');
  if (fs.existsSync(o.dir) && !fs.statSync(o.dir).isDirectory()) throw new InputError(`--out ${o.label} is not a directory`);
  if (fs.existsSync(file)) {
    let old: CalibrationJson;
    try {
      old = JSON.parse(fs.readFileSync(file, 'utf8')) as CalibrationJson;
    } catch (err) {
      throw new InputError(`${path.join(o.label, 'calibration.json')} is not valid JSON (${escapeControls((err as Error).message)}); pass --force to replace the calibration, or choose another --out`);
    }
    if (!sameCalibration(old, cal) && !o.force) throw new InputError(`${o.label} holds another calibration (scenario, base, fits, matches, target, seeds, search seed or run options differ); pass --force to replace it, or choose another --out`);
  } else if (fs.existsSync(o.dir)) {
    // Another shard may be creating this very calibration: its first entries are no obstacle.
    const foreign = fs.readdirSync(o.dir).find((f) => !/^(calibration\.json\..*\.tmp|plans|runs|moment-values)$/.test(f) && !LOCK_ENTRY.test(f));
    if (foreign !== undefined) throw new InputError(`--out ${o.label} is not empty (${foreign}) and holds no calibration.json; choose a new or empty directory`);
  }
  makeDirectory(o.dir);
  if (o.force && !o.shard) for (const f of ['calibration.arrow', 'best.json', 'target.arrow', 'moments.arrow', 'moment-values']) fs.rmSync(path.join(o.dir, f), { recursive: true, force: true });
  writeFileAtomic(file, json(cal));
  for (const d of ['plans', 'runs', ...(cal.moments ? ['moment-values'] : [])]) makeDirectory(path.join(o.dir, d));
}

/** Waits until every run of `plan` is complete (other shards run them); false when interrupted. */
async function barrier(plan: RunnablePlan, o: CalibrateOptions, say: (line: string) => void): Promise<boolean> {
  let stop = false;
  const onSignal = () => (stop = true);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    let said = false;
    for (;;) {
      const waiting = plan.runs.filter((r) => {
        const m = readRunManifest(path.join(o.dir, r.dir));
        if (m && effectiveStatus(m) === 'failed') throw new Error(`run ${r.id} (another shard's) failed: ${m.error ?? 'see its manifest'}; fix the cause and start the shards again`);
        return !runComplete(m, r, plan, path.join(o.dir, r.dir));
      });
      if (waiting.length === 0) return true;
      if (stop) return false;
      if (!said) say(`waiting for ${waiting.length} runs of other shards (${waiting.slice(0, 3).map((r) => r.id).join(', ')}${waiting.length > 3 ? ', ...' : ''})`);
      said = true;
      await new Promise((res) => setTimeout(res, POLL_SECONDS * 1000));
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

export interface CalibrateResult {
  best?: BestJson;
  evaluations: Evaluation[];
  interrupted: boolean;
}

export async function calibrate(b: CalibrationBase, cal: CalibrationJson, goal: Goal, o: CalibrateOptions): Promise<CalibrateResult> {
  const lambda = cal.search.lambda;
  if (Math.floor(o.budget / lambda) < 1) throw new InputError(`--budget ${o.budget} is smaller than one generation of the search (${lambda} evaluations); give --budget ${lambda} or more`);
  // Shards share the directory by design (shared lock); a whole calibration has it to itself.
  const lock = lockDirectory(o.dir, { mode: o.shard ? 'shared' : 'exclusive', label: o.label, what: `socsim calibrate${o.shard ? ` --shard ${o.shard.index}/${o.shard.count}` : ''}` });
  try {
    return await calibrateLocked(b, cal, goal, o);
  } finally {
    lock.release();
  }
}

/**
 * Evaluates a point from its runs; with moments, their values are recorded (DIR/moment-values/)
 * before any run is pruned and read back from there on resuming. Shard 0 measures them; the other
 * shards wait for its record, so no shard reads a run another has pruned.
 */
async function evaluatePoint(head: Pick<Evaluation, 'eval' | 'generation' | 'values'>, cal: CalibrationJson, goal: Goal, o: CalibrateOptions, writer: boolean): Promise<Evaluation | undefined> {
  const runDir = (arm: string | undefined, seed: number) => path.join(o.dir, 'runs', runIdOf(head.eval, seed, arm));
  const runId = (arm: string | undefined, seed: number) => runIdOf(head.eval, seed, arm);
  if (!goal.moments) return evaluate(head, cal.seeds, goal, runDir, runId);
  const file = valuesFile(o.dir, head.eval);
  for (;;) {
    if (fs.existsSync(file)) return evaluate(head, cal.seeds, goal, runDir, runId, (JSON.parse(fs.readFileSync(file, 'utf8')) as { moments: Array<Array<number | null>> }).moments);
    if (writer) {
      const e = evaluate(head, cal.seeds, goal, runDir, runId);
      // JSON has no NaN or Infinity: non-finite values are written as null and read back as NaN.
      writeFileAtomic(file, JSON.stringify({ moments: e.moments }) + '\n');
      return e;
    }
    if (await interruptibleSleep()) return undefined;
  }
}

/** Waits POLL_SECONDS; true when interrupted meanwhile. */
async function interruptibleSleep(): Promise<boolean> {
  let stop = false;
  const onSignal = () => (stop = true);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  await new Promise((res) => setTimeout(res, POLL_SECONDS * 1000));
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  return stop;
}

async function calibrateLocked(b: CalibrationBase, cal: CalibrationJson, goal: Goal, o: CalibrateOptions): Promise<CalibrateResult> {
  const { fits, seeds } = cal;
  const lambda = cal.search.lambda;
  const generations = Math.floor(o.budget / lambda);
  const arms = armsOf(cal);
  prepareDir(cal, o);
  const writer = !o.shard || o.shard.index === 0;
  if (writer && goal.target) writeTarget(path.join(o.dir, 'target.arrow'), goal.target, goal.matches);
  const es = new Cmaes({ n: fits.length, seed: cal.search.seed, lambda, sigma: cal.search.sigma0 });
  const evals: Evaluation[] = [];
  let best: Evaluation | undefined;
  const bar = progress(generations * lambda * seeds.length * arms.length, o.quiet);
  let stopped: BestJson['stopped'] = 'budget';
  let interrupted = false;
  const pruneEval = (ev: number) => {
    for (const arm of arms) for (const seed of seeds) prune(path.join(o.dir, 'runs', runIdOf(ev, seed, arm)));
  };
  try {
    for (let g = 0; g < generations; g++) {
      if (es.spread() < o.tolerance) {
        stopped = 'tolerance';
        break;
      }
      const points = es.ask();
      const values = points.map((u) => fits.map((f, i) => valueAt(f, u[i])));
      const runs: PlannedRun[] = [];
      values.forEach((v, k) => {
        const ev = g * lambda + k;
        for (const arm of arms) {
          const { overrides, params } = paramsAt(b, fits, v, arm);
          for (const seed of seeds) {
            const id = runIdOf(ev, seed, arm);
            runs.push({ id, arm: arm ?? 'calibration', grid: {}, seed, dir: `runs/${id}`, index: runs.length, overrides, params });
            const pf = planFile(o.dir, id);
            if (!fs.existsSync(pf) || fs.readFileSync(pf, 'utf8') !== json(overrides)) writeFileAtomic(pf, json(overrides));
          }
        }
      });
      const plan: RunnablePlan = { scenarioArg: b.scenarioArg, plugins: b.plugins, json: { options: cal.options }, runs };
      const r = await executePlan(plan, { dir: o.dir, label: o.label, jobs: o.jobs, threads: o.threads, backend: o.backend, force: o.force, quiet: true, shard: o.shard, onDone: bar.tick });
      for (let k = 0; k < r.skipped.length; k++) bar.tick();
      if (r.interrupted) {
        interrupted = true;
        break;
      }
      if (r.failures.length > 0) throw new Error(`${r.failures.length} runs failed; fix the cause and run the same command again (completed runs are kept):\n  ${r.failures.map((f) => `${f.id}: ${f.message}`).join('\n  ')}`);
      if (o.shard && !(await barrier(plan, o, bar.generation))) {
        interrupted = true;
        break;
      }
      const gen: Evaluation[] = [];
      for (let k = 0; k < values.length; k++) {
        const e = await evaluatePoint({ eval: g * lambda + k, generation: g, values: values[k] }, cal, goal, o, writer);
        if (!e) break;
        gen.push(e);
      }
      if (gen.length < values.length) {
        interrupted = true;
        break;
      }
      es.tell(points, gen.map((e) => e.objective));
      evals.push(...gen);
      const prev = best;
      for (const e of gen) if (!best || e.objective < best.objective) best = e;
      for (const e of gen) if (e !== best) pruneEval(e.eval);
      if (prev && prev !== best) pruneEval(prev.eval);
      if (writer) writeTables(o.dir, cal, evals);
      bar.generation(`generation ${g + 1}/${generations}: best loss ${best!.objective.toPrecision(4)} at ${fits.map((f, i) => `${f.name}=${best!.values[i].toPrecision(4)}`).join(' ')}`);
    }
  } finally {
    bar.stop();
  }
  if (!best) return { evaluations: evals, interrupted };
  const bj = bestJson(cal, evals, best, es, goal, stopped, evals.length === 0 ? 0 : evals[evals.length - 1].generation + 1);
  if (writer) writeFileAtomic(path.join(o.dir, 'best.json'), json(bj));
  if (writer && bj.moments) writeMoments(path.join(o.dir, 'moments.arrow'), bj.moments);
  if (writer && !interrupted) copyBest(o.dir, bj.run, goal);
  return { best: bj, evaluations: evals, interrupted };
}

/** The loss's seed noise at the best point: its standard error, and the noise figures best.json reports. */
function noiseOf(cal: CalibrationJson, best: Evaluation, goal: Goal): Pick<BestJson, 'loss_standard_error' | 'noise_nrmse' | 'noise_moment_loss'> {
  const n = cal.seeds.length;
  const series = goal.target ? seedNoise(best, goal.target, goal.matches) : undefined;
  if (!goal.moments) return { loss_standard_error: series! / Math.sqrt(n), noise_nrmse: series! * Math.sqrt(1 + 1 / n) };
  const m = momentNoise(best, goal.moments.list);
  return { loss_standard_error: m.se, ...(series !== undefined && { noise_nrmse: series * Math.sqrt(1 + 1 / n) }), noise_moment_loss: m.noise };
}

function bestJson(cal: CalibrationJson, evals: Evaluation[], best: Evaluation, es: Cmaes, goal: Goal, stopped: BestJson['stopped'], generations: number): BestJson {
  const n = cal.seeds.length;
  const noise = noiseOf(cal, best, goal);
  const se = noise.loss_standard_error;
  const threshold = best.objective + 2 * (Number.isFinite(se) ? se : 0);
  const near = evals.filter((e) => e.objective <= threshold);
  const named = (f: (fit: Fit, i: number) => number) => Object.fromEntries(cal.fits.map((fit, i) => [fit.name, f(fit, i)]));
  const sd = es.sd();
  const fitted = goal.moments && momentFits(goal.moments.list, best.moments);
  return {
    parameters: named((_, i) => best.values[i]),
    loss: best.objective,
    eval: best.eval,
    evaluations: evals.length,
    runs: evals.length * n * armsOf(cal).length,
    generations,
    stopped,
    ...noise,
    ...(fitted && { moment_loss: best.momentLoss, ...(goal.target && { nrmse: best.nrmse }) }),
    near_best: { count: near.length, threshold, ranges: Object.fromEntries(cal.fits.map((f, i) => [f.name, [Math.min(...near.map((e) => e.values[i])), Math.max(...near.map((e) => e.values[i]))] as [number, number]])) },
    search: { mean: named((f, i) => valueAt({ ...f, integer: false }, es.mean[i])), sd: named((f, i) => sd[i] * (f.hi - f.lo)) },
    run: `runs/${runIdOf(best.eval, cal.seeds[0])}`,
    ...(fitted && { moments: fitted }),
  };
}

/** DIR/best: the best evaluation's first-seed run (reference arm), with target.arrow beside its metrics for the dashboard. */
function copyBest(dir: string, run: string, goal: Goal): void {
  const to = path.join(dir, 'best');
  fs.rmSync(to, { recursive: true, force: true });
  fs.cpSync(path.join(dir, run), to, { recursive: true });
  if (!goal.target) return;
  writeTarget(path.join(to, 'target.arrow'), goal.target, goal.matches);
  const mf = path.join(to, 'manifest.json');
  const m = JSON.parse(fs.readFileSync(mf, 'utf8')) as { files: { other?: string[] } };
  m.files.other = [...(m.files.other ?? []).filter((f) => f !== 'target.arrow'), 'target.arrow'];
  fs.writeFileSync(mf, json(m));
}
