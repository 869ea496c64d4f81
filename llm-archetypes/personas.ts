/**
 * Persona text per archetype, from a template over the population's attributes. An archetype is
 * an (age band, leaning, activity tier) cell (population/kernels.ts: archetype = (age x L +
 * leaning) x T + tier); its persona template may name:
 *   {age_band} {leaning} {activity_tier}  the archetype's own labels;
 *   {members}                             how many agents it has;
 *   {NAME} for every other categorical attribute of the population (gender, region, chronotype,
 *                                         and any dictionary column a scenario adds): the mix of
 *                                         its members, e.g. "52% female, 46% male, 2% other";
 *   {NAME} for each attribute a persona file adds (personaFile.ts), a text per label of one of
 *                                         the archetype's own attributes.
 * The default template uses the archetype's own labels only, in the words socsim has always used,
 * so recorded caches keep matching their prompts.
 */
import type { Table } from '../sim-core/table.ts';
import { InputError } from '../sim-core/errors.ts';

export const DEFAULT_PERSONA_TEMPLATE = 'social-media users aged {age_band}, politically {leaning}, with {activity_tier} activity on the platform';

/** The attributes that make an archetype, in the order of its index. */
export const ARCHETYPE_ATTRIBUTES = ['age_band', 'leaning', 'activity_tier'] as const;
export type ArchetypeAttribute = (typeof ARCHETYPE_ATTRIBUTES)[number];

/** What a persona file gives (validated by personaFile.ts); every field optional. */
export interface PersonaSpec {
  /** Where it came from, for error messages. */
  file?: string;
  template?: string;
  /** Added attributes: a text per label of one of the archetype's own attributes. */
  attributes?: Record<string, { by: ArchetypeAttribute; values: Record<string, string> }>;
  /** Templates for single archetypes, keyed "AGE_BAND/LEANING/ACTIVITY_TIER". */
  archetypes?: Record<string, string>;
}

/** A template's placeholder names, in order of appearance. */
export function placeholders(template: string): string[] {
  return [...template.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]);
}

/** "52% female, 46% male, 2% other": the labels members have, most common first. */
function mix(counts: number[], labels: readonly string[], total: number): string {
  if (total === 0) return 'none';
  return counts
    .map((c, i) => [c, i] as const)
    .filter(([c]) => c > 0)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1])
    .map(([c, i]) => `${Math.round((100 * c) / total)}% ${labels[i]}`)
    .join(', ');
}

/**
 * The placeholder values of every archetype: its own labels, its member count, the member mix of
 * each other categorical column of `agents`, and the spec's added attributes.
 */
export function personaValues(agents: Table, spec: PersonaSpec = {}): Array<Record<string, string>> {
  const dict = (name: ArchetypeAttribute) => {
    const d = agents.schema[name]?.dictionary;
    if (!d) throw new Error(`the population has no ${name} labels; archetype personas need them`);
    return d;
  };
  const [A, L, T] = ARCHETYPE_ATTRIBUTES.map((a) => dict(a));
  const K = A.length * L.length * T.length;
  const archetype = agents.columns.archetype;
  const members = new Array<number>(K).fill(0);
  for (let i = 0; i < agents.length; i++) members[archetype[i]]++;
  // Member counts per (archetype, label) of every other categorical column.
  const others = Object.entries(agents.schema).filter(([name, c]) => c.dictionary && !(ARCHETYPE_ATTRIBUTES as readonly string[]).includes(name));
  const counts = others.map(([name, c]) => {
    const n = c.dictionary!.length;
    const col = agents.columns[name];
    const out = new Array<number>(K * n).fill(0);
    for (let i = 0; i < agents.length; i++) out[archetype[i] * n + col[i]]++;
    return out;
  });
  return Array.from({ length: K }, (_, k) => {
    const own: Record<ArchetypeAttribute, string> = { age_band: A[Math.floor(k / (L.length * T.length))], leaning: L[Math.floor(k / T.length) % L.length], activity_tier: T[k % T.length] };
    const v: Record<string, string> = { ...own, members: String(members[k]) };
    others.forEach(([name, c], j) => {
      const n = c.dictionary!.length;
      v[name] = mix(counts[j].slice(k * n, (k + 1) * n), c.dictionary!, members[k]);
    });
    for (const [name, a] of Object.entries(spec.attributes ?? {})) v[name] = a.values[own[a.by]];
    return v;
  });
}

/** The key of an archetype in a persona file's `archetypes`: "AGE_BAND/LEANING/ACTIVITY_TIER". */
export const archetypeKey = (v: Record<string, string>) => ARCHETYPE_ATTRIBUTES.map((a) => v[a]).join('/');

/**
 * Persona text per archetype, in archetype order. The spec is checked against the population
 * first: an added attribute must give a text for each label it is keyed by, an archetype key must
 * name labels the population has, and every placeholder must have a value (InputError naming the
 * file, the field and the names it may use).
 */
export function archetypePersonas(agents: Table, spec: PersonaSpec = {}): string[] {
  const values = personaValues(agents, spec);
  const where = spec.file ? `--llm-personas ${spec.file}` : 'persona template';
  for (const [name, a] of Object.entries(spec.attributes ?? {})) {
    const labels = agents.schema[a.by].dictionary!;
    const missing = labels.filter((l) => !(l in a.values));
    if (missing.length) throw new InputError(`${where}: attributes.${name}.values has no text for ${a.by} "${missing[0]}"; give one for each of ${labels.map((l) => `"${l}"`).join(', ')}`);
    const unknown = Object.keys(a.values).filter((l) => !labels.includes(l));
    if (unknown.length) throw new InputError(`${where}: attributes.${name}.values names ${a.by} "${unknown[0]}", which the population does not have; use ${labels.map((l) => `"${l}"`).join(', ')}`);
  }
  const keys = new Set(values.map(archetypeKey));
  for (const key of Object.keys(spec.archetypes ?? {})) {
    if (!keys.has(key)) throw new InputError(`${where}: archetypes."${key}" is not an archetype of the population; keys are AGE_BAND/LEANING/ACTIVITY_TIER, e.g. "${values[0] ? archetypeKey(values[0]) : ''}"`);
  }
  const names = Object.keys(values[0] ?? {});
  const check = (template: string, field: string) => {
    const bad = placeholders(template).find((p) => !names.includes(p));
    if (bad !== undefined) throw new InputError(`${where}: ${field} uses {${bad}}, which the population does not have; use ${names.map((n) => `{${n}}`).join(', ')}`);
  };
  const template = spec.template ?? DEFAULT_PERSONA_TEMPLATE;
  check(template, 'template');
  for (const [key, t] of Object.entries(spec.archetypes ?? {})) check(t, `archetypes."${key}"`);
  return values.map((v) => (spec.archetypes?.[archetypeKey(v)] ?? template).replace(/\{([a-z_]+)\}/g, (_, name: string) => v[name]));
}
