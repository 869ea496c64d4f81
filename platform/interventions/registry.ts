/**
 * The intervention kinds a run knows: the bundled ones, listed here in the order of
 * interventions.arrow's `kind` dictionary, then those a study's plugins register. The scenario
 * schema's `interventions` list, `INTERVENTION_KINDS`, the union `socsim describe` lists and the
 * log's dictionary all derive from this list.
 *
 * The list's item schema is a discriminated union built from the kinds registered when a list of
 * interventions is first parsed in the process (zod keeps what a lazy schema resolved to), so
 * plugins register before that; registering a new kind later is refused with an error that says
 * so, rather than leaving the kind unknown to the schema.
 */
import { z } from 'zod';
import { InputError } from '../../sim-core/errors.ts';
import type { AnyInterventionKind, InterventionKind, Parsed } from './kind.ts';
import type { InterventionBase } from './time.ts';
import assign from './assign.ts';
import downrank from './downrank.ts';
import inject from './inject.ts';
import label from './label.ts';
import remove from './remove.ts';
import setParam from './setParam.ts';
import setRanker from './setRanker.ts';
import suspend from './suspend.ts';

/** The bundled kinds, in the order of interventions.arrow's `kind` dictionary. */
export const BUNDLED_KINDS = [label, remove, downrank, suspend, inject, setRanker, setParam, assign] as const;
export const INTERVENTION_KINDS = BUNDLED_KINDS.map((k) => k.name);

type ParsedOf<K> = K extends InterventionKind<infer N, infer F> ? Parsed<N, F> : never;
/** A parsed intervention of one of the bundled kinds. */
export type Intervention = ParsedOf<(typeof BUNDLED_KINDS)[number]>;

const kinds: AnyInterventionKind[] = [...BUNDLED_KINDS];
/** Set once a list of interventions has been parsed: the union zod holds is then fixed. */
let parsed = false;

/**
 * Adds a study's kind (a plugin's `defineIntervention`) to the kinds every later parse and run
 * knows. The same kind again is a no-op; another kind under a known name is refused.
 */
export function registerInterventionKind(kind: AnyInterventionKind): void {
  const known = kinds.find((k) => k.name === kind.name);
  if (known === kind) return;
  if (kind.type !== 'intervention' || !kind.schema) throw new InputError(`intervention kind ${kind.name}: make it with defineIntervention({ name, doc, fields, apply })`);
  if (known) throw new InputError(`intervention kind "${kind.name}" is already defined (${BUNDLED_KINDS.includes(known as never) ? 'bundled' : 'by another plugin'}); give the plugin's kind another name`);
  if (parsed) throw new InputError(`intervention kind "${kind.name}" was registered after a scenario's interventions were parsed in this process; load plugins before the first run that has interventions`);
  kinds.push(kind);
}

/** Every known kind: the bundled ones, then the plugins' in the order they registered. */
export function interventionKinds(): readonly AnyInterventionKind[] {
  return kinds;
}

/** The kind named `name` (an intervention's `kind`, which the schema has checked). */
export function kindOf(name: string): AnyInterventionKind {
  const k = kinds.find((x) => x.name === name);
  if (!k) throw new Error(`intervention kind ${name} is not registered`);
  return k;
}

/** The parsed list, whatever its kinds. */
type AnyIntervention = InterventionBase & Record<string, unknown>;

let union: { size: number; schema: z.ZodType<AnyIntervention, unknown> } | undefined;
/** The discriminated union of the kinds known now (rebuilt when a kind registers). */
function currentUnion(): z.ZodType<AnyIntervention, unknown> {
  if (union?.size !== kinds.length) union = { size: kinds.length, schema: z.discriminatedUnion('kind', kinds.map((k) => k.schema) as unknown as [z.ZodObject, ...z.ZodObject[]]) as unknown as z.ZodType<AnyIntervention, unknown> };
  return union.schema;
}

/**
 * The scenario parameter: a list of interventions, each checked by its kind's schema, then as a
 * list: the time given once, each kind's own checks, defined story tags unique and every post
 * selector's `tag` defined.
 */
export const interventionList = z
  .array(z.lazy(currentUnion))
  .default([])
  .superRefine((list, ctx) => {
    // An empty list resolves no item schema, so kinds may still register after it.
    if (list.length > 0) parsed = true;
    const tags = new Map<string, string>();
    list.forEach((iv, i) => {
      const at = (message: string, field?: string) => ctx.addIssue({ code: 'custom', path: [i, ...(field ? [field] : [])], message });
      if ((iv.hour === undefined) === (iv.step === undefined)) at(`give the time as exactly one of hour or step`, 'hour');
      const k = kindOf(iv.kind);
      if (k.definesTag) {
        const tag = iv[k.definesTag] as string;
        if (tags.has(tag)) at(`tag "${tag}" is used by an earlier ${tags.get(tag)}; give each injected story its own tag`, k.definesTag);
        else tags.set(tag, iv.kind);
      }
      k.check?.(iv, at);
    });
    list.forEach((iv, i) => {
      for (const [field, type] of Object.entries(kindOf(iv.kind).selectors ?? {})) {
        const tag = (iv[field] as { tag?: string } | undefined)?.tag;
        if (type !== 'posts' || tag === undefined || tags.has(tag)) continue;
        ctx.addIssue({ code: 'custom', path: [i, field, 'tag'], message: `no inject has tag "${tag}" (tags: ${[...tags.keys()].join(', ') || 'none'})` });
      }
    });
  });

/** Every treatment group name, in order of appearance; '' (index 0) is "no treatment". */
export function groupNames(list: readonly InterventionBase[]): string[] {
  const out = [''];
  for (const iv of list) for (const g of kindOf(iv.kind).groups?.(iv as never) ?? []) if (!out.includes(g)) out.push(g);
  return out;
}

/** Every defined story tag, in order; '' (index 0) is "no tag". */
export function tagNames(list: readonly InterventionBase[]): string[] {
  return ['', ...list.flatMap((iv) => { const f = kindOf(iv.kind).definesTag; return f ? [(iv as AnyIntervention)[f] as string] : []; })];
}
