/**
 * A moment's simulated value on one seed, from that seed's run directories (one per arm): what
 * momentsFile.ts's kinds measure. Deterministic, like experiment outcomes: the same runs give the
 * same values. The calibration averages these over its seeds (momentLoss.ts).
 *
 * - effect: the experiment file's outcome in `arm` (and `group`) against `versus`, on the same
 *   seed (paired, as experiments pair arms): a - b, or a / b;
 * - pattern: the outcome of that name of `socsim validate`'s experiment (diffusion-facts), so a
 *   pattern is measured exactly as validate measures it;
 * - summary: a metrics column at a step or its mean over steps; or a quantile, share or mean of a
 *   run table's column over the rows that match `where`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../../sim-core/errors.ts';
import { closestKey } from '../run/strictParams.ts';
import { evaluateOutcome, type Outcome, type Row, type RunView } from '../experiment/outcomes.ts';
import type { EffectMoment, Moment, SummaryMoment } from './momentsFile.ts';

/** What the moments are measured against: the calibration's experiment (or scenario) and validate's patterns. */
export interface MomentContext {
  /** The reference arm: where a moment without `arm` is measured. */
  reference: string;
  /** Every arm of the experiment file (only the reference for a scenario). */
  arms: readonly string[];
  /** The experiment file's outcomes (effect moments); absent for a scenario. */
  outcomes?: Readonly<Record<string, Outcome>>;
  /** `socsim validate`'s outcomes by name (pattern moments); loaded when a moment needs them. */
  patterns?: Readonly<Record<string, Outcome>>;
}

/** One seed's runs: each arm's run directory, opened, and its id (for messages). */
export type SeedRuns = (arm: string) => { view: RunView; id: string };

const armOf = (m: Moment, c: MomentContext) => m.arm ?? c.reference;

/** The arms whose runs the moments read, the reference first. */
export function momentArms(moments: readonly Moment[], c: MomentContext): string[] {
  const need = new Set([c.reference]);
  for (const m of moments) {
    need.add(armOf(m, c));
    if (m.kind === 'effect' && 'arm' in m.versus) need.add(m.versus.arm);
  }
  return [c.reference, ...c.arms.filter((a) => a !== c.reference && need.has(a))];
}

/** Checks every name a moment gives against the experiment and validate, before any run. */
export function checkMoments(moments: readonly Moment[], c: MomentContext, file: string): void {
  moments.forEach((m, i) => {
    const at = `${file}: moments[${i}] (${m.id})`;
    const arm = (a: string, field: string) => {
      if (c.arms.includes(a)) return;
      if (c.outcomes === undefined) throw new InputError(`${at}.${field}: a scenario has no arms; calibrate an experiment file that declares arm ${a}, or drop "${field}"`);
      const near = closestKey(a, c.arms);
      throw new InputError(`${at}.${field}: the experiment has no arm ${a}; ${near ? `did you mean ${near}?` : `its arms: ${c.arms.join(', ')}`}`);
    };
    if (m.arm !== undefined) arm(m.arm, 'arm');
    if (m.kind === 'effect') {
      if (c.outcomes === undefined) throw new InputError(`${at}: an effect moment compares an experiment's arms or groups; calibrate an experiment file (socsim calibrate FILE.ts ...)`);
      if (!(m.outcome in c.outcomes)) {
        const near = closestKey(m.outcome, Object.keys(c.outcomes));
        throw new InputError(`${at}.outcome: the experiment has no outcome ${m.outcome}; ${near ? `did you mean ${near}?` : `its outcomes: ${Object.keys(c.outcomes).join(', ')}`}`);
      }
      if ('arm' in m.versus) arm(m.versus.arm, 'versus.arm');
      if ('arm' in m.versus && m.versus.arm === armOf(m, c)) throw new InputError(`${at}.versus: arm ${m.versus.arm} is compared with itself; name another arm`);
    }
    if (m.kind === 'pattern' && !(m.pattern in (c.patterns ?? {}))) {
      const names = Object.keys(c.patterns ?? {});
      const near = closestKey(m.pattern, names);
      throw new InputError(`${at}.pattern: socsim validate has no pattern ${m.pattern}; ${near ? `did you mean ${near}?` : `its patterns: ${names.join(', ')}`}`);
    }
  });
}

/** The value of a (possibly grouped) outcome on one run. */
function outcomeOn(m: EffectMoment, c: MomentContext, runs: SeedRuns, arm: string, group: string | undefined): number {
  const { view, id } = runs(arm);
  const v = evaluateOutcome(m.outcome, c.outcomes![m.outcome], view, id);
  if (typeof v === 'number') {
    if (group !== undefined) throw new InputError(`moment ${m.id}: outcome ${m.outcome} has no groups (one number per run); drop "group" and compare arms with "versus": {"arm": ...}`);
    return v;
  }
  if (group === undefined) throw new InputError(`moment ${m.id}: outcome ${m.outcome} is grouped (${Object.keys(v).join(', ')}); give "group"`);
  if (!(group in v)) {
    const near = closestKey(group, Object.keys(v));
    throw new InputError(`moment ${m.id}: outcome ${m.outcome} has no group ${group} on run ${id}; ${near ? `did you mean ${near}?` : `its groups: ${Object.keys(v).join(', ')}`}`);
  }
  return v[group];
}

function effectValue(m: EffectMoment, c: MomentContext, runs: SeedRuns): number {
  const arm = armOf(m, c);
  const a = outcomeOn(m, c, runs, arm, m.group);
  const b = 'arm' in m.versus ? outcomeOn(m, c, runs, m.versus.arm, m.group) : outcomeOn(m, c, runs, arm, m.versus.group);
  return m.contrast === 'difference' ? a - b : a / b;
}

/** Linear interpolation between order statistics: q (n - 1) counted from the smallest. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const xs = [...values].sort((a, b) => a - b);
  const h = q * (xs.length - 1);
  const lo = Math.floor(h);
  return lo + 1 < xs.length ? xs[lo] + (h - lo) * (xs[lo + 1] - xs[lo]) : xs[lo];
}

function column(row: Row, name: string, m: SummaryMoment, table: string): unknown {
  if (!(name in row)) {
    const near = closestKey(name, Object.keys(row));
    throw new InputError(`moment ${m.id}: ${table} has no column ${name}; ${near ? `did you mean ${near}?` : `its columns: ${Object.keys(row).join(', ')}`}`);
  }
  return row[name];
}

function summaryValue(m: SummaryMoment, c: MomentContext, runs: SeedRuns): number {
  const { view, id } = runs(armOf(m, c));
  if (m.metric !== undefined) {
    const t = view.table('metrics.arrow');
    const col = t.getChild(m.metric);
    if (!col || m.metric === 'step' || m.metric === 'time') {
      const names = t.schema.fields.map((f) => f.name).filter((n) => n !== 'step' && n !== 'time');
      const near = closestKey(m.metric, names);
      throw new InputError(`moment ${m.id}: the runs' metrics have no column ${m.metric}; ${near ? `did you mean ${near}?` : `they have ${names.join(', ')}`}`);
    }
    const steps = Array.from(t.getChild('step')!.toArray() as ArrayLike<number>, Number);
    const [from, to] = m.steps ?? [m.step!, m.step!];
    const xs = steps.flatMap((s, i) => (s >= from && s <= to ? [Number(col.get(i))] : []));
    if (xs.length === 0) throw new InputError(`moment ${m.id}: run ${id} has no metrics at step${from === to ? ` ${from}` : `s ${from}..${to}`} (it has steps ${steps[0]}..${steps.at(-1)}); change "step"/"steps" or the run's --steps`);
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  }
  const table = m.table!.endsWith('.arrow') ? m.table! : `${m.table}.arrow`;
  const xs: number[] = [];
  const where = Object.entries(m.where ?? {});
  for (const row of view.rows(table)) {
    if (!where.every(([k, v]) => column(row, k, m, table) === v)) continue;
    xs.push(Number(column(row, m.column!, m, table)));
  }
  if (m.quantile !== undefined) return quantile(xs, m.quantile);
  if (xs.length === 0) return NaN;
  if (m.atLeast !== undefined) return xs.filter((x) => x >= m.atLeast!).length / xs.length;
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** The moment's value on one seed. */
export function momentValue(m: Moment, c: MomentContext, runs: SeedRuns): number {
  if (m.kind === 'effect') return effectValue(m, c, runs);
  if (m.kind === 'summary') return summaryValue(m, c, runs);
  const { view, id } = runs(armOf(m, c));
  if (!fs.existsSync(path.join(view.dir, 'posts.arrow'))) throw new InputError(`moment ${m.id}: pattern ${m.pattern} is measured on the reshare cascades of posts.arrow, which run ${id} does not write; calibrate a social scenario (or an experiment on one)`);
  const v = evaluateOutcome(m.pattern, c.patterns![m.pattern], view, id);
  if (typeof v !== 'number') throw new InputError(`moment ${m.id}: pattern ${m.pattern} is not one number per run`);
  return v;
}
