/**
 * An experiment describes a set of runs of one scenario: arms (parameter overrides), a reference
 * arm, seeds 1..N shared by every arm (common random numbers), an optional grid of parameter
 * values, and outcomes measured on every run. `socsim experiment FILE` plans and runs it.
 *
 * The file is TypeScript with a default export:
 *
 *   export default defineExperiment({
 *     name: 'sir-beta', description: '...', scenario: 'sir',
 *     arms: { low: { beta: 0.03 }, high: { beta: 0.08 } },
 *     outcomes: { final_recovered: metric('recovered').final() },
 *   });
 *
 * Everything is checked strictly: unknown keys at any depth are errors naming the closest valid
 * key, and parameters are checked against the scenario's schema when the experiment is planned.
 */
import path from 'node:path';
import fs from 'node:fs';
import { z } from 'zod';
import { InputError } from '../../sim-core/errors.ts';
import { closestKey } from '../run/strictParams.ts';
import { isOutcome, type Outcome } from './outcomes.ts';
import { importUserModule } from '../importModule.ts';

export { custom, metric, rows, type Outcome, type Row, type RunView } from './outcomes.ts';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const nameOf = (what: string) => z.string().regex(NAME, `${what} names use letters, digits, '_', '.' and '-' (starting with a letter or digit)`);
const overrides = z.record(z.string(), z.unknown());
const gridValue = z.union([z.number().refine(Number.isFinite, 'grid values must be finite'), z.string(), z.boolean()]);

const experimentSchema = z.strictObject({
  name: nameOf('experiment'),
  description: z.string().min(1),
  scenario: z.string().min(1),
  /** Plugin modules (paths relative to the experiment file), loaded by it and by each of its runs. */
  plugins: z.array(z.string().min(1)).optional(),
  params: overrides.optional(),
  arms: z.record(nameOf('arm'), overrides).refine((a) => Object.keys(a).length > 0, 'declare at least one arm'),
  reference: z.string().optional(),
  /**
   * For grouped outcomes (e.g. treatment groups or veracity within each run): the group the others
   * are compared with, within the same arm and seed. Without it, every diff is against the
   * reference arm.
   */
  referenceGroup: z.string().min(1).optional(),
  seeds: z.number().int().min(1).max(100_000).optional(),
  grid: z.record(z.string().regex(/^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/, 'grid keys are dotted parameter paths, e.g. platform.feedSize'), z.array(gridValue).min(1)).optional(),
  defaults: z
    .strictObject({
      agents: z.number().int().min(1).optional(),
      hours: z.number().positive().optional(),
      steps: z.number().int().min(0).optional(),
      /** Simulated seconds per step (default: the scenario's). */
      stepSeconds: z.number().positive().optional(),
    })
    .refine((d) => d.hours === undefined || d.steps === undefined, 'give hours or steps, not both')
    .optional(),
  outcomes: z
    .record(nameOf('outcome'), z.custom<Outcome>(isOutcome, 'an outcome is built with metric(...), rows(...) or custom(...)'))
    .refine((o) => Object.keys(o).length > 0, 'declare at least one outcome'),
});

export type ExperimentInput = z.input<typeof experimentSchema>;

export interface Experiment {
  name: string;
  description: string;
  scenario: string;
  /** Plugin modules, relative to the experiment file. */
  plugins: string[];
  params: Record<string, unknown>;
  arms: Record<string, Record<string, unknown>>;
  reference: string;
  referenceGroup?: string;
  seeds: number;
  grid: Record<string, Array<number | string | boolean>>;
  defaults: { agents?: number; hours?: number; steps?: number; stepSeconds?: number };
  outcomes: Record<string, Outcome>;
}

const KEYS: Record<string, readonly string[]> = {
  '': Object.keys(experimentSchema.shape),
  defaults: ['agents', 'hours', 'steps', 'stepSeconds'],
};

/** One line for the first problem of an experiment definition. */
function issueLine(err: z.ZodError): string {
  const i = err.issues[0];
  const at = i.path.map(String).join('.');
  if (i.code === 'unrecognized_keys') {
    const valid = KEYS[at] ?? [];
    const near = closestKey(i.keys[0], valid);
    const full = at ? `${at}.${i.keys[0]}` : i.keys[0];
    return `unknown field ${full}; ${near ? `did you mean ${at ? `${at}.` : ''}${near}?` : `fields: ${valid.join(', ')}`}`;
  }
  return `${at || '(top level)'}: ${i.message}`;
}

/** Declares an experiment; checks its shape at import (an InputError names the field and the fix). */
export function defineExperiment(input: ExperimentInput): Experiment {
  const r = experimentSchema.safeParse(input);
  if (!r.success) throw new InputError(`experiment: ${issueLine(r.error)}`);
  const e = r.data;
  const arms = Object.keys(e.arms);
  const reference = e.reference ?? arms[0];
  if (!arms.includes(reference)) {
    const near = closestKey(reference, arms);
    throw new InputError(`experiment ${e.name}: reference ${reference} is not an arm; ${near ? `did you mean ${near}?` : `arms: ${arms.join(', ')}`}`);
  }
  return {
    name: e.name,
    description: e.description,
    scenario: e.scenario,
    plugins: e.plugins ?? [],
    params: e.params ?? {},
    arms: e.arms,
    reference,
    referenceGroup: e.referenceGroup,
    seeds: e.seeds ?? 10,
    grid: e.grid ?? {},
    defaults: e.defaults ?? {},
    outcomes: e.outcomes,
  };
}

function isExperiment(x: unknown): x is Experiment {
  const e = x as Experiment | null;
  return !!e && typeof e === 'object' && typeof e.name === 'string' && typeof e.arms === 'object' && typeof e.outcomes === 'object' && typeof e.reference === 'string';
}

/** Imports an experiment file; problems in it become one-line InputErrors naming the file. */
export async function loadExperiment(arg: string): Promise<{ experiment: Experiment; file: string }> {
  const file = path.resolve(arg);
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new InputError(`experiment file ${arg} not found; give the path of a .ts file that exports defineExperiment({...})`);
  const mod = (await importUserModule(file, arg)) as { default?: unknown };
  if (!isExperiment(mod.default)) throw new InputError(`${arg} does not export an experiment; export default defineExperiment({...})`);
  return { experiment: mod.default, file };
}

/** Whether a file looks like an experiment (for `describe`, which takes scenarios too). */
export async function isExperimentFile(arg: string): Promise<boolean> {
  if (!/\.(ts|mts|js|mjs)$/.test(arg) || !fs.existsSync(arg)) return false;
  return /\bdefineExperiment\s*\(/.test(fs.readFileSync(arg, 'utf8'));
}
