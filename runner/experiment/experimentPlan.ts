/**
 * Planning an experiment: arm x grid point x seed, each run's parameters checked against the
 * scenario, and the plan as written to DIR/experiment.json (format in CONTRACT.md, "socsim-
 * experiment/1"). Seeds are 1..N for every arm, so arms share their random streams wherever an
 * arm's parameters do not change them (common random numbers).
 */
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../../sim-core/errors.ts';
import type { Scenario } from '../run/defineScenario.ts';
import type { Experiment } from './defineExperiment.ts';
import { loadPlugins } from '../run/plugins.ts';
import { bundledScenarios, loadScenario } from '../run/loadScenario.ts';
import { mergeParams, paramError } from '../run/strictParams.ts';

export type GridValue = number | string | boolean;

/** One run of the plan as experiment.json lists it. */
export interface PlanRun {
  id: string;
  arm: string;
  grid: Record<string, GridValue>;
  seed: number;
  dir: string;
}

export interface ExperimentJson {
  format: 'socsim-experiment/1';
  name: string;
  file: string;
  file_abs: string;
  description: string;
  scenario: string;
  reference: string;
  /** Grouped outcomes' diffs are against this group of the same arm (absent: the reference arm). */
  reference_group?: string;
  arms: string[];
  grid: Record<string, GridValue[]>;
  seeds: number[];
  outcomes: string[];
  options: RunCommonOptions;
  runs: PlanRun[];
}

/** Options every run of the experiment shares (those that shape results; not threads). */
export interface RunCommonOptions {
  agents: number;
  steps: number;
  step_seconds: number;
  /** Agent snapshots: first and last only. */
  snapshot_every: 0;
  /** `--llm*` flags as given to `socsim experiment`, passed to every run; absent: heuristic. */
  llm?: string[];
}

/** A planned run with what it needs to run and to be recognised as done. */
export interface PlannedRun extends PlanRun {
  /** Position in the plan (sharding: index mod N). */
  index: number;
  /** The parameter overrides handed to `socsim run --params` (DIR/plans/<id>.json). */
  overrides: Record<string, unknown>;
  /** The full parameters the run will record in its manifest. */
  params: Record<string, unknown>;
}

export interface Plan {
  experiment: Experiment;
  scenario: Scenario;
  /** What the child `socsim run` gets: a bundled name or an absolute path. */
  scenarioArg: string;
  /** The experiment's plugin modules, absolute: each child `socsim run` gets them with --plugin. */
  plugins: string[];
  json: ExperimentJson;
  runs: PlannedRun[];
}

export interface PlanOptions {
  seeds?: number;
  /** Run only these arms (the reference among them), in the experiment's order; absent: all. */
  arms?: string[];
  agents?: number;
  hours?: number;
  steps?: number;
  stepSeconds?: number;
  llm?: string[];
}

/** Sets `value` at a dotted path of a nested object (creating objects on the way). */
export function setPath(obj: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let at = obj;
  for (const k of keys.slice(0, -1)) {
    const next = at[k];
    at = (at[k] = next !== null && typeof next === 'object' && !Array.isArray(next) ? { ...(next as object) } : {}) as Record<string, unknown>;
  }
  at[keys[keys.length - 1]] = value;
}

/** Every grid point, the first key varying slowest; one empty point without a grid. */
export function gridPoints(grid: Record<string, GridValue[]>): Array<Record<string, GridValue>> {
  let points: Array<Record<string, GridValue>> = [{}];
  for (const [key, values] of Object.entries(grid)) points = points.flatMap((p) => values.map((v) => ({ ...p, [key]: v })));
  return points;
}

/** `<arm>[-<key>=<value>...]-s<seed>`, with anything outside [A-Za-z0-9._=-] replaced by '_'. */
export function runId(arm: string, point: Record<string, GridValue>, seed: number): string {
  const parts = [arm, ...Object.entries(point).map(([k, v]) => `${k}=${String(v)}`), `s${seed}`];
  return parts.join('-').replace(/[^A-Za-z0-9._=-]/g, '_');
}

/** The scenario argument for the child runs: a bundled name, else a path next to the experiment file. */
export function scenarioArgument(scenario: string, experimentFile: string): string {
  if (bundledScenarios().includes(scenario)) return scenario;
  const file = path.resolve(path.dirname(experimentFile), scenario);
  if (!fs.existsSync(file)) {
    throw new InputError(`scenario ${scenario} is neither a bundled scenario (${bundledScenarios().join(', ')}) nor a file next to the experiment (${file})`);
  }
  return file;
}

function stepsFor(o: PlanOptions, e: Experiment, scenario: Scenario, stepSeconds: number): number {
  const hours = o.hours ?? (o.steps === undefined ? e.defaults.hours : undefined);
  const steps = o.steps ?? (o.hours === undefined ? e.defaults.steps : undefined);
  if (hours === undefined) return steps ?? scenario.defaults.steps;
  const s = (hours * 3600) / stepSeconds;
  if (Math.abs(s - Math.round(s)) > 1e-9) throw new InputError(`${hours} hours is not a whole number of ${stepSeconds}-second steps; give --steps or other hours`);
  return Math.round(s);
}

/** The arms to run: `wanted` (`--arms`) checked against the experiment's, in the experiment's order. */
function selectArms(e: Experiment, where: string, wanted: string[] | undefined): string[] {
  const all = Object.keys(e.arms);
  if (wanted === undefined) return all;
  for (const a of wanted) {
    if (!all.includes(a)) throw new InputError(`--arms: ${where} has no arm "${a}"; its arms are ${all.join(', ')}`);
  }
  if (!wanted.includes(e.reference)) throw new InputError(`--arms must include the reference arm "${e.reference}": every effect is a difference from it (e.g. --arms ${[e.reference, ...wanted].join(',')})`);
  return all.filter((a) => wanted.includes(a));
}

/** Plans an experiment loaded from `file` (`fileArg` as the user gave it). */
export async function planExperiment(experiment: Experiment, file: string, fileArg: string, o: PlanOptions = {}): Promise<Plan> {
  const e = experiment;
  const scenarioArg = scenarioArgument(e.scenario, file);
  // Before the arms are checked: they may name what the plugins add (a ranker).
  const plugins = await loadPlugins(e.plugins, path.dirname(file));
  const { scenario } = await loadScenario(scenarioArg);
  const schema = scenario.params;
  const where = `${fileArg}`;
  const defaults = schema.safeParse({});
  if (!defaults.success) throw paramError(scenario.name, defaults.error, schema, {});
  const check = (overrides: Record<string, unknown>, what: string): Record<string, unknown> => {
    const merged = mergeParams(schema, defaults.data, overrides);
    const r = schema.safeParse(merged);
    if (!r.success) throw new InputError(`${where}: ${what}: ${paramError(scenario.name, r.error, schema, merged).message.replace(/; set it with --set .*$/, '')}`);
    return r.data as Record<string, unknown>;
  };
  check(e.params, 'params');
  const stepSeconds = o.stepSeconds ?? e.defaults.stepSeconds ?? scenario.defaults.stepSeconds ?? 3600;
  const options: RunCommonOptions = {
    agents: o.agents ?? e.defaults.agents ?? scenario.defaults.agents,
    steps: stepsFor(o, e, scenario, stepSeconds),
    step_seconds: stepSeconds,
    snapshot_every: 0,
    ...(o.llm && o.llm.length > 0 && { llm: o.llm }),
  };
  const seeds = Array.from({ length: o.seeds ?? e.seeds }, (_, i) => i + 1);
  const arms = selectArms(e, where, o.arms);
  const runs: PlannedRun[] = [];
  const ids = new Map<string, string>();
  for (const point of gridPoints(e.grid)) {
    for (const arm of arms) {
      const gridOver: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(point)) setPath(gridOver, k, v);
      const overrides = mergeParams(schema, mergeParams(schema, e.params, e.arms[arm]), gridOver) as Record<string, unknown>;
      const label = `arm ${arm}${Object.keys(point).length ? ` at ${Object.entries(point).map(([k, v]) => `${k}=${String(v)}`).join(', ')}` : ''}`;
      const params = check(overrides, label);
      for (const seed of seeds) {
        const id = runId(arm, point, seed);
        const clash = ids.get(id);
        if (clash) throw new InputError(`${where}: runs ${clash} and ${label} seed ${seed} get the same id ${id}; rename an arm or grid value`);
        ids.set(id, `${label} seed ${seed}`);
        runs.push({ id, arm, grid: point, seed, dir: `runs/${id}`, index: runs.length, overrides, params });
      }
    }
  }
  const json: ExperimentJson = {
    format: 'socsim-experiment/1',
    name: e.name,
    file: path.relative(process.cwd(), file) || fileArg,
    file_abs: file,
    description: e.description,
    scenario: e.scenario,
    reference: e.reference,
    ...(e.referenceGroup !== undefined && { reference_group: e.referenceGroup }),
    arms,
    grid: e.grid,
    seeds,
    outcomes: Object.keys(e.outcomes),
    options,
    runs: runs.map(({ id, arm, grid, seed, dir }) => ({ id, arm, grid, seed, dir })),
  };
  return { experiment: e, scenario, scenarioArg, plugins, json, runs };
}

/** The parts of experiment.json that define the plan (not where the file was read from). */
function planIdentity(j: ExperimentJson): string {
  const { file: _file, file_abs: _abs, ...rest } = j;
  return JSON.stringify(rest);
}

export function samePlan(a: ExperimentJson, b: ExperimentJson): boolean {
  return planIdentity(a) === planIdentity(b);
}

/** Where the parameter overrides of a run live (outside the run directory). */
export function planFile(dir: string, id: string): string {
  return path.join(dir, 'plans', `${id}.json`);
}

export function readExperimentJson(dir: string): ExperimentJson | undefined {
  const file = path.join(dir, 'experiment.json');
  if (!fs.existsSync(file)) return undefined;
  try {
    const j = JSON.parse(fs.readFileSync(file, 'utf8')) as ExperimentJson;
    if (j?.format !== 'socsim-experiment/1') throw new Error(`format is ${String(j?.format)}`);
    return j;
  } catch (err) {
    throw new InputError(`${file} is not a socsim experiment plan (${(err as Error).message}); choose another --out`);
  }
}
