/**
 * One evaluation of a calibration: what its runs (one per arm and seed, the same seeds at every
 * point: common random numbers) say against the goal, the series target (calibrationTarget.ts)
 * and the moments (momentValues.ts, momentLoss.ts). The objective is computed from the mean over
 * seeds (of each series step, of each moment's per-seed values); each seed's loss is the same
 * objective from that seed alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { InputError } from '../../sim-core/errors.ts';
import { closestKey } from '../run/strictParams.ts';
import { openRun, type RunView } from '../experiment/outcomes.ts';
import { finite, mean, tInterval, variance } from '../experiment/effects.ts';
import { loss, type Match, type Target } from './calibrationTarget.ts';
import { momentLoss, objective } from './momentLoss.ts';
import { weightOf, type Moment } from './momentsFile.ts';
import { momentValue, type MomentContext } from './momentValues.ts';

/** What a calibration fits: a series target, moments, or both. */
export interface Goal {
  target?: Target;
  matches: Match[];
  moments?: { list: Moment[]; context: MomentContext; seriesWeight: number };
}

export interface Evaluation {
  eval: number;
  generation: number;
  values: number[];
  /** Per seed: the objective from that seed's runs alone. */
  seedLoss: number[];
  /** Per seed: the series per matched column (empty without a series target). */
  series: Array<Record<string, number[]>>;
  /** Per moment, per seed: the moment's value (none without moments). */
  moments: number[][];
  objective: number;
  /** The parts of the objective: the series NRMSE (with a target) and the moment loss (with moments). */
  nrmse?: number;
  momentLoss?: number;
}

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
export function meanSeries(series: Array<Record<string, number[]>>, matches: Match[]): Record<string, number[]> {
  return Object.fromEntries(matches.map((m) => [m.column, series[0][m.column].map((_, k) => series.reduce((a, s) => a + s[m.column][k], 0) / series.length)]));
}

/**
 * Seed noise at one evaluation: the root mean square over steps of the standard deviation across
 * seeds, divided by the target's range (weighted over matched columns): divided by sqrt(N) it is
 * the standard error of the seed mean; times sqrt(1 + 1/N), the expected NRMSE of a perfect
 * model's N-seed mean against one independent realisation.
 */
export function seedNoise(e: Evaluation, target: Target, matches: Match[]): number {
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


/** The objective of (mean) series and moment values, and its parts. */
function score(goal: Goal, series: Record<string, number[]> | undefined, moments: number[] | undefined): Pick<Evaluation, 'objective' | 'nrmse' | 'momentLoss'> {
  const nrmse = goal.target && series ? loss(series, goal.target, goal.matches) : undefined;
  const ml = goal.moments && moments ? momentLoss(moments, goal.moments.list) : undefined;
  return { objective: objective({ nrmse, moments: ml, seriesWeight: goal.moments?.seriesWeight ?? 1 }), nrmse, momentLoss: ml };
}

/**
 * Evaluates one point from its runs: `runDir(arm, seed)` and `runId(arm, seed)` say where each is
 * and what it is called (arm undefined: the reference); series are read from the reference arm's
 * runs. `measured`: the moment values per moment and seed, when recorded before (null: NaN).
 */
export function evaluate(
  head: Pick<Evaluation, 'eval' | 'generation' | 'values'>,
  seeds: readonly number[],
  goal: Goal,
  runDir: (arm: string | undefined, seed: number) => string,
  runId: (arm: string | undefined, seed: number) => string,
  measured?: Array<Array<number | null>>,
): Evaluation {
  const { target, matches } = goal;
  const series = target ? seeds.map((seed) => readSeries(runDir(undefined, seed), target, matches, runId(undefined, seed))) : [];
  let moments: number[][] = [];
  if (goal.moments && measured) moments = measured.map((xs) => xs.map((x) => x ?? NaN));
  else if (goal.moments) {
    const { list, context } = goal.moments;
    const perSeed = seeds.map((seed) => {
      const views = new Map<string, RunView>();
      const runs = (arm: string) => {
        const a = arm === context.reference ? undefined : arm;
        const dir = runDir(a, seed);
        if (!views.has(dir)) views.set(dir, openRun(dir));
        return { view: views.get(dir)!, id: runId(a, seed) };
      };
      return list.map((m) => momentValue(m, context, runs));
    });
    moments = list.map((_, i) => perSeed.map((v) => v[i]));
  }
  const meanMoments = goal.moments ? moments.map((xs) => tInterval(xs).mean) : undefined;
  return {
    ...head,
    series,
    moments,
    seedLoss: seeds.map((_, j) => score(goal, target ? series[j] : undefined, goal.moments ? moments.map((xs) => xs[j]) : undefined).objective),
    ...score(goal, target ? meanSeries(series, matches) : undefined, meanMoments),
  };
}

/**
 * Seed noise of the moment loss at one evaluation, from each moment's standard error over seeds
 * (se_i = sd_i / sqrt(N)): `se`, the delta-method standard error of L,
 * sqrt(sum_i (2 w_i d_i se_i / K)^2), d_i the simulated mean's distance from the target; and
 * `noise`, the loss a perfect model's N-seed means would score on average, (1/K) sum_i w_i se_i^2.
 */
export function momentNoise(e: Evaluation, moments: readonly Moment[]): { se: number; noise: number } {
  const k = moments.length;
  let v = 0;
  let noise = 0;
  moments.forEach((m, i) => {
    const xs = finite(e.moments[i]);
    const se = Math.sqrt(variance(xs) / xs.length);
    const w = weightOf(m);
    v += ((2 * w * (mean(xs) - m.value) * se) / k) ** 2;
    noise += (w * se * se) / k;
  });
  return { se: Math.sqrt(v), noise };
}
