/**
 * Strict scenario parameters: every object in a params schema must reject unknown keys (so a
 * mistyped `--set` name is an error, never silently dropped), and an unknown key is reported with
 * its full dotted path and the closest valid key at that level.
 *
 * Schemas are walked through zod 4's definitions (`schema._zod.def`): defaults, optionals and other
 * wrappers are looked through; a discriminated union is resolved by the input's discriminator.
 */
import type { z } from 'zod';
import { InputError } from '../../sim-core/errors.ts';

type Schema = z.core.$ZodType;
// The parts of zod's definitions read here; every schema's `_zod.def` has a `type`.
interface Def {
  type: string;
  innerType?: Schema;
  in?: Schema;
  getter?: () => Schema;
  shape?: Record<string, Schema>;
  catchall?: Schema;
  options?: Schema[];
  discriminator?: string;
  keyType?: Schema;
  valueType?: Schema;
  element?: Schema;
  items?: Schema[];
  rest?: Schema | null;
  left?: Schema;
  right?: Schema;
  entries?: Record<string, string | number>;
  values?: unknown[];
}

const defOf = (s: Schema): Def => s._zod.def as unknown as Def;

/** Looks through wrappers that do not change which keys an object takes. */
function unwrap(s: Schema): Schema {
  for (let i = 0; i < 64; i++) {
    const d = defOf(s);
    if (d.innerType && ['default', 'prefault', 'optional', 'nullable', 'nonoptional', 'catch', 'readonly'].includes(d.type)) s = d.innerType;
    else if (d.type === 'pipe' && d.in) s = d.in;
    else if (d.type === 'lazy' && d.getter) s = d.getter();
    else return s;
  }
  return s;
}

function isPlain(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The literal values a discriminated-union option accepts for its discriminator. */
function discriminatorValues(option: Schema, key: string): unknown[] {
  const field = defOf(unwrap(option)).shape?.[key];
  if (!field) return [];
  const d = defOf(unwrap(field));
  if (d.type === 'literal') return d.values ?? [];
  if (d.type === 'enum') return Object.values(d.entries ?? {});
  return [];
}

/**
 * Resolves a union to the option the value is meant for: by the discriminator when there is one,
 * else the object option that knows most of the value's keys.
 */
function resolve(s: Schema, value: unknown): Schema {
  s = unwrap(s);
  const d = defOf(s);
  if (d.type !== 'union' || !d.options) return s;
  if (d.discriminator && isPlain(value)) {
    const hit = d.options.find((o) => discriminatorValues(o, d.discriminator!).includes(value[d.discriminator!]));
    if (hit) return resolve(hit, value);
  }
  const keys = isPlain(value) ? Object.keys(value) : [];
  let best: Schema | undefined;
  let bestScore = -1;
  for (const o of d.options) {
    const shape = defOf(unwrap(o)).shape;
    if (!shape) continue;
    const score = keys.filter((k) => k in shape).length;
    if (score > bestScore) [best, bestScore] = [o, score];
  }
  return best ? resolve(best, value) : s;
}

/** The schema of `key` inside the (resolved) schema `s`, if it has one. */
function child(s: Schema, key: PropertyKey): Schema | undefined {
  const d = defOf(s);
  if (d.type === 'object') return d.shape?.[String(key)] ?? d.catchall;
  if (d.type === 'record') return d.valueType;
  if (d.type === 'array') return d.element;
  if (d.type === 'tuple') return d.items?.[Number(key)] ?? d.rest ?? undefined;
  return undefined;
}

/** The keys an object (or enum-keyed record) at `path` accepts, given the input that was parsed. */
export function keysAt(schema: Schema, path: readonly PropertyKey[], input: unknown): string[] {
  let s: Schema | undefined = schema;
  let value = input;
  for (const seg of path) {
    s = child(resolve(s, value), seg);
    if (!s) return [];
    value = isPlain(value) || Array.isArray(value) ? (value as Record<PropertyKey, unknown>)[seg as string] : undefined;
  }
  const d = defOf(resolve(s, value));
  if (d.type === 'object') return Object.keys(d.shape ?? {});
  if (d.type === 'record' && d.keyType) {
    const k = defOf(unwrap(d.keyType));
    if (k.type === 'enum') return Object.values(k.entries ?? {}).map(String);
    if (k.type === 'literal') return (k.values ?? []).map(String);
  }
  return [];
}

/**
 * Paths of every object in `schema` that accepts keys it does not declare (a plain `z.object`
 * strips them, `z.looseObject` keeps them); empty when the schema is strict throughout. Paths are
 * dotted, with `[]` for array elements, `{}` for record values and `(kind=x)` for union options.
 */
export function looseObjects(schema: Schema): string[] {
  const found: string[] = [];
  const open = new Set<Schema>(); // schemas being walked: a lazy schema may contain itself
  const join = (at: string, part: string) => (at && !part.startsWith('[') && !part.startsWith('{') && !part.startsWith('(') ? `${at}.${part}` : at + part);
  const walk = (s: Schema, at: string) => {
    s = unwrap(s);
    if (open.has(s)) return;
    open.add(s);
    const d = defOf(s);
    switch (d.type) {
      case 'object':
        if (!d.catchall || defOf(d.catchall).type !== 'never') found.push(at || '(top level)');
        for (const [k, v] of Object.entries(d.shape ?? {})) walk(v, join(at, k));
        break;
      case 'union':
        for (const o of d.options ?? []) {
          const tag = d.discriminator ? discriminatorValues(o, d.discriminator).join('|') : '';
          walk(o, d.discriminator ? join(at, `(${d.discriminator}=${tag})`) : at);
        }
        break;
      case 'intersection':
        if (d.left) walk(d.left, at);
        if (d.right) walk(d.right, at);
        break;
      case 'array':
        if (d.element) walk(d.element, join(at, '[]'));
        break;
      case 'tuple':
        for (const [i, item] of (d.items ?? []).entries()) walk(item, join(at, `[${i}]`));
        if (d.rest) walk(d.rest, join(at, '[]'));
        break;
      case 'record':
        if (d.valueType) walk(d.valueType, join(at, '{}'));
        break;
    }
    open.delete(s);
  };
  walk(schema, '');
  return found;
}

/** Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent swaps. */
export function editDistance(a: string, b: string): number {
  const n = a.length;
  const m = b.length;
  let prev2 = new Array<number>(m + 1).fill(0);
  let prev = Array.from({ length: m + 1 }, (_, j) => j);
  for (let i = 1; i <= n; i++) {
    const cur = new Array<number>(m + 1);
    cur[0] = i;
    for (let j = 1; j <= m; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) cur[j] = Math.min(cur[j], prev2[j - 2] + 1);
    }
    [prev2, prev] = [prev, cur];
  }
  return prev[m];
}

/**
 * The candidate nearest to `key` (case differences count half), or undefined when none is close
 * enough to be a plausible typo: at most a third of the key's length in edits (at least 1, at most 3).
 */
export function closestKey(key: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = Infinity;
  for (const c of candidates) {
    const score = editDistance(key.toLowerCase(), c.toLowerCase()) + editDistance(key, c) / 2;
    if (score < bestScore) [best, bestScore] = [c, score];
  }
  if (best === undefined) return undefined;
  const limit = Math.min(3, Math.max(1, Math.floor(key.length / 3)));
  return editDistance(key.toLowerCase(), best.toLowerCase()) <= limit ? best : undefined;
}

/**
 * One line for an unknown key: its dotted path and the closest valid key, or the valid keys at that
 * level when none is close (`valid` undefined: not known).
 */
export function unknownKeyMessage(path: readonly PropertyKey[], key: string, valid?: readonly string[]): string {
  const prefix = path.map(String).join('.');
  const full = (k: string) => (prefix ? `${prefix}.${k}` : k);
  if (valid === undefined) return `unknown parameter ${full(key)}; remove it or correct its name`;
  const near = closestKey(key, valid);
  if (near !== undefined) return `unknown parameter ${full(key)}; did you mean ${full(near)}?`;
  if (valid.length === 0) return `unknown parameter ${full(key)}; ${prefix || 'this level'} takes no parameters`;
  return `unknown parameter ${full(key)}; known${prefix ? ` under ${prefix}` : ''}: ${valid.join(', ')}`;
}

/**
 * Applies `--set` overrides to the defaults, key by key, except where an override picks another
 * option of a discriminated union (e.g. `graph.kind=barabasi-albert` over a homophilous default):
 * there the override replaces the default, so the old option's keys are not carried over (they
 * would be unknown keys of the new one).
 */
export function mergeParams(schema: Schema | undefined, base: unknown, over: unknown): unknown {
  if (!isPlain(base) || !isPlain(over)) return over;
  let s = schema ? unwrap(schema) : undefined;
  if (s) {
    const d = defOf(s);
    if (d.type === 'union' && d.discriminator) {
      const key = d.discriminator;
      if (key in over && over[key] !== base[key]) return over;
    }
    s = resolve(s, base);
  }
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = mergeParams(s && child(s, k), base[k], v);
  return out;
}

/**
 * Formats a zod error as one line naming the parameter and the fix. An unknown key comes first (a
 * typo often explains the other issues) and names the closest valid key; `schema` and `input` (what
 * was parsed) say which keys are valid where.
 */
export function paramError(scenario: string, err: z.ZodError, schema?: z.core.$ZodType, input?: unknown): InputError {
  const i = err.issues.find((x) => x.code === 'unrecognized_keys') ?? err.issues[0];
  if (i.code === 'unrecognized_keys') {
    const valid = schema ? keysAt(schema, i.path, input) : undefined;
    return new InputError(`scenario ${scenario}: ${unknownKeyMessage(i.path, i.keys[0], valid)}`);
  }
  const field = i.path.join('.') || '(parameters)';
  return new InputError(`scenario ${scenario}: parameter ${field}: ${i.message}; set it with --set ${field}=VALUE`);
}
