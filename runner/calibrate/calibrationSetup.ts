/**
 * What a calibration searches over, checked before any run: the base parameters and run options
 * (from a scenario, or from an experiment file's reference arm and defaults; and, for moments
 * measured in its other arms, each of those arms' parameters), the fitted
 * parameters (`--fit NAME=LO..HI`, named as `--set` names them, checked against the scenario's
 * schema at both ends and in between) and the identity of the calibration (calibration.json), which
 * a re-run must match to continue where the last one stopped.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { InputError } from '../../sim-core/errors.ts';
import type { Scenario } from '../run/defineScenario.ts';
import { isExperimentFile, loadExperiment } from '../experiment/defineExperiment.ts';
import { planExperiment, setPath, type RunCommonOptions } from '../experiment/experimentPlan.ts';
import { bundledScenarios, loadScenario, resolveScenario } from '../run/loadScenario.ts';
import { mergeParams, paramError } from '../run/strictParams.ts';
import type { Match } from './calibrationTarget.ts';
import type { Outcome } from '../experiment/outcomes.ts';

export interface Fit {
  name: string;
  lo: number;
  hi: number;
  /** The schema takes whole numbers only: values are rounded. */
  integer: boolean;
}

/** `--fit NAME=LO..HI`. */
export function parseFit(raw: string): Omit<Fit, 'integer'> {
  const m = /^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)=([^=]+?)\.\.([^=]+)$/.exec(raw.trim());
  if (!m) throw new InputError(`--fit expects NAME=LO..HI with a parameter name as --set takes it, e.g. beta=0.01..0.2 (got "${raw}")`);
  const lo = Number(m[2]);
  const hi = Number(m[3]);
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) throw new InputError(`--fit ${raw}: LO and HI must be numbers`);
  if (!(lo < hi)) throw new InputError(`--fit ${raw}: empty range; give LO < HI`);
  return { name: m[1], lo, hi };
}

export interface CalibrationBase {
  scenario: Scenario;
  /** What the child runs get: a bundled name or an absolute path. */
  scenarioArg: string;
  /** The experiment's plugin modules, absolute, which each run loads (none for a scenario). */
  plugins: string[];
  /** Parameters before the fitted ones are set (overrides over the scenario's defaults). */
  base: Record<string, unknown>;
  options: RunCommonOptions;
  /** The reference arm of an experiment file ('calibration' for a scenario): `base` is its parameters. */
  reference: string;
  /**
   * An experiment file's other arms: `base`, the arm's parameters (as `base` is the reference's), and
   * `own`, what the arm itself sets, applied again over the fitted values, so an arm that sets a
   * fitted parameter keeps its value (it is a contrast with the reference).
   */
  arms: Record<string, { base: Record<string, unknown>; own: Record<string, unknown> }>;
  /** An experiment file's outcomes (what effect moments compare); absent for a scenario. */
  outcomes?: Record<string, Outcome>;
}

export interface BaseOptions {
  agents?: number;
  hours?: number;
  steps?: number;
  stepSeconds?: number;
  /** `--set` overrides, applied over the base. */
  sets: Record<string, unknown>;
  llm: string[];
}

/** The base of a calibration from a scenario or an experiment file (its reference arm, first grid point). */
export async function calibrationBase(arg: string, o: BaseOptions): Promise<CalibrationBase> {
  if (o.hours !== undefined && o.steps !== undefined) throw new InputError('give --hours or --steps, not both');
  let scenario: Scenario;
  let scenarioArg: string;
  let base: Record<string, unknown>;
  let options: RunCommonOptions;
  let plugins: string[] = [];
  let reference = 'calibration';
  let outcomes: Record<string, Outcome> | undefined;
  const arms: CalibrationBase['arms'] = {};
  if (await isExperimentFile(arg)) {
    const { experiment: e, file } = await loadExperiment(arg);
    const plan = await planExperiment(e, file, arg, { seeds: 1, agents: o.agents, hours: o.hours, steps: o.steps, stepSeconds: o.stepSeconds, llm: o.llm });
    // The first grid point's run of each arm (the plan lists grid points outermost).
    const runOf = (arm: string) => plan.runs.find((r) => r.arm === arm)!;
    ({ scenario, scenarioArg, plugins } = plan);
    base = runOf(e.reference).overrides;
    options = plan.json.options;
    reference = e.reference;
    outcomes = e.outcomes;
    for (const arm of Object.keys(e.arms)) if (arm !== e.reference) arms[arm] = { base: mergeParams(plan.scenario.params, runOf(arm).overrides, o.sets) as Record<string, unknown>, own: e.arms[arm] };
  } else {
    ({ scenario } = await loadScenario(arg));
    scenarioArg = bundledScenarios().includes(arg) ? arg : resolveScenario(arg);
    const stepSeconds = o.stepSeconds ?? scenario.defaults.stepSeconds ?? 3600;
    let steps = o.steps ?? scenario.defaults.steps;
    if (o.hours !== undefined) {
      steps = Math.round((o.hours * 3600) / stepSeconds);
      if (Math.abs(steps - (o.hours * 3600) / stepSeconds) > 1e-9) throw new InputError(`${o.hours} hours is not a whole number of ${stepSeconds}-second steps; give --steps or other hours`);
    }
    base = {};
    options = { agents: o.agents ?? scenario.defaults.agents, steps, step_seconds: stepSeconds, snapshot_every: 0, ...(o.llm.length > 0 && { llm: o.llm }) };
  }
  base = mergeParams(scenario.params, base, o.sets) as Record<string, unknown>;
  const defaults = scenario.params.safeParse({});
  const checked = scenario.params.safeParse(mergeParams(scenario.params, defaults.data, base));
  if (!checked.success) throw paramError(scenario.name, checked.error, scenario.params, base);
  return { scenario, scenarioArg, plugins, base, options, reference, arms, outcomes };
}

/**
 * The run parameters at `values` (one per fit), in the reference arm or another `arm`: the
 * overrides and the full parameters a run records.
 */
export function paramsAt(b: CalibrationBase, fits: Fit[], values: number[], arm?: string): { overrides: Record<string, unknown>; params: Record<string, unknown> } {
  const over: Record<string, unknown> = {};
  fits.forEach((f, i) => setPath(over, f.name, values[i]));
  const other = arm === undefined || arm === b.reference ? undefined : b.arms[arm];
  const fitted = mergeParams(b.scenario.params, other?.base ?? b.base, over);
  const overrides = (other ? mergeParams(b.scenario.params, fitted, other.own) : fitted) as Record<string, unknown>;
  const defaults = b.scenario.params.safeParse({}).data;
  const merged = mergeParams(b.scenario.params, defaults, overrides);
  const r = b.scenario.params.safeParse(merged);
  if (!r.success) throw paramError(b.scenario.name, r.error, b.scenario.params, merged);
  return { overrides, params: r.data as Record<string, unknown> };
}

/** Checks each fitted parameter against the schema at LO, HI and between; finds whole-number ones. */
export function checkFits(b: CalibrationBase, raw: Array<Omit<Fit, 'integer'>>): Fit[] {
  const seen = new Set<string>();
  const fits: Fit[] = [];
  for (const f of raw) {
    if (seen.has(f.name)) throw new InputError(`--fit ${f.name} is given twice; give each parameter once`);
    seen.add(f.name);
    const at = (v: number) => {
      try {
        paramsAt(b, [{ ...f, integer: false }], [v]);
        return undefined;
      } catch (err) {
        return (err as Error).message;
      }
    };
    for (const v of [f.lo, f.hi]) {
      const e = at(v);
      if (e !== undefined) throw new InputError(`--fit ${f.name}=${f.lo}..${f.hi}: ${e.replace(/; set it with --set .*$/, '')}`);
    }
    const mid = f.lo + (f.hi - f.lo) * 0.371;
    const integer = at(mid) !== undefined && at(Math.round(mid)) === undefined;
    if (integer && Math.ceil(f.lo) > Math.floor(f.hi)) throw new InputError(`--fit ${f.name}=${f.lo}..${f.hi}: ${f.name} takes whole numbers and there is none in the range`);
    if (at(mid) !== undefined && !integer) throw new InputError(`--fit ${f.name}=${f.lo}..${f.hi}: ${at(mid)!.replace(/; set it with --set .*$/, '')}`);
    fits.push({ ...f, integer });
  }
  return fits;
}

/** A fit's value at box coordinate u in [0, 1]. */
export function valueAt(f: Fit, u: number): number {
  const v = f.lo + u * (f.hi - f.lo);
  return f.integer ? Math.min(Math.floor(f.hi), Math.max(Math.ceil(f.lo), Math.round(v))) : v;
}

/** calibration.json: everything that decides the search and its runs (not the budget, jobs or threads). */
export interface CalibrationJson {
  format: 'socsim-calibration/1';
  scenario: string;
  source: string;
  base: Record<string, unknown>;
  fits: Fit[];
  matches: Match[];
  /** The series target (`--target`); absent when only moments are fitted. */
  target?: { file: string; sha256: string };
  /** The moments file (`--moments`), the weight of the series' NRMSE^2 beside them, and the arms other than the reference whose runs the moments read. */
  moments?: { file: string; sha256: string; series_weight: number; arms: string[] };
  seeds: number[];
  search: { method: 'cma-es'; seed: number; lambda: number; sigma0: number };
  options: RunCommonOptions;
}

export const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** The parts of calibration.json that identify the search (not where the target and moments files were read from). */
export function sameCalibration(a: CalibrationJson, b: CalibrationJson): boolean {
  const id = (j: CalibrationJson) => JSON.stringify({ ...j, source: undefined, target: j.target?.sha256, moments: j.moments && { ...j.moments, file: undefined } });
  return id(a) === id(b);
}
