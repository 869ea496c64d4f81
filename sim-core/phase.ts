/**
 * Phases and the step loop. A step is an ordered list of phases; each declares the agent columns
 * it reads and writes and the metrics it reports. The loop is deliberately tiny: the work lives in
 * the phases, and the phases do their heavy lifting through kernels (`exec`).
 */
import type { ArrowFileAppender, ColumnData, GeneratedValues } from './io/arrowFile.ts';
import type { Graph } from './csr.ts';
import type { Executor } from './exec.ts';
import { keyOf, streamOf } from './rng.ts';
import type { Table } from './table.ts';
import { tablesOf, type StateTable } from './stateTable.ts';

/** Files a run writes besides metrics and snapshots (posts, events, cascades), in its run directory. */
export interface RunOutputs {
  dir: string;
  /** Whether the full action trace (events.arrow) was asked for. */
  events: boolean;
  /** Opens a crash-safe appender for `name` (e.g. "posts.arrow"); the runner closes it. */
  appender(name: string, schema: ColumnData[]): ArrowFileAppender;
  /** Writes a whole file atomically. */
  writeFile(name: string, columns: ColumnData[], rows: number, metadata?: Record<string, string>): void;
}

export interface World {
  agents: Table;
  graph: Graph;
  exec: Executor;
  seed: number;
  /** Simulated seconds per step. */
  stepSeconds: number;
  /** Present when the world runs inside a run directory. */
  out?: RunOutputs;
  /**
   * Set by a phase's finish when the run ends with follow changes its graph has not folded in:
   * the directed edges as the run left them, generated while graph-end.arrow is written.
   */
  endEdges?: { rows: number; source: GeneratedValues; target: GeneratedValues };
}

export type MetricType = 'f64' | 'i32';

export interface StepContext {
  step: number;
  /** Simulated time at the start of the step, in seconds since the run began. */
  time: number;
  /** Counter-based RNG key for (run seed, stream name, this step). */
  key(stream: string): number;
  /** Records a metric for this step's metrics row (declared by the phase). */
  metric(name: string, value: number): void;
  /**
   * Metrics that arrive after the phase returns: `work` records them (through `metric`) when sums
   * queued with `queueReduce` (sim-core/exec.ts) come back. The step's row waits for it; the
   * runner starts the next step meanwhile, so a device reads the sums back while it runs the next
   * step's kernels. Only for values nothing in the step reads.
   */
  later(work: Promise<void>): void;
}

export interface Phase {
  name: string;
  /** Agent columns read and written (documentation and checks; see `checkPhases`). */
  reads: readonly string[];
  writes: readonly string[];
  /** Metrics this phase reports every step, in order. */
  metrics?: Readonly<Record<string, MetricType>>;
  /**
   * What this phase carries from one step to the next besides agent columns and the graph (posts,
   * feeds, counters, candidate structures...), as one object. A checkpoint saves it and a resumed
   * run restores it in place after `init` (sim-core/checkpoint.ts); scratch buffers that every step
   * rewrites before reading need not be reachable from it. Phases may share one object.
   */
  state?: object;
  /**
   * The state tables this phase reads and writes: names of StateTable fields of a phase's `state`
   * (sim-core/stateTable.ts). Required of a phase whose state holds tables; see `checkPhases`.
   */
  tables?: { reads: readonly string[]; writes: readonly string[] };
  /** Called once before the first step (allocate state, seed a cascade). */
  init?(world: World): Promise<void> | void;
  run(world: World, ctx: StepContext): Promise<void> | void;
  /**
   * Reports this phase's metrics for the state as it stands, changing nothing: the initial-state
   * row (see `measureInitial`). Stocks take their initial values; flows ("new this step") are 0.
   */
  measure?(world: World, ctx: StepContext): Promise<void> | void;
  /** Called once when the run ends (completed, interrupted or failed), to flush what it holds. */
  finish?(world: World): Promise<void> | void;
}

/**
 * Checks the phases' declarations against the world and each other: every agent column a phase
 * declares exists; every table it declares is a table of some phase's state (one table per name);
 * a phase whose state holds tables declares the ones it uses; and a table rewritten every step
 * (lifetime `step`) is written by an earlier phase of the step than each phase that reads it.
 */
export function checkPhases(world: World, phases: readonly Phase[]): void {
  for (const p of phases) {
    for (const c of [...p.reads, ...p.writes]) {
      if (!(c in world.agents.columns)) {
        throw new Error(`phase ${p.name} declares column "${c}", which the agent table does not have`);
      }
    }
  }
  const tables = new Map<string, StateTable>();
  for (const p of phases) {
    for (const [name, t] of tablesOf(p.state)) {
      if ((tables.get(name) ?? t) !== t) throw new Error(`two phase states hold different tables named "${name}"; give one another name`);
      tables.set(name, t);
    }
  }
  const written = new Set<string>();
  for (const p of phases) {
    if (!p.tables) {
      if (tablesOf(p.state).size > 0) throw new Error(`phase ${p.name} holds state tables (${[...tablesOf(p.state).keys()].join(', ')}) but declares none: add tables: { reads, writes }`);
      continue;
    }
    for (const name of [...p.tables.reads, ...p.tables.writes]) {
      if (!tables.has(name)) throw new Error(`phase ${p.name} declares table "${name}", which no phase's state holds (tables: ${[...tables.keys()].join(', ') || 'none'})`);
    }
    for (const name of p.tables.reads) {
      if (tables.get(name)!.lifetime === 'step' && !written.has(name) && !p.tables.writes.includes(name)) {
        throw new Error(`phase ${p.name} reads table "${name}", which is rewritten every step, before any phase writes it; put a phase that writes it first`);
      }
    }
    for (const name of p.tables.writes) written.add(name);
  }
}

/** The metric columns of a step list, in phase order. */
export function metricSchema(phases: readonly Phase[]): Array<[string, MetricType]> {
  const out: Array<[string, MetricType]> = [];
  const seen = new Set<string>();
  for (const p of phases) {
    for (const [name, type] of Object.entries(p.metrics ?? {})) {
      if (seen.has(name)) throw new Error(`metric ${name} is reported by two phases`);
      seen.add(name);
      out.push([name, type]);
    }
  }
  return out;
}

/**
 * Runs one step: every phase in order. Returns the step's metrics; when `phaseMs` is given, adds
 * each phase's wall time (ms) to it under the phase's name.
 */
export async function runStep(world: World, phases: readonly Phase[], step: number, phaseMs?: Map<string, number>): Promise<Map<string, number>> {
  return (await queueStep(world, phases, step, phaseMs)).metrics;
}

/**
 * `runStep` that resolves once every phase has returned, before the metrics that arrive later
 * (`StepContext.later`) are in: the caller may start the next step, then wait for `metrics`.
 */
export async function queueStep(world: World, phases: readonly Phase[], step: number, phaseMs?: Map<string, number>): Promise<{ metrics: Promise<Map<string, number>> }> {
  const metrics = new Map<string, number>();
  const pending: Array<Promise<void>> = [];
  const ctx = stepContext(world, step, metrics, pending);
  for (const phase of phases) {
    const t0 = phaseMs ? performance.now() : 0;
    await phase.run(world, ctx);
    if (phaseMs) phaseMs.set(phase.name, (phaseMs.get(phase.name) ?? 0) + performance.now() - t0);
  }
  const all = Promise.all(pending).then(() => metrics);
  // A failure surfaces where the caller waits for the metrics, not as an unhandled rejection first.
  all.catch(() => undefined);
  return { metrics: all };
}

function stepContext(world: World, step: number, metrics: Map<string, number>, pending: Array<Promise<void>>): StepContext {
  return {
    step,
    time: step * world.stepSeconds,
    key: (stream) => keyOf(world.seed, streamOf(stream), step),
    metric: (name, value) => void metrics.set(name, value),
    later: (work) => {
      work.catch(() => undefined); // handled where the step's metrics are awaited
      pending.push(work);
    },
  };
}

/**
 * The `ctx.step` that `measure` sees when the initial state is measured (after `init`, before the
 * loop's step 0). Its metrics row is step 0 (runner/run/runDirectory.ts: MetricsWriter).
 */
export const INITIAL_STEP = -1;

/**
 * The metrics of the initial state (after `init`, before step 0), from the phases' `measure`.
 * Undefined when no phase declares metrics or one that does has no `measure` (the social
 * platform's): a row of stand-in zeros would read as data.
 */
export async function measureInitial(world: World, phases: readonly Phase[]): Promise<Map<string, number> | undefined> {
  const reporting = phases.filter((p) => Object.keys(p.metrics ?? {}).length > 0);
  if (reporting.length === 0 || reporting.some((p) => !p.measure)) return undefined;
  const metrics = new Map<string, number>();
  const pending: Array<Promise<void>> = [];
  const ctx = stepContext(world, INITIAL_STEP, metrics, pending);
  for (const p of reporting) await p.measure!(world, ctx);
  await Promise.all(pending);
  return metrics;
}
