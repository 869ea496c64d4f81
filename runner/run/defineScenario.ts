/**
 * A scenario describes a run: its parameters (a zod object with defaults, overridable from the
 * CLI), its default size, and a `setup` that builds the agents, the follow graph and the phases.
 * `runScenario` does the rest (steps, files, progress, interruption).
 *
 * Parameters must be strict at every depth (`z.strictObject`, or `.strict()`), so that a mistyped
 * `--set` name is an error instead of being dropped; `defineScenario` refuses any other object.
 */
import { z } from 'zod';
import { looseObjects } from './strictParams.ts';
import type { Csr, Graph } from '../../sim-core/csr.ts';
import type { Executor } from '../../sim-core/exec.ts';
import type { Phase } from '../../sim-core/phase.ts';
import type { Table } from '../../sim-core/table.ts';
import type { LlmSetup } from '../../llm-archetypes/setup.ts';
import type { EdgeFileRecord, LoadEdgeListOptions } from '../../graph/loadEdgeList.ts';

export interface SetupContext<P> {
  agents: number;
  /** The run's length: `steps` steps of `stepSeconds` simulated seconds (for checks of scheduled events). */
  steps: number;
  stepSeconds: number;
  seed: number;
  exec: Executor;
  params: P;
  /** `--graph FILE`, when given: scenarios that accept real graphs load it instead of generating. */
  graphFile?: string;
  /** True when `--agents` was given explicitly (with --graph: ids are 0..agents-1 as-is). */
  agentsGiven: boolean;
  /** `--ids` and `--directed`/`--undirected`, when given; unset ones take the scenario's default. */
  graphRead?: Pick<LoadEdgeListOptions, 'ids' | 'directed'>;
  log(line: string): void;
  /** The LLM provider for archetype decisions, when one is configured (`--llm openai|replay`). */
  llm?: LlmSetup;
  /**
   * A resumed run whose graph changed before its checkpoint: the following rows the checkpoint
   * holds. A scenario may build its world on them instead of generating a graph (buildSociety's
   * `following`); the checkpoint's state then replaces the rest, so its phases must keep in their
   * `state` whatever they derive from the graph at init.
   */
  following?: Csr;
}

export interface ScenarioWorld {
  agents: Table;
  graph: Graph;
  phases: Phase[];
  /** The graph file loaded for `graphFile` (buildSociety's `graphSource`), for the manifest. */
  graphSource?: EdgeFileRecord;
}

export interface Scenario<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  params: S;
  defaults: {
    agents: number;
    steps: number;
    /** Simulated seconds per step (default 3600). */
    stepSeconds?: number;
    /** Write an agent snapshot every this many steps (0: only the first and last). */
    snapshotEvery?: number;
  };
  /** Whether `--graph FILE` is accepted. */
  acceptsGraph?: boolean;
  /**
   * Plugin modules (paths relative to the scenario file) loaded with it, before its parameters
   * are read: e.g. a study's ranker (defineRanker) or intervention kind (defineIntervention) that
   * its parameters name.
   */
  plugins?: string[];
  setup(ctx: SetupContext<z.output<S>>): Promise<ScenarioWorld>;
}

const scenarioShape = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'use lowercase letters, digits and dashes'),
  description: z.string().min(1),
  params: z.instanceof(z.ZodObject),
  defaults: z.strictObject({
    agents: z.number().int().positive(),
    steps: z.number().int().nonnegative(),
    stepSeconds: z.number().positive().optional(),
    snapshotEvery: z.number().int().nonnegative().optional(),
  }),
  acceptsGraph: z.boolean().optional(),
  plugins: z.array(z.string().min(1)).optional(),
  setup: z.function(),
});

/** Declares a scenario; checks its shape once, at import, and that its params are strict throughout. */
export function defineScenario<S extends z.ZodObject>(s: Scenario<S>): Scenario<S> {
  const r = scenarioShape.safeParse(s);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new Error(`invalid scenario definition: ${i.path.join('.') || '(top level)'}: ${i.message}`);
  }
  const loose = looseObjects(s.params);
  if (loose.length > 0) {
    const at = loose[0] === '(top level)' ? 'params' : `params.${loose[0]}`;
    throw new Error(`invalid scenario definition ${s.name}: ${at} accepts unknown keys, so a mistyped --set would be ignored; declare it with z.strictObject({...}) (or .strict())`);
  }
  return s;
}
