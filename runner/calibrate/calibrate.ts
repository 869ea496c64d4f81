/**
 * `socsim calibrate`: a CMA-ES search (cmaes.ts) over the fitted parameters for the values under
 * which a metrics column (or several, weighted) reproduces an observed series, by NRMSE
 * (calibrationTarget.ts) of the mean over seeds 1..N. Every evaluation is N ordinary `socsim run`
 * children (experimentRun.ts's executePlan, `--jobs` at a time) under DIR/runs/e<eval>-s<seed>,
 * with their parameters in DIR/plans/. The seeds are the same at every evaluation (common random
 * numbers), so the loss is a deterministic function of the parameters.
 *
 * Resuming: the search is a pure function of `--seed` and the losses it is told, so a re-run with
 * the same calibration.json asks for the same runs in the same order; runs already complete are
 * skipped (their metrics.arrow is read again) and an interrupted one resumes from its checkpoint.
 * A larger `--budget` continues a finished calibration.
 *
 * Disk: only the runs of the best evaluation so far are kept whole; the others keep manifest.json
 * and metrics.arrow, all that resuming and the tables need.
 *
 * Files: calibration.json (settings), calibration.arrow (one row per run: eval, generation, each
 * fitted parameter, seed, that seed's loss, and the evaluation's objective), target.arrow (the
 * target series), best.json (best parameters, loss, noise level, near-best spread) and best/, a
 * copy of the best evaluation's seed-1 run with target.arrow, for `socsim serve DIR/best`.
 */
import fs from 'node:fs';
import path from 'node:path';
import cliProgress from 'cli-progress';
import { tableFromIPC } from 'apache-arrow';
import { escapeControls, InputError } from '../../sim-core/errors.ts';
import { writeArrowFile, type ColumnData } from '../../sim-core/io/arrowFile.ts';
import { Cmaes } from './cmaes.ts';
import { executePlan, runComplete, writeFileAtomic, type RunnablePlan, type Shard } from '../experiment/experimentRun.ts';
import { effectiveStatus, readRunManifest } from '../run/runDirectory.ts';
import { planFile, type PlannedRun } from '../experiment/experimentPlan.ts';
import { loss, type Match, type Target } from './calibrationTarget.ts';
import { paramsAt, sameCalibration, valueAt, type CalibrationBase, type CalibrationJson, type Fit } from './calibrationSetup.ts';
import { closestKey } from '../run/strictParams.ts';
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

export interface Evaluation {
  eval: number;
  generation: number;
  values: number[];
  /** Per seed: the loss of that seed's series, and the series per matched column. */
  seedLoss: number[];
  series: Array<Record<string, number[]>>;
  objective: number;
}

export interface BestJson {
  parameters: Record<string, number>;
  loss: number;
  eval: number;
  evaluations: number;
  runs: number;
  generations: number;
  stopped: 'budget' | 'tolerance';
  /** Standard error of the seed-mean series at the best point, in NRMSE units. */
  loss_standard_error: number;
  /** The NRMSE a perfect model's N-seed mean would have against one independent realisation. */
  noise_nrmse: number;
  /** Per parameter: min and max over the evaluations within 2 standard errors of the best loss. */
  near_best: { count: number; threshold: number; ranges: Record<string, [number, number]> };
  /** CMA-ES's final mean and per-parameter standard deviation, in parameter units. */
  search: { mean: Record<string, number>; sd: Record<string, number> };
  run: string;
}

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

/** The matched columns of one run's metrics at the target's steps. */
export function readSeries(runDir: string, target: Target, matches: Match[], runId: string): Record<string, number[]> {
  const t = tableFromIPC(fs.readFileSync(path.join(runDir, 'metrics.arrow')));
  const names = t.schema.fields.map((f) => f.name);
  const steps = Array.from(t.getChild('step')!.toArray() as Int32Array);
  const row = new Map(steps.map((s, i) => [s, i]));
  const out: Record<string, number[]> = {};
  for (const m of matches) {
    const col = t.getChild(m.column);
    if (!col) {
      const near = closestKey(m.column, names);
      throw new InputError(`--match ${m.column}: the runs' metrics have no column ${m.column}${near ? `; did you mean ${near}?` : `; they have ${names.join(', ')}`}`);
    }
    out[m.column] = target.steps.map((s) => {
      const i = row.get(s);
      if (i === undefined) throw new InputError(`${target.file}: step ${s} is not in the runs' metrics (run ${runId} has steps ${steps[0]}..${steps[steps.length - 1]}); drop the row or change --steps/--hours`);
      return Number(col.get(i));
    });
  }
  return out;
}

/** Mean over seeds of each matched series. */
function meanSeries(series: Array<Record<string, number[]>>, matches: Match[]): Record<string, number[]> {
  return Object.fromEntries(matches.map((m) => [m.column, series[0][m.column].map((_, k) => series.reduce((a, s) => a + s[m.column][k], 0) / series.length)]));
}

/**
 * Seed noise at one evaluation: the root mean square over steps of the standard deviation across
 * seeds, divided by the target's range (weighted over matched columns): divided by sqrt(N) it is
 * the standard error of the seed mean; times sqrt(1 + 1/N), the expected NRMSE of a perfect
 * model's N-seed mean against one independent realisation.
 */
function seedNoise(e: Evaluation, target: Target, matches: Match[]): number {
  const n = e.series.length;
  if (n < 2) return NaN;
  let num = 0;
  let den = 0;
  for (const m of matches) {
    const t = target.values[m.column];
    const range = Math.max(...t) - Math.min(...t);
    let ss = 0;
    for (let k = 0; k < t.length; k++) {
      const xs = e.series.map((s) => s[m.column][k]);
      const mean = xs.reduce((a, b) => a + b, 0) / n;
      ss += xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1);
    }
    num += (m.weight * Math.sqrt(ss / t.length)) / range;
    den += m.weight;
  }
  return num / den;
}

const runIdOf = (ev: number, seed: number) => `e${String(ev).padStart(4, '0')}-s${seed}`;

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
  writeArrowFile(path.join(dir, 'calibration.arrow'), cols, rows.length, { loss: 'NRMSE (RMSE / target range), weighted over matched columns; objective: of the mean series over seeds' });
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
    const foreign = fs.readdirSync(o.dir).find((f) => !/^(calibration\.json\..*\.tmp|plans|runs)$/.test(f) && !LOCK_ENTRY.test(f));
    if (foreign !== undefined) throw new InputError(`--out ${o.label} is not empty (${foreign}) and holds no calibration.json; choose a new or empty directory`);
  }
  makeDirectory(o.dir);
  if (o.force && !o.shard) for (const f of ['calibration.arrow', 'best.json', 'target.arrow']) fs.rmSync(path.join(o.dir, f), { force: true });
  writeFileAtomic(file, json(cal));
  for (const d of ['plans', 'runs']) makeDirectory(path.join(o.dir, d));
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

export async function calibrate(b: CalibrationBase, cal: CalibrationJson, target: Target, o: CalibrateOptions): Promise<CalibrateResult> {
  const lambda = cal.search.lambda;
  if (Math.floor(o.budget / lambda) < 1) throw new InputError(`--budget ${o.budget} is smaller than one generation of the search (${lambda} evaluations); give --budget ${lambda} or more`);
  // Shards share the directory by design (shared lock); a whole calibration has it to itself.
  const lock = lockDirectory(o.dir, { mode: o.shard ? 'shared' : 'exclusive', label: o.label, what: `socsim calibrate${o.shard ? ` --shard ${o.shard.index}/${o.shard.count}` : ''}` });
  try {
    return await calibrateLocked(b, cal, target, o);
  } finally {
    lock.release();
  }
}

async function calibrateLocked(b: CalibrationBase, cal: CalibrationJson, target: Target, o: CalibrateOptions): Promise<CalibrateResult> {
  const { fits, matches, seeds } = cal;
  const lambda = cal.search.lambda;
  const generations = Math.floor(o.budget / lambda);
  prepareDir(cal, o);
  const writer = !o.shard || o.shard.index === 0;
  if (writer) writeTarget(path.join(o.dir, 'target.arrow'), target, matches);
  const es = new Cmaes({ n: fits.length, seed: cal.search.seed, lambda, sigma: cal.search.sigma0 });
  const evals: Evaluation[] = [];
  let best: Evaluation | undefined;
  const bar = progress(generations * lambda * seeds.length, o.quiet);
  let stopped: BestJson['stopped'] = 'budget';
  let interrupted = false;
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
        const { overrides, params } = paramsAt(b, fits, v);
        for (const seed of seeds) {
          const id = runIdOf(ev, seed);
          runs.push({ id, arm: 'calibration', grid: {}, seed, dir: `runs/${id}`, index: runs.length, overrides, params });
          const pf = planFile(o.dir, id);
          if (!fs.existsSync(pf) || fs.readFileSync(pf, 'utf8') !== json(overrides)) writeFileAtomic(pf, json(overrides));
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
      const gen: Evaluation[] = values.map((v, k) => {
        const ev = g * lambda + k;
        const series = seeds.map((seed) => readSeries(path.join(o.dir, 'runs', runIdOf(ev, seed)), target, matches, runIdOf(ev, seed)));
        return { eval: ev, generation: g, values: v, series, seedLoss: series.map((s) => loss(s, target, matches)), objective: loss(meanSeries(series, matches), target, matches) };
      });
      es.tell(points, gen.map((e) => e.objective));
      evals.push(...gen);
      const prev = best;
      for (const e of gen) if (!best || e.objective < best.objective) best = e;
      for (const e of gen) if (e !== best) for (const seed of seeds) prune(path.join(o.dir, 'runs', runIdOf(e.eval, seed)));
      if (prev && prev !== best) for (const seed of seeds) prune(path.join(o.dir, 'runs', runIdOf(prev.eval, seed)));
      if (writer) writeTables(o.dir, cal, evals);
      bar.generation(`generation ${g + 1}/${generations}: best loss ${best!.objective.toPrecision(4)} at ${fits.map((f, i) => `${f.name}=${best!.values[i].toPrecision(4)}`).join(' ')}`);
    }
  } finally {
    bar.stop();
  }
  if (!best) return { evaluations: evals, interrupted };
  const bj = bestJson(cal, evals, best, es, target, stopped, evals.length === 0 ? 0 : evals[evals.length - 1].generation + 1);
  if (writer) writeFileAtomic(path.join(o.dir, 'best.json'), json(bj));
  if (writer && !interrupted) copyBest(o.dir, bj.run, target, matches);
  return { best: bj, evaluations: evals, interrupted };
}

function bestJson(cal: CalibrationJson, evals: Evaluation[], best: Evaluation, es: Cmaes, target: Target, stopped: BestJson['stopped'], generations: number): BestJson {
  const n = cal.seeds.length;
  const noise = seedNoise(best, target, cal.matches);
  const se = noise / Math.sqrt(n);
  const threshold = best.objective + 2 * (Number.isFinite(se) ? se : 0);
  const near = evals.filter((e) => e.objective <= threshold);
  const named = (f: (fit: Fit, i: number) => number) => Object.fromEntries(cal.fits.map((fit, i) => [fit.name, f(fit, i)]));
  const sd = es.sd();
  return {
    parameters: named((_, i) => best.values[i]),
    loss: best.objective,
    eval: best.eval,
    evaluations: evals.length,
    runs: evals.length * n,
    generations,
    stopped,
    loss_standard_error: se,
    noise_nrmse: noise * Math.sqrt(1 + 1 / n),
    near_best: { count: near.length, threshold, ranges: Object.fromEntries(cal.fits.map((f, i) => [f.name, [Math.min(...near.map((e) => e.values[i])), Math.max(...near.map((e) => e.values[i]))] as [number, number]])) },
    search: { mean: named((f, i) => valueAt({ ...f, integer: false }, es.mean[i])), sd: named((f, i) => sd[i] * (f.hi - f.lo)) },
    run: `runs/${runIdOf(best.eval, cal.seeds[0])}`,
  };
}

/** DIR/best: the best evaluation's first-seed run, with target.arrow beside its metrics for the dashboard. */
function copyBest(dir: string, run: string, target: Target, matches: Match[]): void {
  const to = path.join(dir, 'best');
  fs.rmSync(to, { recursive: true, force: true });
  fs.cpSync(path.join(dir, run), to, { recursive: true });
  writeTarget(path.join(to, 'target.arrow'), target, matches);
  const mf = path.join(to, 'manifest.json');
  const m = JSON.parse(fs.readFileSync(mf, 'utf8')) as { files: { other?: string[] } };
  m.files.other = [...(m.files.other ?? []).filter((f) => f !== 'target.arrow'), 'target.arrow'];
  fs.writeFileSync(mf, json(m));
}
