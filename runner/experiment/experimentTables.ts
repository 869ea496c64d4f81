/**
 * An experiment's tables (CONTRACT.md), derived only from its run directories:
 *
 * - summary.arrow: one row per run and group, one f64 column per outcome (NaN where undefined);
 * - effects.arrow: per grid point, arm, outcome and group, the mean with its 95% t interval across
 *   seeds, the difference from the reference arm paired by seed, and the Welch interval of the same
 *   difference unpaired; rows in the order grid point, arm, outcome, group;
 * - series.arrow: per grid point, arm, metric and step (metrics.arrow's step: the state after that
 *   many steps, the initial row, step 0, included where the runs have one), the mean across seeds
 *   with its 95% t interval (the mean itself when n < 2).
 *
 * Rows follow the plan's order, never the order runs finished in, so the tables are byte-identical
 * whatever the number of jobs or shards.
 */
import path from 'node:path';
import { DataType } from 'apache-arrow';
import { writeArrowFile, type ColumnData } from '../../sim-core/io/arrowFile.ts';
import { readArrowFile } from '../../sim-core/io/arrowFile.ts';
import { pairedInterval, tInterval, welchInterval } from './effects.ts';
import type { Outcome, OutcomeValue } from './outcomes.ts';
import { evaluateOutcome, openRun } from './outcomes.ts';
import { gridPoints, type ExperimentJson, type GridValue, type PlanRun } from './experimentPlan.ts';

/** Codes into a dictionary that grows in order of first appearance. */
class Dict {
  readonly labels: string[] = [];
  private readonly index = new Map<string, number>();
  constructor(initial: readonly string[] = []) {
    for (const l of initial) this.code(l);
  }
  code(label: string): number {
    let c = this.index.get(label);
    if (c === undefined) {
      c = this.labels.length;
      this.labels.push(label);
      this.index.set(label, c);
    }
    return c;
  }
}

/** The groups of one run's outcome values: "" for plain numbers, then each outcome's groups. */
function groupsOf(values: OutcomeValue[], outcomes: Outcome[]): string[] {
  const out = new Dict();
  if (values.some((v) => typeof v === 'number')) out.code('');
  values.forEach((v, i) => {
    if (typeof v === 'number') return;
    const declared = outcomes[i].groups;
    for (const g of declared ?? Object.keys(v).sort()) out.code(g);
  });
  return out.labels;
}

function valueAt(v: OutcomeValue, group: string): number {
  if (typeof v === 'number') return group === '' ? v : NaN;
  return group in v ? v[group] : NaN;
}

/** A grid column: f64 when every value of the key is a number, else utf8. */
function gridColumns(json: ExperimentJson, pointOfRow: Array<Record<string, GridValue>>): ColumnData[] {
  return Object.entries(json.grid).map(([key, values]) =>
    values.every((v) => typeof v === 'number')
      ? { name: key, type: 'f64', values: Float64Array.from(pointOfRow, (p) => p[key] as number) }
      : { name: key, type: 'utf8', values: pointOfRow.map((p) => String(p[key])) },
  );
}

const dictColumn = (name: string, d: Dict, codes: number[]): ColumnData => ({ name, type: 'i32', values: Int32Array.from(codes), dictionary: d.labels });
const f64 = (name: string, xs: number[]): ColumnData => ({ name, type: 'f64', values: Float64Array.from(xs) });
const i32 = (name: string, xs: number[]): ColumnData => ({ name, type: 'i32', values: Int32Array.from(xs) });

export interface EffectRow {
  arm: string;
  grid: Record<string, GridValue>;
  group: string;
  outcome: string;
  n: number;
  mean: number;
  ci: [number, number];
  /** What diff is against: `arm <name>` or `group <name>`. */
  versus: string;
  diff: number;
  diffCi: [number, number];
  unpairedCi: [number, number];
}

const pointKey = (p: Record<string, GridValue>) => JSON.stringify(p);

/**
 * Computes and writes the three tables into `outDir`. `runDir(run)` says where each run directory
 * is (runs may sit in several shard directories). Returns the effects for printing.
 */
export function writeTables(json: ExperimentJson, outcomes: Record<string, Outcome>, runDir: (r: PlanRun) => string, outDir: string): EffectRow[] {
  const names = json.outcomes;
  const list = names.map((n) => outcomes[n]);
  // Outcome values of every run, in plan order.
  const values = json.runs.map((r) => {
    const run = openRun(runDir(r));
    return names.map((n, i) => evaluateOutcome(n, list[i], run, r.id));
  });

  // summary.arrow
  const arms = new Dict(json.arms);
  const groups = new Dict();
  const s = { arm: [] as number[], seed: [] as number[], point: [] as Array<Record<string, GridValue>>, group: [] as number[], cols: names.map(() => [] as number[]) };
  json.runs.forEach((r, k) => {
    for (const g of groupsOf(values[k], list)) {
      s.arm.push(arms.code(r.arm));
      s.seed.push(r.seed);
      s.point.push(r.grid);
      s.group.push(groups.code(g));
      names.forEach((_, i) => s.cols[i].push(valueAt(values[k][i], g)));
    }
  });
  writeArrowFile(
    path.join(outDir, 'summary.arrow'),
    [dictColumn('arm', arms, s.arm), i32('seed', s.seed), ...gridColumns(json, s.point), dictColumn('group', groups, s.group), ...names.map((n, i) => f64(n, s.cols[i]))],
    s.arm.length,
  );

  // effects.arrow: the groups of each outcome over the whole experiment, in order of appearance.
  const outcomeGroups = names.map((_, i) => {
    const d = new Dict();
    values.forEach((v) => {
      const single = [v[i]];
      for (const g of groupsOf(single, [list[i]])) d.code(g);
    });
    return d.labels;
  });
  const bySeed = (point: Record<string, GridValue>, arm: string, i: number, group: string) => {
    const m = new Map<number, number>();
    json.runs.forEach((r, k) => {
      if (r.arm === arm && pointKey(r.grid) === pointKey(point)) m.set(r.seed, valueAt(values[k][i], group));
    });
    return m;
  };
  const effects: EffectRow[] = [];
  for (const point of gridPoints(json.grid)) {
    for (const arm of json.arms) {
      names.forEach((outcome, i) => {
        // Against the reference group of the same arm when the outcome has it, else the reference arm.
        const rg = json.reference_group !== undefined && outcomeGroups[i].includes(json.reference_group) ? json.reference_group : undefined;
        for (const group of outcomeGroups[i]) {
          const a = bySeed(point, arm, i, group);
          const t = tInterval([...a.values()]);
          const isRef = rg !== undefined ? group === rg : arm === json.reference;
          const ref = isRef ? undefined : rg !== undefined ? bySeed(point, arm, i, rg) : bySeed(point, json.reference, i, group);
          const p = ref ? pairedInterval(a, ref) : undefined;
          const w = ref ? welchInterval([...a.values()], [...ref.values()]) : undefined;
          effects.push({
            arm, grid: point, group, outcome, n: t.n, mean: t.mean, ci: [t.low, t.high],
            versus: rg !== undefined ? `group ${rg}` : `arm ${json.reference}`,
            diff: p ? p.mean : NaN, diffCi: p ? [p.low, p.high] : [NaN, NaN], unpairedCi: w ? [w.low, w.high] : [NaN, NaN],
          });
        }
      });
    }
  }
  const effectGroups = new Dict();
  const outcomeDict = new Dict(names);
  const versus = new Dict();
  writeArrowFile(
    path.join(outDir, 'effects.arrow'),
    [
      dictColumn('arm', arms, effects.map((e) => arms.code(e.arm))),
      ...gridColumns(json, effects.map((e) => e.grid)),
      dictColumn('group', effectGroups, effects.map((e) => effectGroups.code(e.group))),
      dictColumn('outcome', outcomeDict, effects.map((e) => outcomeDict.code(e.outcome))),
      dictColumn('versus', versus, effects.map((e) => versus.code(e.versus))),
      i32('n', effects.map((e) => e.n)),
      f64('mean', effects.map((e) => e.mean)),
      f64('ci_low', effects.map((e) => e.ci[0])),
      f64('ci_high', effects.map((e) => e.ci[1])),
      f64('diff', effects.map((e) => e.diff)),
      f64('diff_ci_low', effects.map((e) => e.diffCi[0])),
      f64('diff_ci_high', effects.map((e) => e.diffCi[1])),
      f64('unpaired_ci_low', effects.map((e) => e.unpairedCi[0])),
      f64('unpaired_ci_high', effects.map((e) => e.unpairedCi[1])),
    ],
    effects.length,
  );

  writeSeries(json, runDir, outDir, arms);
  return effects;
}

/** series.arrow: per-step means across seeds of every numeric metric (step and time excepted). */
function writeSeries(json: ExperimentJson, runDir: (r: PlanRun) => string, outDir: string, arms: Dict): void {
  const metrics = new Dict();
  // Per run: metric -> (step -> value).
  const perRun = json.runs.map((r) => {
    const t = readArrowFile(path.join(runDir(r), 'metrics.arrow'));
    const steps = Array.from(t.getChild('step')!.toArray() as ArrayLike<number>, Number);
    const out = new Map<string, Map<number, number>>();
    for (const f of t.schema.fields) {
      if (f.name === 'step' || f.name === 'time' || !(DataType.isInt(f.type) || DataType.isFloat(f.type))) continue;
      metrics.code(f.name);
      const col = t.getChild(f.name)!;
      const m = new Map<number, number>();
      steps.forEach((st, i) => m.set(st, Number(col.get(i))));
      out.set(f.name, m);
    }
    return out;
  });
  const c = { arm: [] as number[], point: [] as Array<Record<string, GridValue>>, metric: [] as number[], step: [] as number[], n: [] as number[], mean: [] as number[], lo: [] as number[], hi: [] as number[] };
  for (const point of gridPoints(json.grid)) {
    for (const arm of json.arms) {
      const runs = json.runs.map((r, k) => [r, k] as const).filter(([r]) => r.arm === arm && pointKey(r.grid) === pointKey(point));
      for (const metric of metrics.labels) {
        const steps = new Set<number>();
        for (const [, k] of runs) for (const st of perRun[k].get(metric)?.keys() ?? []) steps.add(st);
        for (const st of [...steps].sort((x, y) => x - y)) {
          const t = tInterval(runs.map(([, k]) => perRun[k].get(metric)?.get(st) ?? NaN));
          c.arm.push(arms.code(arm));
          c.point.push(point);
          c.metric.push(metrics.code(metric));
          c.step.push(st);
          c.n.push(t.n);
          c.mean.push(t.mean);
          c.lo.push(t.n < 2 ? t.mean : t.low);
          c.hi.push(t.n < 2 ? t.mean : t.high);
        }
      }
    }
  }
  writeArrowFile(
    path.join(outDir, 'series.arrow'),
    [dictColumn('arm', arms, c.arm), ...gridColumns(json, c.point), dictColumn('metric', metrics, c.metric), i32('step', c.step), i32('n', c.n), f64('mean', c.mean), f64('ci_low', c.lo), f64('ci_high', c.hi)],
    c.arm.length,
  );
}

const num = (v: number) => (Number.isNaN(v) ? 'NaN' : Math.abs(v) >= 1e7 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(3) : String(Number(v.toPrecision(4))));
const ci = ([a, b]: [number, number]) => (Number.isNaN(a) ? '' : `[${num(a)}, ${num(b)}]`);

/** The effects as a readable text table. */
export function formatEffects(json: ExperimentJson, rows: EffectRow[]): string {
  const gridKeys = Object.keys(json.grid);
  const head = ['arm', ...gridKeys, 'group', 'outcome', 'n', 'mean', '95% ci', 'diff vs', 'diff', 'paired 95% ci', 'unpaired ci width'];
  const body = rows.map((r) => [
    r.arm, ...gridKeys.map((k) => String(r.grid[k])), r.group, r.outcome, String(r.n), num(r.mean), ci(r.ci),
    r.versus, Number.isNaN(r.diff) && Number.isNaN(r.diffCi[0]) ? '(reference)' : num(r.diff), ci(r.diffCi), Number.isNaN(r.unpairedCi[0]) ? '' : num(r.unpairedCi[1] - r.unpairedCi[0]),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((x, i) => x.padEnd(widths[i])).join('  ').trimEnd();
  return [line(head), ...body.map(line)].join('\n') + '\n';
}
