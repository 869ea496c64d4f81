/**
 * Experiment outcomes: what is measured on each finished run, as data built by three helpers.
 *
 * - `metric(name).final() | .peak() | .min() | .mean() | .at(hour) | .timeTo(threshold)` reads a
 *   column of the run's metrics.arrow, every row (the initial state's, step 0, which classic models
 *   write, included); the row of step N is the state after N steps, its hour `time` / 3600.
 * - `rows(table, {where?, groupBy?, mean | sum | count | ratio, groups?})` aggregates the rows of
 *   any Arrow table of the run directory (`posts`, `cascades.arrow`, `agents/step-000024.arrow`, or
 *   `agents/final`, the last agent snapshot), optionally per group.
 * - `custom((run) => number | Record<string, number>)` computes anything from the run.
 *
 * An outcome gives one number per run, or one per group (`Record<group, number>`). Everything here
 * is deterministic: the same run directory gives the same numbers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DataType, Precision, type Table } from 'apache-arrow';
import { z } from 'zod';
import { InputError, isInputError } from '../../sim-core/errors.ts';
import { readArrowFile } from '../../sim-core/io/arrowFile.ts';
import { readRunManifest, type Manifest } from '../run/runDirectory.ts';
import { closestKey } from '../run/strictParams.ts';

export type Row = Record<string, unknown>;
export type OutcomeValue = number | Record<string, number>;

/** What an outcome sees of one run. */
export interface RunView {
  dir: string;
  manifest: Partial<Manifest>;
  /** An Arrow table of the run directory by file name (`posts.arrow`); read once, then cached. */
  table(name: string): Table;
  /** The rows of a table as plain objects (dictionary columns as strings). */
  rows(name: string): Iterable<Row>;
}

export interface Outcome {
  readonly kind: 'metric' | 'rows' | 'custom';
  /** For `describe`: what the outcome measures. */
  readonly label: string;
  /** The groups in a fixed order, when the experiment declares them. */
  readonly groups?: readonly string[];
  evaluate(run: RunView): OutcomeValue;
}

/** Marks outcomes, also those made by another copy of socsim (a study's own install). */
const OUTCOME = Symbol.for('socsim.outcome');

export function isOutcome(x: unknown): x is Outcome {
  return typeof x === 'object' && x !== null && (x as Record<symbol, unknown>)[OUTCOME] === true;
}

class OutcomeImpl implements Outcome {
  readonly [OUTCOME] = true;
  readonly kind: Outcome['kind'];
  readonly label: string;
  readonly evaluate: (run: RunView) => OutcomeValue;
  readonly groups?: readonly string[];
  constructor(kind: Outcome['kind'], label: string, evaluate: (run: RunView) => OutcomeValue, groups?: readonly string[]) {
    this.kind = kind;
    this.label = label;
    this.evaluate = evaluate;
    this.groups = groups;
  }
}

/** A table of a run directory: a top-level *.arrow, or one in agents/. */
const TABLE_NAME = /^(agents\/)?[A-Za-z0-9][A-Za-z0-9._-]*\.arrow$/;
/** The name under which outcomes read the run's last agent snapshot. */
export const FINAL_SNAPSHOT = 'agents/final.arrow';

/** Opens a run directory for outcomes. */
export function openRun(dir: string): RunView {
  const manifest = readRunManifest(dir) ?? {};
  const cache = new Map<string, Table>();
  const table = (asked: string): Table => {
    const hit = cache.get(asked);
    if (hit) return hit;
    // agents/final.arrow: the last agent snapshot (whatever the number of steps).
    const name = asked === FINAL_SNAPSHOT ? (manifest.files?.agents?.at(-1) ?? asked) : asked;
    const file = path.join(dir, name);
    if (!TABLE_NAME.test(name) || !fs.existsSync(file)) {
      const have = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.arrow')).sort() : [];
      const near = closestKey(name, have);
      throw new InputError(`table ${name} is not in run ${dir}${near ? `; did you mean ${near}?` : `; its tables: ${have.join(', ')}`}`);
    }
    const t = readArrowFile(file);
    cache.set(asked, t);
    return t;
  };
  // Each table's columns as plain values, made once: outcomes that read one table (posts.arrow of a
  // week-long run: ~10^5-10^6 rows) each iterate it, and reading a cell through Arrow costs more
  // than the outcome's own work.
  const columns = new Map<string, { names: string[]; cols: unknown[][]; rows: number }>();
  const rows = (name: string): Iterable<Row> => {
    let c = columns.get(name);
    if (!c) {
      const t = table(name);
      const names = t.schema.fields.map((f) => f.name);
      c = { names, cols: names.map((n) => columnValues(t, n, name)), rows: t.numRows };
      columns.set(name, c);
    }
    return tableRows(c.names, c.cols, c.rows);
  };
  return { dir, manifest, table, rows };
}

/** The column `name` of `t` as plain values (dictionary columns as strings, bigints as numbers). */
function columnValues(t: Table, name: string, tableName: string): unknown[] {
  const col = t.getChild(name);
  if (!col) {
    const names = t.schema.fields.map((f) => f.name);
    const near = closestKey(name, names);
    throw new InputError(`${tableName} has no column ${name}${near ? `; did you mean ${near}?` : `; its columns: ${names.join(', ')}`}`);
  }
  // A numeric column without nulls is read whole (the same numbers as cell by cell, far faster).
  const numeric = DataType.isInt(col.type) || (DataType.isFloat(col.type) && col.type.precision !== Precision.HALF);
  const whole = numeric && col.nullCount === 0 ? (col.toArray() as unknown) : undefined;
  if (ArrayBuffer.isView(whole) && !(whole instanceof BigInt64Array) && !(whole instanceof BigUint64Array)) return whole as unknown as unknown[];
  const out = new Array<unknown>(col.length);
  for (let i = 0; i < col.length; i++) {
    const v = col.get(i);
    out[i] = typeof v === 'bigint' ? Number(v) : v;
  }
  return out;
}

function* tableRows(names: readonly string[], cols: readonly unknown[][], rows: number): Iterable<Row> {
  for (let i = 0; i < rows; i++) {
    const row: Row = {};
    for (let c = 0; c < names.length; c++) row[names[c]] = cols[c][i];
    yield row;
  }
}

// ---- metric(name) ----

interface MetricSeries {
  hours: number[];
  values: number[];
}

function metricSeries(run: RunView, name: string): MetricSeries {
  const t = run.table('metrics.arrow');
  if (name === 'step' || name === 'time') throw new InputError(`metric ${name} is the metrics table's index, not a metric; name a metric column`);
  const values = columnValues(t, name, 'metrics.arrow').map(Number);
  const hours = columnValues(t, 'time', 'metrics.arrow').map((x) => Number(x) / 3600);
  return { hours, values };
}

function reduce(values: number[], f: (a: number, b: number) => number): number {
  return values.length === 0 ? NaN : values.reduce(f);
}

const finiteNumber = (what: string) => (v: number) => {
  if (!Number.isFinite(v)) throw new InputError(`${what} must be a finite number (got ${v})`);
  return v;
};

export class MetricOutcomes {
  private readonly name: string;
  constructor(name: string) {
    this.name = name;
    if (typeof name !== 'string' || name.length === 0) throw new InputError('metric(name) needs the name of a metrics.arrow column');
  }
  private make(label: string, f: (s: MetricSeries) => number): Outcome {
    return new OutcomeImpl('metric', `metric ${this.name} ${label}`, (run) => f(metricSeries(run, this.name)));
  }
  /** The value of the last row. */
  final(): Outcome {
    return this.make('final', (s) => (s.values.length ? s.values[s.values.length - 1] : NaN));
  }
  peak(): Outcome {
    return this.make('peak', (s) => reduce(s.values, (a, b) => Math.max(a, b)));
  }
  min(): Outcome {
    return this.make('min', (s) => reduce(s.values, (a, b) => Math.min(a, b)));
  }
  /** Mean over the rows (steps, and the initial row when there is one). */
  mean(): Outcome {
    return this.make('mean', (s) => (s.values.length ? s.values.reduce((a, b) => a + b, 0) / s.values.length : NaN));
  }
  /** The value at `hour`: the last row whose time is at or before it; NaN before the first row. */
  at(hour: number): Outcome {
    finiteNumber(`metric(${this.name}).at(hour)`)(hour);
    return this.make(`at hour ${hour}`, (s) => {
      let v = NaN;
      for (let i = 0; i < s.values.length; i++) if (s.hours[i] <= hour + 1e-9) v = s.values[i];
      return v;
    });
  }
  /**
   * Hours until the metric first reaches `threshold` (>= it; with `{ below: true }`, <= it), read
   * from the rows (the row's time / 3600: 0 when the initial state already does); NaN if it never does.
   */
  timeTo(threshold: number, o: { below?: boolean } = {}): Outcome {
    finiteNumber(`metric(${this.name}).timeTo(threshold)`)(threshold);
    const opts = z.strictObject({ below: z.boolean().optional() }).safeParse(o);
    if (!opts.success) throw new InputError(`metric(${this.name}).timeTo: ${optionIssue(opts.error, ['below'])}`);
    const below = !!o.below;
    return this.make(`time to ${below ? '<=' : '>='} ${threshold}`, (s) => {
      for (let i = 0; i < s.values.length; i++) {
        if (below ? s.values[i] <= threshold : s.values[i] >= threshold) return s.hours[i];
      }
      return NaN;
    });
  }
}

/** A metric of the run's metrics.arrow; pick the statistic with the method. */
export function metric(name: string): MetricOutcomes {
  return new MetricOutcomes(name);
}

// ---- rows(table, spec) ----

type Accessor<T> = string | ((row: Row) => T);

export interface RowsSpec {
  where?: (row: Row) => boolean;
  groupBy?: Accessor<unknown>;
  mean?: Accessor<number>;
  sum?: Accessor<number>;
  count?: true;
  ratio?: [Accessor<number>, Accessor<number>];
  groups?: readonly (string | number | boolean)[];
}

const accessor = z.union([z.string().min(1), z.function()]);
const rowsSpec = z.strictObject({
  where: z.function().optional(),
  groupBy: accessor.optional(),
  mean: accessor.optional(),
  sum: accessor.optional(),
  count: z.literal(true).optional(),
  ratio: z.tuple([accessor, accessor]).optional(),
  groups: z.array(z.union([z.string(), z.number(), z.boolean()])).min(1).optional(),
});
const ROWS_KEYS = Object.keys(rowsSpec.shape);
const AGGREGATES = ['mean', 'sum', 'count', 'ratio'] as const;

/** One line for the first issue of an options object, naming the closest valid key for a typo. */
export function optionIssue(err: z.ZodError, keys: readonly string[]): string {
  const i = err.issues[0];
  if (i.code === 'unrecognized_keys') {
    const near = closestKey(i.keys[0], keys);
    return `unknown option ${i.keys[0]}; ${near ? `did you mean ${near}?` : `options: ${keys.join(', ')}`}`;
  }
  return `${i.path.join('.') || 'options'}: ${i.message}`;
}

function read<T>(a: Accessor<T>): (row: Row) => T {
  if (typeof a === 'function') return a;
  return (row) => {
    if (!(a in row)) {
      const near = closestKey(a, Object.keys(row));
      throw new InputError(`no column ${a}${near ? `; did you mean ${near}?` : `; columns: ${Object.keys(row).join(', ')}`}`);
    }
    return row[a] as T;
  };
}

/** Aggregates a table's rows: exactly one of mean, sum, count or ratio (sum of num / sum of den). */
export function rows(table: string, spec: RowsSpec): Outcome {
  const file = typeof table === 'string' && !table.endsWith('.arrow') ? `${table}.arrow` : table;
  if (typeof file !== 'string' || !TABLE_NAME.test(file)) throw new InputError(`rows(table): name a table of the run directory, e.g. 'posts', 'cascades.arrow' or 'agents/final' (the last agent snapshot) (got ${String(table)})`);
  const parsed = rowsSpec.safeParse(spec);
  if (!parsed.success) throw new InputError(`rows(${file}): ${optionIssue(parsed.error, ROWS_KEYS)}`);
  const given = AGGREGATES.filter((k) => spec[k] !== undefined);
  if (given.length !== 1) throw new InputError(`rows(${file}): give exactly one of ${AGGREGATES.join(', ')} (got ${given.length ? given.join(', ') : 'none'})`);
  if (spec.groups && spec.groupBy === undefined) throw new InputError(`rows(${file}): groups fixes the groups of groupBy; add groupBy`);
  const agg = given[0];
  const groupOf = spec.groupBy === undefined ? undefined : read(spec.groupBy);
  const num = agg === 'ratio' ? read(spec.ratio![0]) : agg === 'count' ? () => 1 : read((spec.mean ?? spec.sum)!);
  const den = agg === 'ratio' ? read(spec.ratio![1]) : agg === 'mean' ? () => 1 : undefined;
  const groups = spec.groups?.map(String);
  const label = `rows ${file} ${agg}${typeof spec.groupBy === 'string' ? ` by ${spec.groupBy}` : spec.groupBy ? ' by group' : ''}`;
  return new OutcomeImpl(
    'rows',
    label,
    (run) => {
      const acc = new Map<string, [number, number]>();
      for (const row of run.rows(file)) {
        if (spec.where && !spec.where(row)) continue;
        const g = groupOf ? String(groupOf(row)) : '';
        const a = acc.get(g) ?? [0, 0];
        a[0] += Number(num(row));
        a[1] += den ? Number(den(row)) : 0;
        acc.set(g, a);
      }
      const value = ([n, d]: [number, number]) => (den ? n / d : n);
      if (!groupOf) return value(acc.get('') ?? [agg === 'mean' || agg === 'ratio' ? NaN : 0, 0]);
      const out: Record<string, number> = {};
      const keys = groups ?? [...acc.keys()].sort();
      // A fixed group with no rows: NaN (there is nothing to aggregate).
      for (const k of keys) out[k] = acc.has(k) ? value(acc.get(k)!) : NaN;
      return out;
    },
    groups,
  );
}

// ---- custom(fn) ----

/** Any computation on the run: a number, or numbers by group. */
export function custom(fn: (run: RunView) => OutcomeValue, label = 'custom'): Outcome {
  if (typeof fn !== 'function') throw new InputError('custom(fn) needs a function (run) => number | Record<string, number>');
  return new OutcomeImpl('custom', label, (run) => {
    const v = fn(run);
    if (typeof v === 'number') return v;
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'number')) return v;
    throw new InputError(`a custom outcome returned ${JSON.stringify(v)}; return a number or an object of numbers by group`);
  });
}

/** Evaluates an outcome on a run, naming the outcome and the run in any error. */
export function evaluateOutcome(name: string, o: Outcome, run: RunView, runId: string): OutcomeValue {
  try {
    return o.evaluate(run);
  } catch (err) {
    const msg = (err as Error).message;
    if (isInputError(err)) throw new InputError(`outcome ${name} on run ${runId}: ${msg}`);
    throw new Error(`outcome ${name} on run ${runId}: ${msg}`);
  }
}
