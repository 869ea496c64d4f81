/**
 * The published moments a calibration fits (`socsim calibrate --moments FILE.json`).
 *
 * The file is JSON, `{ "format": "socsim-moments/1", "moments": [ ... ] }`: moments are data (a
 * published value, its interval and where it was published), so a file that cannot run code, whose
 * bytes identify the calibration (calibration.json keeps their sha256 and a re-run must match it),
 * and that every tool can write. Each moment:
 *
 *   { "id": "up_score_ratio", "kind": "effect" | "pattern" | "summary", ...what it measures,
 *     "value": 1.25, "interval": [1.1, 1.4] (published 95%) or "se": 0.07,
 *     "source": { "paper": "Muchnik, Aral & Taylor, Science 2013", "where": "Fig. 2A" } }
 *
 * What it measures, by kind (`arm`, where allowed, is an arm of the calibration's experiment file,
 * default its reference arm):
 * - effect: `outcome` (an outcome of the experiment file), `arm`, `group` (for a grouped outcome),
 *   `versus`: `{ "arm": A }` (the same group in arm A) or `{ "group": G }` (group G of the same arm),
 *   `contrast`: "difference" (outcome - versus) or "ratio" (outcome / versus), per seed;
 * - pattern: `pattern`, an outcome name of `socsim validate`'s table (experiments/diffusion-facts.ts,
 *   e.g. never_reshared, within_1h), measured on `arm`'s runs as validate measures it;
 * - summary: a metrics column, `metric` with `step` (its value at that step) or `steps`
 *   ([FROM, TO]: its mean over those steps, both included); or a run table's rows, `table`
 *   (posts, cascades, ...) and `column`, optionally `where` (column: value equalities), with one of
 *   `quantile` (q in [0, 1], linear between order statistics), `atLeast` (the share of rows with
 *   column >= x) or `mean: true`.
 *
 * Anything else is an InputError of one line naming the file, the moment's field and the fix.
 */
import fs from 'node:fs';
import { z } from 'zod';
import { escapeControls, InputError } from '../../sim-core/errors.ts';
import { closestKey } from '../run/strictParams.ts';

export const MOMENTS_FORMAT = 'socsim-moments/1';
/** The two-sided 95% normal quantile, as published intervals round it: a 95% interval spans 2 x 1.96 standard errors. */
export const Z95 = 1.96;

const finite = z.number().refine(Number.isFinite, 'must be a finite number');
const name = z.string().min(1);
const step = z.number().int().min(0);

const common = {
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'ids use letters, digits, _, . and - (starting with a letter or digit)'),
  value: finite,
  interval: z.tuple([finite, finite]).optional(),
  se: z.number().positive().refine(Number.isFinite, 'must be a finite number').optional(),
  source: z.strictObject({ paper: name, where: name }),
  arm: name.optional(),
};

const effect = z.strictObject({
  ...common,
  kind: z.literal('effect'),
  outcome: name,
  group: name.optional(),
  versus: z.union([z.strictObject({ arm: name }), z.strictObject({ group: name })], { error: 'give {"arm": ARM} (the same group in another arm) or {"group": GROUP} (another group of the same arm)' }),
  contrast: z.enum(['difference', 'ratio']),
});

const pattern = z.strictObject({ ...common, kind: z.literal('pattern'), pattern: name });

const summary = z.strictObject({
  ...common,
  kind: z.literal('summary'),
  metric: name.optional(),
  step: step.optional(),
  steps: z.tuple([step, step]).optional(),
  table: name.optional(),
  column: name.optional(),
  where: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  quantile: z.number().min(0).max(1).optional(),
  atLeast: finite.optional(),
  mean: z.literal(true).optional(),
});

const moment = z.discriminatedUnion('kind', [effect, pattern, summary], { error: 'kind must be "effect", "pattern" or "summary"' });
const file = z.strictObject({ format: z.literal(MOMENTS_FORMAT, { error: `format must be "${MOMENTS_FORMAT}"` }), moments: z.array(moment).min(1, 'list at least one moment') });

export type EffectMoment = z.infer<typeof effect>;
export type PatternMoment = z.infer<typeof pattern>;
export type SummaryMoment = z.infer<typeof summary>;
export type Moment = z.infer<typeof moment>;

const KEYS: Record<string, readonly string[]> = {
  effect: Object.keys(effect.shape),
  pattern: Object.keys(pattern.shape),
  summary: Object.keys(summary.shape),
};

/** `moments[2].interval` from a zod path. */
const where = (p: readonly PropertyKey[]) => p.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i > 0 ? '.' : ''}${String(k)}`)).join('');

function issueLine(err: z.ZodError, raw: unknown): string {
  // A misspelt field is also a missing one: name the misspelling, with the field meant.
  const i = err.issues.find((x) => x.code === 'unrecognized_keys') ?? err.issues[0];
  const at = where(i.path);
  if (i.code === 'unrecognized_keys') {
    const m = i.path.length === 2 && i.path[0] === 'moments' && typeof i.path[1] === 'number' ? (raw as { moments: Array<{ kind?: string }> }).moments[i.path[1]] : undefined;
    const valid = m ? (KEYS[m.kind ?? ''] ?? []) : i.path.length === 0 ? ['format', 'moments'] : i.path.at(-1) === 'source' ? ['paper', 'where'] : [];
    const near = closestKey(i.keys[0], valid);
    return `${at ? `${at}.` : ''}${i.keys[0]} is not a field${near ? `; did you mean ${near}?` : valid.length ? `; fields: ${valid.join(', ')}` : ''}`;
  }
  if (i.code === 'invalid_type' && i.input === undefined) return `${at}: missing; give it`;
  return `${at || '(top level)'}: ${i.message}`;
}

/** The rules a schema cannot say: one measure per summary, a value inside its interval, ids once. */
function checkMoment(m: Moment, at: string): string | undefined {
  if ((m.interval === undefined) === (m.se === undefined)) return `${at}: give the published 95% "interval": [low, high] or the standard error "se", one of them`;
  if (m.interval) {
    const [lo, hi] = m.interval;
    if (!(lo < hi)) return `${at}.interval: [${lo}, ${hi}] is empty; give [low, high] with low < high`;
    if (m.value < lo || m.value > hi) return `${at}.value: ${m.value} is outside its interval [${lo}, ${hi}]; check the published figures`;
  }
  if (m.kind === 'effect') {
    if ('arm' in m.versus && m.versus.arm === (m.arm ?? undefined)) return `${at}.versus: arm ${m.versus.arm} is compared with itself; name another arm`;
    if ('group' in m.versus && m.group === undefined) return `${at}.versus: a group is compared with group ${m.versus.group}; give "group" too`;
    if ('group' in m.versus && m.versus.group === m.group) return `${at}.versus: group ${m.group} is compared with itself; name another group`;
  }
  if (m.kind !== 'summary') return undefined;
  const metricFields = (['step', 'steps'] as const).filter((k) => m[k] !== undefined);
  const tableFields = (['table', 'column', 'where', 'quantile', 'atLeast', 'mean'] as const).filter((k) => m[k] !== undefined);
  if ((m.metric === undefined) === (m.table === undefined)) return `${at}: a summary gives "metric" (a metrics column) or "table" (a run table), one of them`;
  if (m.metric !== undefined) {
    if (tableFields.length) return `${at}.${tableFields[0]}: belongs to a table summary; a metric summary takes "step" or "steps"`;
    if (metricFields.length !== 1) return `${at}: give "step" (the value at a step) or "steps": [FROM, TO] (the mean over them), one of them`;
    if (m.steps && m.steps[0] > m.steps[1]) return `${at}.steps: [${m.steps.join(', ')}] is empty; give [FROM, TO] with FROM <= TO`;
    return undefined;
  }
  if (metricFields.length) return `${at}.${metricFields[0]}: belongs to a metric summary; a table summary takes "quantile", "atLeast" or "mean"`;
  if (m.column === undefined) return `${at}: a table summary needs "column"`;
  const stats = (['quantile', 'atLeast', 'mean'] as const).filter((k) => m[k] !== undefined);
  if (stats.length !== 1) return `${at}: give one of "quantile" (0..1), "atLeast" (a share of rows) or "mean": true`;
  return undefined;
}

/** Reads and checks a moments file; an InputError of one line names the file and the field. */
export function readMoments(path: string): Moment[] {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    throw new InputError(`--moments ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new InputError(escapeControls(`${path}: not valid JSON (${(err as Error).message}); the file is {"format": "${MOMENTS_FORMAT}", "moments": [...]}`));
  }
  const r = file.safeParse(raw);
  if (!r.success) throw new InputError(escapeControls(`${path}: ${issueLine(r.error, raw)}`));
  const seen = new Set<string>();
  r.data.moments.forEach((m, i) => {
    const at = `moments[${i}]`;
    if (seen.has(m.id)) throw new InputError(escapeControls(`${path}: ${at}.id: ${m.id} is used twice; give each moment its own id`));
    seen.add(m.id);
    const problem = checkMoment(m, at);
    if (problem) throw new InputError(escapeControls(`${path}: ${problem}`));
  });
  return r.data.moments;
}

/** The published standard error: `se`, or the 95% interval's width over 2 x 1.96. */
export function sigmaOf(m: Pick<Moment, 'interval' | 'se'>): number {
  return m.se ?? (m.interval![1] - m.interval![0]) / (2 * Z95);
}

/** The moment's weight in the loss: 1 / sigma^2. */
export function weightOf(m: Pick<Moment, 'interval' | 'se'>): number {
  return 1 / sigmaOf(m) ** 2;
}
