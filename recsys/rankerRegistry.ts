/**
 * The rankers a run can name in `platform.ranker` (and setRanker): the bundled ones, listed here
 * explicitly, and those a study's plugins add (defineRanker.ts; the run's loader adds them before
 * it reads the scenario's parameters). A ranker's code, which the kernels receive as a number
 * parameter, is its place in the bundled list; a plugin ranker runs the kernels with the code of
 * the bundled ranker whose candidates it takes, and scores feeds with its own feed kernel.
 */
import { z } from 'zod';
import type { AnyKernel } from '../sim-core/kernel.ts';
import { InputError } from '../sim-core/errors.ts';
import type { Recommender } from './recommender.ts';
import { interventionKinds } from '../platform/interventions/registry.ts';
import type { InterventionBase } from '../platform/interventions/time.ts';
import { chronological } from './rankers/chronological.ts';
import { random } from './rankers/random.ts';
import { redditHot } from './rankers/redditHot.ts';
import { xInterest } from './rankers/xInterest.ts';
import { bridging } from './rankers/bridging.ts';

/**
 * The bundled rankers; a ranker's code is its index here (kernel parameters, GPU params), so a new
 * one goes at the end.
 */
export const BUNDLED_RANKERS: readonly Recommender[] = [chronological, random, redditHot, xInterest, bridging];

/** The bundled rankers' names. */
export const RANKER_NAMES: readonly string[] = BUNDLED_RANKERS.map((r) => r.name);

/** The default `platform.ranker`. */
export const DEFAULT_RANKER = xInterest.name;

/** A ranker a plugin added: its own feed kernel beside the bundled ranker it takes candidates from. */
export interface PluginRanker {
  name: string;
  doc: string;
  /** The bundled ranker whose base scores and candidate lists it uses. */
  candidates: Recommender;
  /** The feed kernel that calls its score function (declared by the plugin's module, for worker threads). */
  feed: AnyKernel;
  /** The plugin's module file, as given to the run. */
  file: string;
}

const plugins = new Map<string, PluginRanker>();

/** Adds a plugin's ranker; its name must not be taken (by another module). */
export function addPluginRanker(p: PluginRanker): void {
  const other = plugins.get(p.name);
  if (RANKER_NAMES.includes(p.name) || (other && other.feed.module !== p.feed.module)) throw new InputError(`plugin ${p.file}: ranker name "${p.name}" is already taken by ${other ? other.file : 'a bundled ranker'}; give it another name`);
  if (!other) plugins.set(p.name, p);
}

/** Every ranker name a run may use now: the bundled ones, then the plugins'. */
export function rankerNames(): string[] {
  return [...RANKER_NAMES, ...plugins.keys()];
}

/** The one-line error for a name no ranker has, or undefined when one has it. */
export function unknownRanker(name: string): string | undefined {
  if (RANKER_NAMES.includes(name) || plugins.has(name)) return undefined;
  return `unknown ranker "${name}": the rankers are ${rankerNames().join(', ')}; a study adds its own with a plugin file (export default defineRanker({...}); --plugin FILE or a scenario's or experiment's plugins list)`;
}

/** How a run scores with the ranker named `name`: its bundled code, and a plugin's feed kernel. */
export function rankerOf(name: string): { code: number; ranker: Recommender; plugin?: PluginRanker } {
  const p = plugins.get(name);
  const ranker = p ? p.candidates : BUNDLED_RANKERS.find((r) => r.name === name);
  if (!ranker) throw new InputError(`parameter platform.ranker: ${unknownRanker(name)}`);
  return { code: BUNDLED_RANKERS.indexOf(ranker), ranker, plugin: p };
}

/** The code (kernel parameter) of the bundled ranker named `name`. */
export function rankerCode(name: string): number {
  const i = RANKER_NAMES.indexOf(name);
  if (i < 0) throw new Error(`no bundled ranker ${name}`);
  return i;
}

/**
 * `platform.ranker` as a scenario declares it: a name, checked against the registry when the
 * parameters are read (after the run's plugins are loaded), with the one-line error of
 * unknownRanker.
 */
export const rankerName = z
  .string()
  .default(DEFAULT_RANKER)
  .superRefine((name, ctx) => {
    const bad = unknownRanker(name);
    if (bad) ctx.addIssue({ code: 'custom', message: bad });
  })
  .describe(`the feed's ranker: ${RANKER_NAMES.join(', ')}, or a plugin's (defineRanker)`);

/**
 * Adds an issue for each ranker an intervention list names that the registry lacks (what each
 * kind's `rankerNamed` says it names: setRanker's `ranker`, setParam's platform.ranker `value`),
 * at its path under `at`.
 */
export function checkRankerNames(list: readonly InterventionBase[], ctx: z.RefinementCtx, at: PropertyKey[]): void {
  list.forEach((iv, i) => {
    // An unknown kind (refused by the list's schema) names nothing.
    const [field, name] = interventionKinds().find((k) => k.name === iv.kind)?.rankerNamed?.(iv as never) ?? [];
    const bad = field && unknownRanker(name!);
    if (bad) ctx.addIssue({ code: 'custom', path: [...at, i, field!], message: bad });
  });
}
