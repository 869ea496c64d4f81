/**
 * `socsim describe`: a scenario's parameters (derived from its zod schema through JSON Schema, so
 * the list follows the schema as it grows: types, ranges, defaults and `.describe()` docs), or an
 * experiment's arms, reference, seeds, grid, outcomes and run count.
 */
import { z } from 'zod';
import { isExperimentFile, loadExperiment } from '../experiment/defineExperiment.ts';
import { gridPoints } from '../experiment/experimentPlan.ts';
import { loadScenario } from '../run/loadScenario.ts';

type Json = {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  description?: string;
  properties?: Record<string, Json>;
  items?: Json;
  oneOf?: Json[];
  anyOf?: Json[];
  allOf?: Json[];
  additionalProperties?: Json | boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
};

interface Line {
  path: string;
  type: string;
  def: string;
  doc: string;
}

const BIG = Number.MAX_SAFE_INTEGER;

function typeOf(s: Json): string {
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  const options = s.oneOf ?? s.anyOf;
  if (options) return options.map(typeOf).join(' | ');
  let t = Array.isArray(s.type) ? s.type.join(' | ') : (s.type ?? 'any');
  if (t === 'array' && s.items) t = `array of ${typeOf(s.items)}`;
  const lo = s.minimum !== undefined && s.minimum > -BIG ? `>= ${s.minimum}` : s.exclusiveMinimum !== undefined ? `> ${s.exclusiveMinimum}` : '';
  const hi = s.maximum !== undefined && s.maximum < BIG ? `<= ${s.maximum}` : s.exclusiveMaximum !== undefined ? `< ${s.exclusiveMaximum}` : '';
  const range = [lo, hi].filter(Boolean).join(', ');
  return range ? `${t} (${range})` : t;
}

/** The discriminator of a union: a property every option fixes with a const. */
function discriminator(options: Json[]): string | undefined {
  const first = options[0]?.properties ?? {};
  return Object.keys(first).find((k) => options.every((o) => o.properties?.[k]?.const !== undefined));
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Adds the lines of `s` at path `at`. `given` is the default an enclosing object's default gives
 * this value (undefined: none): it overrides the schema's own, as when a scenario defaults `graph`
 * to `{kind: "homophilous", meanFollowing: 45}` over the homophilous option's meanFollowing 20.
 */
function walk(s: Json, at: string, out: Line[], given?: unknown): void {
  const options = s.oneOf ?? s.anyOf;
  const value = given !== undefined ? given : s.default;
  const def = value === undefined ? '' : JSON.stringify(value);
  const inner = (k: string) => (isRecord(value) ? value[k] : undefined);
  if (options && options.some((o) => o.properties)) {
    const key = discriminator(options);
    out.push({ path: at, type: key ? `one of ${key}: ${options.map((o) => JSON.stringify(o.properties?.[key!]?.const)).join(' | ')}` : typeOf(s), def, doc: s.description ?? '' });
    for (const o of options) {
      const tag = key ? `(${key}=${String(o.properties?.[key]?.const)})` : '(option)';
      // An option's own doc (an intervention kind's paragraph) heads its fields.
      if (o.description) out.push({ path: `${at}${tag}`, type: 'object', def: '', doc: o.description });
      // The union's default is one option's: only that option's fields take their defaults from it.
      const chosen = key !== undefined && isRecord(value) && value[key] === o.properties?.[key]?.const;
      for (const [k, v] of Object.entries(o.properties ?? {})) if (k !== key) walk(v, `${at}${tag}.${k}`, out, chosen ? inner(k) : undefined);
    }
    return;
  }
  if (s.properties) {
    if (at) out.push({ path: at, type: 'object', def: def.length > 60 ? '{...}' : def, doc: s.description ?? '' });
    for (const [k, v] of Object.entries(s.properties)) walk(v, at ? `${at}.${k}` : k, out, inner(k));
    return;
  }
  if (s.items && (s.items.properties || s.items.oneOf || s.items.anyOf)) {
    out.push({ path: at, type: 'array', def, doc: s.description ?? '' });
    walk(s.items, `${at}[]`, out);
    return;
  }
  out.push({ path: at, type: typeOf(s), def, doc: s.description ?? '' });
}

function table(lines: Line[]): string {
  const head: Line = { path: 'parameter', type: 'type', def: 'default', doc: 'doc' };
  const all = [head, ...lines];
  const w = (k: keyof Line) => Math.min(48, Math.max(...all.map((l) => l[k].length)));
  const [wp, wt, wd] = [w('path'), w('type'), w('def')];
  return all.map((l) => `  ${l.path.padEnd(wp)}  ${l.type.padEnd(wt)}  ${l.def.padEnd(wd)}  ${l.doc}`.trimEnd()).join('\n') + '\n';
}

/** Every parameter of a zod params schema as lines (path, type, default, doc). */
export function parameterLines(schema: z.ZodType): Line[] {
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  const out: Line[] = [];
  walk(js, '', out);
  return out;
}

export async function describeTarget(arg: string): Promise<string> {
  if (await isExperimentFile(arg)) {
    const { experiment: e } = await loadExperiment(arg);
    const points = gridPoints(e.grid);
    const arms = Object.keys(e.arms);
    const lines = [
      `experiment ${e.name}: ${e.description}`,
      `scenario:  ${e.scenario}`,
      `arms:      ${arms.length}`,
      ...arms.map((a) => `  ${a}${a === e.reference ? ' (reference)' : ''}: ${JSON.stringify(e.arms[a])}`),
      `base params: ${JSON.stringify(e.params)}`,
      `reference: ${e.reference}${e.referenceGroup !== undefined ? `; grouped outcomes against group ${e.referenceGroup} of the same arm` : ''}`,
      `seeds:     ${e.seeds} (1..${e.seeds}, shared by every arm: common random numbers)`,
      `grid:      ${Object.keys(e.grid).length ? Object.entries(e.grid).map(([k, v]) => `${k} in ${JSON.stringify(v)}`).join('; ') : '(none)'}`,
      `defaults:  ${JSON.stringify(e.defaults)}`,
      `outcomes:  ${Object.keys(e.outcomes).length}`,
      ...Object.entries(e.outcomes).map(([n, o]) => `  ${n}: ${o.label}${o.groups ? ` (groups ${o.groups.join(', ')})` : ''}`),
      `runs:      ${arms.length * points.length * e.seeds} (${arms.length} arms x ${points.length} grid points x ${e.seeds} seeds)`,
    ];
    return lines.join('\n') + '\n';
  }
  const { scenario } = await loadScenario(arg);
  const d = scenario.defaults;
  return (
    `scenario ${scenario.name}: ${scenario.description}\n` +
    `defaults: ${d.agents} agents, ${d.steps} steps of ${d.stepSeconds ?? 3600} s${scenario.acceptsGraph ? '; accepts --graph FILE' : ''}\n` +
    `parameters (set with --set key=value, --params FILE.json, or an experiment's params/arms):\n` +
    table(parameterLines(scenario.params))
  );
}
