/**
 * An experiment directory as the dashboard reads it (the contract in docs/run-directory.md):
 * experiment.json (the plan) and the tables series.arrow and effects.arrow, through the server's
 * /run/ route. The reductions here are pure: rows of a table picked by grid point, one line and
 * band per arm, effects as rows, their order, and number formats.
 */
import { format } from 'd3';
import { fetchJson, type Columns } from './run.ts';

/** The part of experiment.json the dashboard uses. */
export interface ExperimentPlan {
  format: string;
  name: string;
  file?: string;
  description?: string;
  scenario: string;
  reference: string;
  arms: string[];
  /** Dotted parameter path -> values; {} when there is no grid. */
  grid: Record<string, Array<number | string>>;
  seeds: number[];
  outcomes: string[];
  options?: Record<string, unknown>;
  runs: Array<{ id: string; arm: string; grid: Record<string, number | string>; seed: number; dir: string }>;
}

/** experiment.json under `base`; an HttpError (404) where there is none. */
export function fetchExperiment(base: string): Promise<ExperimentPlan> {
  return fetchJson<ExperimentPlan>(base, 'experiment.json');
}

/** A point of the grid: its values by key, and the key string rows are matched on. */
export interface GridPoint {
  key: string;
  values: Record<string, number | string>;
  label: string;
}

const SEP = '\u001f';

/** The key string of grid values (in the plan's key order). */
function keyOf(keys: string[], value: (k: string) => unknown): string {
  return keys.map((k) => String(value(k))).join(SEP);
}

/** "k1=v1 · k2=v2", or "no grid". */
export function gridLabel(keys: string[], values: Record<string, unknown>): string {
  return keys.length ? keys.map((k) => `${k}=${String(values[k])}`).join(' · ') : 'no grid';
}

/** The grid points of a plan, in the order its runs list them (else the product of the grid). */
export function gridPoints(plan: ExperimentPlan): GridPoint[] {
  const keys = Object.keys(plan.grid ?? {});
  let all: Array<Record<string, number | string>> = (plan.runs ?? []).map((r) => r.grid ?? {});
  if (!all.length) {
    all = [{}];
    for (const k of keys) all = all.flatMap((p) => (plan.grid[k] ?? []).map((v) => ({ ...p, [k]: v })));
  }
  const out = new Map<string, GridPoint>();
  for (const values of all) {
    const key = keyOf(keys, (k) => values[k]);
    if (!out.has(key)) out.set(key, { key, values, label: gridLabel(keys, values) });
  }
  return [...out.values()];
}

/** The grid key string of every row of a table (grid columns are f64 or utf8, named by key). */
export function rowGridKeys(t: Columns, keys: string[]): string[] {
  const cols = new Map(keys.map((k) => [k, t.num[k] ?? t.str[k]]));
  return Array.from({ length: t.rows }, (_v, i) => keyOf(keys, (k) => cols.get(k)?.[i] ?? ''));
}

/** Metric names of series.arrow, in the order they first appear. */
export function seriesMetrics(t: Columns): string[] {
  return [...new Set(t.str.metric ?? [])];
}

/** Arms in the plan's order, then any arm the table has that the plan does not. */
function armOrder(plan: ExperimentPlan, present: Iterable<string>): string[] {
  const extra = [...new Set(present)].filter((a) => !plan.arms.includes(a));
  return [...plan.arms, ...extra];
}

export interface ArmSeries {
  arm: string;
  /** Completed steps (the series' step), ascending, as the single-run charts draw metrics. */
  x: Float64Array;
  mean: Float64Array;
  lo: Float64Array;
  hi: Float64Array;
  n: Float64Array;
}

/**
 * One series per arm (plan order; arms without rows are left out) of `metric` at grid point
 * `gridKey`: the mean across seeds and its 95% interval by step. `keys` = rowGridKeys(t, ...).
 */
export function armSeries(t: Columns, keys: string[], plan: ExperimentPlan, metric: string, gridKey: string): ArmSeries[] {
  const arm = t.str.arm ?? [];
  const met = t.str.metric ?? [];
  const byArm = new Map<string, number[]>();
  for (let i = 0; i < t.rows; i++) {
    if (met[i] !== metric || keys[i] !== gridKey) continue;
    let rows = byArm.get(arm[i]!);
    if (!rows) byArm.set(arm[i]!, (rows = []));
    rows.push(i);
  }
  const col = (name: string): ArrayLike<number | bigint> => t.num[name] ?? new Float64Array(t.rows).fill(NaN);
  const step = col('step');
  return armOrder(plan, byArm.keys())
    .filter((a) => byArm.has(a))
    .map((a) => {
      const rows = byArm.get(a)!.sort((p, q) => Number(step[p]) - Number(step[q]));
      const pick = (name: string) => {
        const c = col(name);
        return Float64Array.from(rows, (i) => Number(c[i]));
      };
      return { arm: a, x: pick('step'), mean: pick('mean'), lo: pick('ci_low'), hi: pick('ci_high'), n: pick('n') };
    });
}

export interface EffectRow {
  arm: string;
  group: string;
  outcome: string;
  n: number;
  mean: number;
  ci_low: number;
  ci_high: number;
  diff: number;
  diff_ci_low: number;
  diff_ci_high: number;
  unpaired_ci_low: number;
  unpaired_ci_high: number;
  /** What diff is against: `arm <name>` or `group <name>` (effects.arrow `versus`). */
  versus: string;
  reference: boolean;
}

const EFFECT_NUMBERS = ['n', 'mean', 'ci_low', 'ci_high', 'diff', 'diff_ci_low', 'diff_ci_high', 'unpaired_ci_low', 'unpaired_ci_high'] as const;

/** The rows of effects.arrow at grid point `gridKey`, in the default order (see `sortEffects`). */
export function effectRows(t: Columns, keys: string[], plan: ExperimentPlan, gridKey: string): EffectRow[] {
  const out: EffectRow[] = [];
  for (let i = 0; i < t.rows; i++) {
    if (keys[i] !== gridKey) continue;
    const arm = t.str.arm?.[i] ?? '';
    const group = t.str.group?.[i] ?? '';
    // With a reference group, the compared-with rows are that group's, in every arm.
    const versus = t.str.versus?.[i] ?? `arm ${plan.reference}`;
    const reference = versus.startsWith('group ') ? group === versus.slice(6) : arm === plan.reference;
    const row = { arm, group, outcome: t.str.outcome?.[i] ?? '', versus, reference } as EffectRow;
    for (const c of EFFECT_NUMBERS) row[c] = t.num[c] ? Number(t.num[c][i]) : NaN;
    out.push(row);
  }
  return sortEffects(out, plan, 'outcome', false);
}

export type EffectSort = 'outcome' | 'group' | 'arm' | 'n' | 'mean' | 'diff';

/**
 * Effects in order of `by` (descending when `desc`), ties in the default order: outcome (as the
 * plan declares them), then group (as first seen), then arm (plan order), so every outcome's arms
 * sit together with the reference first. NaN sorts last either way.
 */
export function sortEffects(rows: EffectRow[], plan: ExperimentPlan, by: EffectSort, desc: boolean): EffectRow[] {
  const rank = (list: string[]) => {
    const m = new Map<string, number>();
    list.forEach((v, i) => m.has(v) || m.set(v, i));
    return (v: string) => m.get(v) ?? list.length;
  };
  const outcome = rank([...plan.outcomes, ...new Set(rows.map((r) => r.outcome))]);
  const group = rank([...new Set(rows.map((r) => r.group))]);
  const arms = armOrder(plan, rows.map((r) => r.arm));
  const arm = rank([plan.reference, ...arms.filter((a) => a !== plan.reference)]);
  const base = (a: EffectRow, b: EffectRow) => outcome(a.outcome) - outcome(b.outcome) || group(a.group) - group(b.group) || arm(a.arm) - arm(b.arm);
  const key: Record<EffectSort, (r: EffectRow) => number> = {
    outcome: (r) => outcome(r.outcome),
    group: (r) => group(r.group),
    arm: (r) => arm(r.arm),
    n: (r) => r.n,
    mean: (r) => r.mean,
    diff: (r) => r.diff,
  };
  const k = key[by];
  const sign = desc ? -1 : 1;
  return [...rows].sort((a, b) => {
    const va = k(a);
    const vb = k(b);
    const na = Number.isNaN(va);
    const nb = Number.isNaN(vb);
    if (na || nb) return na === nb ? base(a, b) : na ? 1 : -1;
    return sign * (va - vb) || base(a, b);
  });
}

const big = format(',.0f');
const sig = format('.3~r');
const signedSig = format('+.3~r');

/** A statistic for the effects table: 3 significant digits (whole numbers from 1,000), '–' for NaN. */
export function fmtStat(v: number, signed = false): string {
  if (!Number.isFinite(v)) return '–';
  if (Math.abs(v) >= 1000) return (signed && v > 0 ? '+' : '') + big(v);
  return signed && v !== 0 ? signedSig(v) : sig(v);
}

/** "[lo, hi]", or '' when both ends are NaN. */
export function fmtInterval(lo: number, hi: number): string {
  return Number.isNaN(lo) && Number.isNaN(hi) ? '' : `[${fmtStat(lo)}, ${fmtStat(hi)}]`;
}

/** Whether an interval lies wholly on one side of zero. */
export function excludesZero(lo: number, hi: number): boolean {
  return (lo > 0 && hi > 0) || (lo < 0 && hi < 0);
}
