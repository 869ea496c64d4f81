/**
 * The observed series a calibration fits (`--target FILE.csv`) and the loss: normalised RMSE.
 *
 * The CSV has a header with a `step` column and one column per matched metric (`--match`), nothing
 * else; one row per step (whole numbers, each once), every cell a finite number. Blank lines and
 * lines starting with `#` are skipped. Any deviation is an InputError naming the file, the line
 * and the fix; a message that quotes the file has its control characters escaped (escapeControls).
 *
 * NRMSE of a simulated series y against the target t over the target's steps:
 *   sqrt(mean_s (y_s - t_s)^2) / (max_s t_s - min_s t_s)
 * (RMSE normalised by the target's range, as in the normalised RMSE OASIS reports for cascade
 * scale, depth and breadth). Several matched columns combine as the weighted mean of their NRMSEs.
 */
import fs from 'node:fs';
import { InputError, escapeControls } from '../../sim-core/errors.ts';

export interface Match {
  column: string;
  weight: number;
}

export interface Target {
  file: string;
  steps: number[];
  /** Per matched column, the target values in the order of `steps`. */
  values: Record<string, number[]>;
}

/** `--match COLUMN[:WEIGHT]`. */
export function parseMatch(raw: string): Match {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)(?::(.+))?$/.exec(raw.trim());
  if (!m) throw new InputError(`--match expects a metrics column name, optionally with :WEIGHT (e.g. infectious or infectious:2); got "${raw}"`);
  const weight = m[2] === undefined ? 1 : Number(m[2]);
  if (!Number.isFinite(weight) || weight <= 0) throw new InputError(`--match ${raw}: the weight must be a number > 0`);
  return { column: m[1], weight };
}

const splitCsv = (line: string) => line.split(',').map((c) => c.trim().replace(/^"(.*)"$/, '$1'));

/** The InputError for a message about the target file's content, which it may quote. */
const badTarget = (message: string) => new InputError(escapeControls(message));

/** Reads and checks the target file against the matched columns. */
export function readTarget(file: string, matches: Match[]): Target {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new InputError(`--target ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const lines = text.split(/\r?\n/).map((l, i) => ({ l, no: i + 1 })).filter(({ l }) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  if (lines.length === 0) throw new InputError(`--target ${file}: empty; give a header line "step,${matches.map((m) => m.column).join(',')}" and one row per step`);
  const header = splitCsv(lines[0].l);
  const wanted = ['step', ...matches.map((m) => m.column)];
  const seen = new Set<string>();
  for (const h of header) {
    if (seen.has(h)) throw badTarget(`${file} line ${lines[0].no}: column ${h} appears twice`);
    seen.add(h);
    if (!wanted.includes(h)) throw badTarget(`${file} line ${lines[0].no}: column ${h} is not matched; add --match ${h} or remove the column (expected ${wanted.join(',')})`);
  }
  for (const w of wanted) if (!seen.has(w)) throw badTarget(`${file} line ${lines[0].no}: no column ${w}; the header must be ${wanted.join(',')} (in any order)`);
  const steps: number[] = [];
  const values: Record<string, number[]> = Object.fromEntries(matches.map((m) => [m.column, []]));
  const stepSeen = new Set<number>();
  for (const { l, no } of lines.slice(1)) {
    const cells = splitCsv(l);
    if (cells.length !== header.length) throw badTarget(`${file} line ${no}: ${cells.length} cells, the header has ${header.length}`);
    cells.forEach((c, j) => {
      const v = c === '' ? NaN : Number(c);
      if (!Number.isFinite(v)) throw badTarget(`${file} line ${no}: column ${header[j]} is "${c}", not a finite number`);
      if (header[j] === 'step') {
        if (!Number.isInteger(v)) throw badTarget(`${file} line ${no}: step ${c} is not a whole number`);
        if (stepSeen.has(v)) throw badTarget(`${file} line ${no}: step ${v} appears twice`);
        stepSeen.add(v);
        steps.push(v);
      } else values[header[j]].push(v);
    });
  }
  if (steps.length < 2) throw badTarget(`${file}: ${steps.length} data rows; a calibration needs at least 2 steps`);
  for (const m of matches) {
    const v = values[m.column];
    if (Math.max(...v) === Math.min(...v)) throw badTarget(`${file}: column ${m.column} is constant, so its NRMSE (RMSE / range) is undefined; match a column that varies`);
  }
  return { file, steps, values };
}

/** RMSE of `sim` against `target`, divided by the target's range. */
export function nrmse(sim: ArrayLike<number>, target: ArrayLike<number>): number {
  let ss = 0;
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < target.length; i++) {
    ss += (sim[i] - target[i]) ** 2;
    lo = Math.min(lo, target[i]);
    hi = Math.max(hi, target[i]);
  }
  return Math.sqrt(ss / target.length) / (hi - lo);
}

/** The weighted mean of each matched column's NRMSE; `sim[column]` aligned with `target.steps`. */
export function loss(sim: Record<string, ArrayLike<number>>, target: Target, matches: Match[]): number {
  let num = 0;
  let den = 0;
  for (const m of matches) {
    num += m.weight * nrmse(sim[m.column], target.values[m.column]);
    den += m.weight;
  }
  return num / den;
}
