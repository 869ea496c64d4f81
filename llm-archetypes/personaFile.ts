/**
 * `--llm-personas FILE`: a JSON object that replaces or extends the persona template
 * (personas.ts). Fields, all optional:
 *   "template":   the persona template for every archetype, e.g.
 *                 "people aged {age_band}, politically {leaning}, {activity_tier} activity; {gender}"
 *   "attributes": added attributes, each a text per label of one of the archetype's own attributes:
 *                 {"worry": {"by": "leaning", "values": {"left": "climate", "right": "taxes", ...}}}
 *   "archetypes": a template for single archetypes, keyed AGE_BAND/LEANING/ACTIVITY_TIER:
 *                 {"18-24/left/high": "students who post about campus politics all day"}
 * The file's structure is checked here, when the run's options are; its names and labels are
 * checked against the population once it is built (personas.ts). Every error is one line naming
 * the file, the field and the fix.
 */
import fs from 'node:fs';
import { InputError } from '../sim-core/errors.ts';
import { ARCHETYPE_ATTRIBUTES, type ArchetypeAttribute, type PersonaSpec } from './personas.ts';

const FIELDS = ['template', 'attributes', 'archetypes'];
const NAME = /^[a-z_]+$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads and checks a persona file; throws an InputError naming the file and the field. */
export function loadPersonaFile(file: string): PersonaSpec {
  const bad = (field: string, problem: string) => new InputError(`--llm-personas ${file}: ${field} ${problem}`);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`--llm-personas ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); give the path of a JSON persona file`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new InputError(`--llm-personas ${file}: not valid JSON (${(e as Error).message}); the file is one JSON object with "template", "attributes" and/or "archetypes"`);
  }
  if (!isObject(raw)) throw new InputError(`--llm-personas ${file}: must be one JSON object with "template", "attributes" and/or "archetypes"`);
  const unknown = Object.keys(raw).find((k) => !FIELDS.includes(k));
  if (unknown !== undefined) throw bad(`"${unknown}"`, `is not a persona file field; use ${FIELDS.map((f) => `"${f}"`).join(', ')}`);
  const spec: PersonaSpec = { file };
  const text1 = (v: unknown, field: string): string => {
    if (typeof v !== 'string' || v.trim() === '') throw bad(field, 'must be a non-empty string');
    return v;
  };
  if (raw.template !== undefined) spec.template = text1(raw.template, 'template');
  if (raw.attributes !== undefined) {
    if (!isObject(raw.attributes)) throw bad('attributes', 'must be an object: {"NAME": {"by": "leaning", "values": {"LABEL": "text", ...}}}');
    spec.attributes = {};
    for (const [name, a] of Object.entries(raw.attributes)) {
      const field = `attributes.${name}`;
      if (!NAME.test(name)) throw bad(field, 'has a name placeholders cannot use; use lower-case letters and _ only');
      if ((ARCHETYPE_ATTRIBUTES as readonly string[]).includes(name) || name === 'members') throw bad(field, 'names an attribute socsim already gives; choose another name');
      if (!isObject(a)) throw bad(field, 'must be {"by": ATTRIBUTE, "values": {"LABEL": "text", ...}}');
      const extra = Object.keys(a).find((k) => k !== 'by' && k !== 'values');
      if (extra !== undefined) throw bad(`${field}.${extra}`, 'is not a field of an added attribute; use "by" and "values"');
      if (!(ARCHETYPE_ATTRIBUTES as readonly string[]).includes(a.by as string)) throw bad(`${field}.by`, `must be one of ${ARCHETYPE_ATTRIBUTES.map((x) => `"${x}"`).join(', ')}`);
      if (!isObject(a.values)) throw bad(`${field}.values`, 'must be an object of texts, one per label: {"LABEL": "text", ...}');
      const values: Record<string, string> = {};
      for (const [label, t] of Object.entries(a.values)) values[label] = text1(t, `${field}.values."${label}"`);
      spec.attributes[name] = { by: a.by as ArchetypeAttribute, values };
    }
  }
  if (raw.archetypes !== undefined) {
    if (!isObject(raw.archetypes)) throw bad('archetypes', 'must be an object: {"AGE_BAND/LEANING/ACTIVITY_TIER": "template", ...}');
    spec.archetypes = {};
    for (const [key, t] of Object.entries(raw.archetypes)) {
      if (key.split('/').length !== 3) throw bad(`archetypes."${key}"`, 'is not a key AGE_BAND/LEANING/ACTIVITY_TIER, e.g. "18-24/left/high"');
      spec.archetypes[key] = text1(t, `archetypes."${key}"`);
    }
  }
  return spec;
}
