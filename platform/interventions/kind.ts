/**
 * What an intervention kind is: a `kind` value of the scenario's `interventions` list, with its
 * fields (a zod shape; the time fields of time.ts are added to every kind), which of them are
 * selectors, the checks the schema cannot express, what it does to the platform at its step, and
 * what it records in interventions.arrow (one row per application: how many posts and accounts it
 * touched). The bundled kinds are one file each in this folder, listed by registry.ts; a study
 * defines its own with `defineIntervention` (the public API) and registers it as a plugin.
 *
 * Contract: `apply` and the hooks run in plain JavaScript on the main thread with the device's
 * copies brought back (the intervene phase syncs before and announces the post columns written
 * after). Random draws use the counter RNG under `key` (or keys derived from names), never
 * Math.random, so runs stay reproducible and arms sharing a seed draw the same.
 */
import { z } from 'zod';
import { InputError } from '../../sim-core/errors.ts';
import type { World } from '../../sim-core/phase.ts';
import type { SocialState } from '../state.ts';
import type { AgentSelector, PostSelector, SelectorType } from './selectors.ts';
import { timeFields } from './time.ts';

/** What one application touched: its row of interventions.arrow. */
export interface Touched {
  posts: number;
  agents: number;
}

/** What a kind's hooks see during a run. */
export interface RunContext<S> {
  social: SocialState;
  world: World;
  /** The kind's own state in this run (from `state()`), saved in checkpoints. */
  state: S;
  /** Appends a row to interventions.arrow for the intervention at `index` of the list. */
  log(step: number, index: number, touched: Touched): void;
}

/** What `apply` sees: the run, and which intervention is applied when. */
export interface ApplyContext<S> extends RunContext<S> {
  step: number;
  /** Position in the scenario's list. */
  index: number;
  /** RNG key of this intervention (stream `intervention.<index>`, step 0). */
  key: number;
  /** A test of post rows against a selector as the posts stand now; its `fraction` is keyed by `key` unless given. */
  matchPosts(sel: PostSelector, key?: number): (row: number) => boolean;
  /** A test of agent ids against a selector as the state stands now; its `fraction` is keyed by `key` unless given. */
  matchAgents(sel: AgentSelector, key?: number): (agent: number) => boolean;
  /** Calls `f` for every live post row (in the window) that `match` accepts, in row order; returns how many. */
  eachPost(match: (row: number) => boolean, f: (row: number) => void): number;
}

/** What `checkWorld` sees: the built world, and how to refuse (one line naming the field). */
export interface CheckContext {
  social: SocialState;
  world: World;
  fail(field: string, message: string): never;
}

type Shape<N extends string, F extends z.ZodRawShape> = { kind: z.ZodLiteral<N> } & typeof timeFields & F;
/** A parsed intervention of a kind with name N and fields F (defaults filled in). */
export type Parsed<N extends string, F extends z.ZodRawShape> = z.output<z.ZodObject<Shape<N, F>, z.core.$strict>>;

export interface InterventionSpec<N extends string, F extends z.ZodRawShape, S extends object> {
  /** The `kind` value: a letter, then letters, digits and dashes. */
  name: N;
  /** One paragraph: what it does, and the published intervention it models where there is one. */
  doc: string;
  /** Its fields besides `kind` and the time fields (hour, step, name); each object strict. */
  fields: F;
  /** The fields that are selectors, and of what (checked against the world; post selectors' `tag` must be defined). */
  selectors?: { readonly [K in keyof F]?: SelectorType };
  /** The field naming the story tag it defines (inject's `tag`): unique in the list, and what post selectors' `tag` may name. */
  definesTag?: keyof F & string;
  /**
   * The ranker it names, if any, as [field, name]: the scenario checks the name against recsys/'s
   * ranker registry (a layer above, which plugins extend).
   */
  rankerNamed?(iv: Parsed<N, F>): readonly [field: string, name: string] | undefined;
  /** The treatment groups it defines (posts.arrow `group`), in order. */
  groups?(iv: Parsed<N, F>): readonly string[];
  /** Checks of one intervention that the schema cannot express; `issue` reports one (at `field`). */
  check?(iv: Parsed<N, F>, issue: (message: string, field?: string) => void): void;
  /** Checks against the built world (ids, archetypes, topics, values), before the first step. */
  checkWorld?(iv: Parsed<N, F>, ctx: CheckContext): void;
  /** The kind's state for one run, carried across steps and checkpointed (one for all its interventions). */
  state?(): S;
  /**
   * Applies the intervention at the start of its step; returns what it touched (its row of
   * interventions.arrow), or null for a kind that writes its own rows (with `log`).
   */
  apply(iv: Parsed<N, F>, ctx: ApplyContext<S>): Touched | null;
  /** Every step, before any intervention of the step applies, when the run's list has this kind. */
  beginStep?(ctx: RunContext<S> & { step: number }): void;
  /** Every step, after the step's interventions applied, when the run's list has this kind. */
  endStep?(ctx: RunContext<S> & { step: number }): void;
  /** At the end of the run, when the run's list has this kind (e.g. write a file). */
  finish?(ctx: RunContext<S>): void;
}

/** An intervention kind, as `defineIntervention` returns it; `type` tells a plugin loader what it is. */
export interface InterventionKind<N extends string = string, F extends z.ZodRawShape = z.ZodRawShape, S extends object = object> extends InterventionSpec<N, F, S> {
  readonly type: 'intervention';
  /** `{ kind, hour, step, name, ...fields }`, strict. */
  readonly schema: z.ZodObject<Shape<N, F>, z.core.$strict>;
}

/** Any kind, as the registry and the intervene phase hold them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyInterventionKind = InterventionKind<string, z.ZodRawShape, any>;

const NAME = /^[A-Za-z][A-Za-z0-9-]*$/;

/**
 * Defines an intervention kind: checks its name and fields and builds its schema. A study's
 * plugin file default-exports one; the bundled kinds are made the same way.
 */
export function defineIntervention<const N extends string, F extends z.ZodRawShape, S extends object = Record<string, never>>(spec: InterventionSpec<N, F, S>): InterventionKind<N, F, S> {
  if (!NAME.test(spec.name)) throw new InputError(`intervention kind name "${spec.name}" must start with a letter and hold only letters, digits and dashes`);
  const clash = Object.keys(spec.fields).find((f) => f === 'kind' || f in timeFields);
  if (clash) throw new InputError(`intervention kind ${spec.name}: field ${clash} is one every intervention has (kind, hour, step, name); rename it`);
  const schema = z.strictObject({ kind: z.literal(spec.name), ...timeFields, ...spec.fields } as Shape<N, F>).describe(spec.doc);
  return { ...spec, type: 'intervention', schema };
}
