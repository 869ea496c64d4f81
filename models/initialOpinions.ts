/**
 * Where the opinion models (DeGroot, Deffuant, Hegselmann-Krause) start: the `initial` scenario
 * parameter and the code that fills the agent column `opinion` (float32 in [-1, 1]) in `init`.
 *
 * Kinds:
 * - `uniform` on [lo, hi] (default [-1, 1], socsim's opinion scale), drawn from the counter RNG,
 *   stream `opinion.initial`, keyed by the row, so one seed gives every opinion model the same
 *   start. NDlib starts AlgorithmicBias uniform on [0, 1] and HK uniform on [-1, 1].
 * - `leanings`: the synthetic population's opinions as built (population/synthesize.ts): a mix of
 *   five bumps, one per political leaning (centres -1, -0.5, 0, 0.5, 1, weights 0.15, 0.2, 0.3,
 *   0.2, 0.15, spread 0.15, clipped to [-1, 1], so half of each end bump, 15% of agents, sits
 *   exactly at -1 or 1); a homophilous graph is built on these. The column is left as it is.
 * - `column`: a copy of another agent column (one value per agent): its values as they are, each
 *   in [-1, 1], or, with `values`, `values[code]` for a column of integer codes (e.g.
 *   `column: "leaning", values: [-1, -0.5, 0, 0.5, 1]`).
 * - `file`: a text file with one opinion per line, in agent row order (the row order of
 *   `agents/step-000000.arrow`); blank lines and lines starting with `#` are skipped; exactly one
 *   value per agent, each a finite number in [-1, 1]. A bad file is an input error naming the file
 *   and line (the CLI exits 2).
 */
import fs from 'node:fs';
import { z } from 'zod';
import { InputError } from '../sim-core/errors.ts';
import { keyOf, streamOf, uniform } from '../sim-core/rng.ts';
import type { World } from '../sim-core/phase.ts';

export const INITIAL_KINDS = ['uniform', 'leanings', 'column', 'file'] as const;
export interface InitialOpinion {
  kind: (typeof INITIAL_KINDS)[number];
  /** Bounds of `uniform`, in [-1, 1]. */
  lo?: number;
  hi?: number;
  /** `column`: the agent column to copy. */
  column?: string;
  /** `column`: opinion for each integer code of the column. */
  values?: readonly number[];
  /** `file`: path of the opinions file (relative paths resolve against the working directory). */
  path?: string;
}

export const INITIAL_DOC =
  'initial opinions: {kind: "uniform", lo, hi} (uniform on [lo, hi] within [-1, 1]; default [-1, 1]), ' +
  '{kind: "leanings"} (the population\'s five-bump mix), {kind: "column", column, values?} (a copy of an agent column, ' +
  'or values[code] for a column of codes) or {kind: "file", path} (one opinion per line in agent row order; # comments)';

/** Which fields each kind takes besides `kind` (`lo`/`hi` carry defaults, so they count only when not -1/1). */
const FIELDS: Record<InitialOpinion['kind'], readonly string[]> = { uniform: ['lo', 'hi'], leanings: [], column: ['column', 'values'], file: ['path'] };

/**
 * The `initial` scenario parameter, defaulting to `kind`. `lo`/`hi` carry defaults because
 * `--set initial.kind=file` merges into the parsed defaults, so they count as given only when they
 * differ from -1 and 1.
 */
export function initialOpinionParam(kind: InitialOpinion['kind']) {
  return z
    .strictObject({
      kind: z.enum(INITIAL_KINDS).default(kind).describe('where the opinions come from: uniform, leanings, column or file'),
      lo: z.number().min(-1).max(1).default(-1).describe('kind uniform: lower end'),
      hi: z.number().min(-1).max(1).default(1).describe('kind uniform: upper end'),
      column: z.string().min(1).optional().describe('kind column: the agent column to copy'),
      values: z.array(z.number().min(-1).max(1)).min(1).optional().describe("kind column: the opinion of each code of a column of codes (values[code])"),
      path: z.string().min(1).optional().describe('kind file: one opinion per line, in agent row order'),
    })
    .superRefine((v, ctx) => {
      if (v.lo > v.hi) ctx.addIssue({ code: 'custom', path: ['hi'], message: `must be >= lo (${v.lo})` });
      const given = (f: string) => (f === 'lo' ? v.lo !== -1 : f === 'hi' ? v.hi !== 1 : v[f as keyof typeof v] !== undefined);
      for (const f of ['lo', 'hi', 'column', 'values', 'path']) {
        if (given(f) && !FIELDS[v.kind].includes(f)) {
          const owner = (Object.keys(FIELDS) as Array<InitialOpinion['kind']>).find((k) => FIELDS[k].includes(f));
          ctx.addIssue({ code: 'custom', path: [f], message: `applies to kind "${owner}" only` });
        }
      }
      if (v.kind === 'column' && v.column === undefined) ctx.addIssue({ code: 'custom', path: ['column'], message: 'kind "column" needs the name of an agent column' });
      if (v.kind === 'file' && v.path === undefined) ctx.addIssue({ code: 'custom', path: ['path'], message: 'kind "file" needs the path of an opinions file' });
    })
    .default({ kind, lo: -1, hi: 1 })
    .describe(`${INITIAL_DOC}; default ${kind === 'uniform' ? 'uniform on [-1, 1]' : kind}`);
}

/** Checks `initial` when a phase is built (throws on what the scenario schema would reject). */
export function checkInitial(initial: InitialOpinion | undefined): void {
  if (!initial) return;
  if (!INITIAL_KINDS.includes(initial.kind)) throw new Error(`initial opinions: kind must be one of ${INITIAL_KINDS.join(', ')} (got ${initial.kind})`);
  const { lo = -1, hi = 1 } = initial;
  if (!(lo >= -1 && lo <= hi && hi <= 1)) throw new Error(`initial opinions need -1 <= lo <= hi <= 1 (got ${lo}, ${hi})`);
  if (initial.kind === 'column' && !initial.column) throw new Error('initial opinions of kind "column" need `column`');
  if (initial.kind === 'file' && !initial.path) throw new Error('initial opinions of kind "file" need `path`');
  if (initial.values && !initial.values.every((v) => v >= -1 && v <= 1)) throw new Error('initial opinions: values must lie in [-1, 1]');
}

/** Fills the `opinion` column as `initial` says (nothing without it, or for `leanings`). */
export function initOpinions(world: World, initial: InitialOpinion | undefined): void {
  if (!initial || initial.kind === 'leanings') return;
  const x = world.agents.columns.opinion as Float32Array;
  switch (initial.kind) {
    case 'uniform': {
      const { lo = -1, hi = 1 } = initial;
      const key = keyOf(world.seed, streamOf('opinion.initial'), 0);
      for (let i = 0; i < x.length; i++) x[i] = lo + (hi - lo) * uniform(key, i);
      return;
    }
    case 'column':
      return fromColumn(world, x, initial.column!, initial.values);
    case 'file':
      return x.set(readOpinionsFile(initial.path!, x.length));
  }
}

function fromColumn(world: World, x: Float32Array, name: string, values: readonly number[] | undefined): void {
  const src = world.agents.columns[name];
  const where = `initial opinions: column "${name}"`;
  if (!src) throw new InputError(`${where} is not an agent column; the agents have ${Object.keys(world.agents.columns).join(', ')}`);
  if (src.length !== x.length) throw new InputError(`${where} holds ${src.length / x.length} values per agent; it needs one`);
  for (let i = 0; i < x.length; i++) {
    const v = src[i];
    if (values) {
      if (!(Number.isInteger(v) && v >= 0 && v < values.length)) throw new InputError(`${where}: row ${i} holds ${v}, which initial.values (${values.length} of them) has no entry for`);
      x[i] = values[v];
    } else {
      if (!(v >= -1 && v <= 1)) throw new InputError(`${where}: row ${i} holds ${v}, outside [-1, 1]; map codes with initial.values or pick another column`);
      x[i] = v;
    }
  }
}

/** Reads an opinions file (format above) for `agents` agents; throws InputError naming file and line. */
export function readOpinionsFile(file: string, agents: number): Float32Array {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`initial opinions file ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const out = new Float32Array(agents);
  const lines = text.split('\n');
  let n = 0;
  for (let k = 0; k < lines.length; k++) {
    const s = lines[k].trim();
    if (s === '' || s.startsWith('#')) continue;
    const at = `initial opinions file ${file} line ${k + 1}`;
    const v = Number(s);
    if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s) || !Number.isFinite(v)) throw new InputError(`${at}: "${s.slice(0, 40)}" is not a number`);
    if (v < -1 || v > 1) throw new InputError(`${at}: ${s} is outside [-1, 1]`);
    if (n === agents) throw new InputError(`${at}: more opinions than the run's ${agents} agents`);
    out[n++] = v;
  }
  const last = lines.length - (text.endsWith('\n') ? 1 : 0);
  if (n < agents) throw new InputError(`initial opinions file ${file} line ${last}: the file ends after ${n} opinions; the run has ${agents} agents, give one per agent`);
  return out;
}
