/**
 * The run directory (docs/run-directory.md): manifest.json, metrics.arrow (one row per step, appended
 * and readable after every step), agents/step-NNNNNN.arrow snapshots and graph.arrow. Arrow files
 * hold only simulation results, so the same scenario and seed give byte-identical files; timings,
 * thread count and other run facts live in the manifest.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ArrowFileAppender, FileWriteError, writeArrowFile, writeArrowFileLater, type AppenderState, type ColumnData, type GeneratedValues } from '../../sim-core/io/arrowFile.ts';
import type { Graph } from '../../sim-core/csr.ts';
import type { EdgeFileRecord } from '../../graph/loadEdgeList.ts';
import { InputError } from '../../sim-core/errors.ts';
import type { MetricType, World } from '../../sim-core/phase.ts';
import type { Table } from '../../sim-core/table.ts';
import { makeDirectory } from '../../sim-core/io/makeDirectory.ts';
import { directoryBusy, LOCK_ENTRY } from './dirLock.ts';

export type RunStatus = 'running' | 'completed' | 'interrupted' | 'failed';

export interface Manifest {
  /** The manifest's format version. */
  format: 'socsim-run/1';
  /** The scenario: its name, the file it was loaded from and its description. */
  scenario: { name: string; file: string; description: string };
  /** Every scenario parameter as the run used it (defaults merged with --params and --set). */
  parameters: Record<string, unknown>;
  /** The random seed. */
  seed: number;
  /** Kernel threads (--threads). */
  threads: number;
  /** Where the kernels ran (--backend; auto resolves to one of these). */
  backend: 'cpu' | 'webgpu';
  /** The WebGPU adapter that ran the kernels (backend webgpu). */
  adapter?: string;
  /** Backend webgpu: kernel calls by name, on the device and on the CPU, since this process started the run (or resumed it). */
  kernel_calls?: { webgpu: Record<string, number>; cpu: Record<string, number> };
  /** Backend webgpu: bytes copied host -> device (`up`) and back (`down`) for each kernel's calls, over the same span as kernel_calls. */
  kernel_transfer_bytes?: Record<string, { up: number; down: number }>;
  /** Backend webgpu with SOCSIM_GPU_TIME_KERNELS=1: per GPU kernel, each call's milliseconds from encoding to done (uploads included). */
  kernel_device_ms?: Record<string, number[]>;
  /** The same calls' passes on the device's clock (timestamp queries, where the adapter has them): no host work, no queue latency. */
  kernel_clock_ms?: Record<string, number[]>;
  /** Agents in the run. */
  agents: number;
  /** Follow edges at set-up. */
  edges: number;
  /** Whether the follow graph is directed. */
  directed: boolean;
  /** With --graph FILE: the file (path, size, SHA-256) and how it was read; `parameters.graph` is then absent. */
  graph_file?: EdgeFileRecord;
  /** Simulated seconds per step. */
  step_seconds: number;
  /** Steps between agent snapshots (0: first and last only). */
  snapshot_every: number;
  /** Steps asked for. */
  steps_requested: number;
  /** Steps completed so far. */
  steps_completed: number;
  /** running, completed, interrupted or failed. */
  status: RunStatus;
  /** Why the run failed (status failed). */
  error?: string;
  /** Why the run stopped by itself before its last step (status interrupted): --llm-max-cost. */
  stopped?: string;
  /** Versions of socsim, Node and the main dependencies. */
  versions: Record<string, string>;
  /** When the run started (ISO 8601). */
  started_at: string;
  /** When it ended, however it ended. */
  finished_at?: string;
  /** Wall time of the set-up (population, graph, the phases' start). */
  setup_seconds: number;
  /** Wall time of every step, in milliseconds. */
  step_wall_ms: number[];
  /** Wall time of each phase in every step, by phase name. */
  phase_wall_ms: Record<string, number[]>;
  /** Peak resident memory of the process (the kernel's high-water mark, threads included). */
  peak_rss_bytes: number;
  /** Resident memory once the world is built and the first files are written. */
  rss_after_setup_bytes?: number;
  /**
   * The behaviour provider: heuristic, or an LLM (never the key). `spent`: what the run's calls
   * cost, the prompt and completion tokens the server billed (its usage counts, else the
   * tokenizer's) for the calls not served from a cache, and their price in USD (`cost_usd`) when
   * --llm-price-in/--llm-price-out are given; a replay counts the recorded calls.
   */
  llm: { provider: string; model?: string; base_url?: string; cache?: string; every?: number; budget?: number; samples?: number; spent?: { prompt_tokens: number; completion_tokens: number; calls: number; cost_usd?: number } };
  /** Whether events.arrow (the full action trace) was written. */
  events?: boolean;
  /** The process writing the run, so `inspect` and `--resume` can tell a dead run from a live one. */
  pid?: number;
  /** The host name of the machine writing the run. */
  host?: string;
  /**
   * The completion record: the size of every file the run wrote, written with status
   * "completed", so a re-run of an experiment counts the run as done only when its files are
   * all there as written (runFilesIntact).
   */
  file_bytes?: Record<string, number>;
  /** What `socsim run --resume` needs to set the same run up again (see runner/run/resume.ts). */
  invocation?: Invocation;
  /**
   * The latest checkpoint the run wrote, or restored when it resumed: the step after which it was
   * taken, its file, its size and the seconds its write took (absent when no process of the run
   * timed it: a resume fell back to the previous checkpoint). The one before it is kept too
   * (runner/run/resume.ts: PREVIOUS_CHECKPOINT_FILE); `socsim inspect` verifies both.
   */
  checkpoint?: { step: number; file: string; bytes: number; seconds?: number };
  /** Why the latest checkpoint could not be written (the run went on without it). */
  checkpoint_error?: string;
  /** Each time the run was resumed: from which step, when, on how many threads and which backend, set-up again plus reading the checkpoint, and the restore. */
  resumed?: Array<{ from_step: number; at: string; threads: number; backend: Manifest['backend']; setup_seconds: number; restore_seconds: number }>;
  /** The files written: metrics, graph, the agent snapshots, graph-end and any other (posts, cascades, ...). */
  files: { metrics: string; graph: string; agents: string[]; graph_end?: string; other?: string[] };
}

/** The run options a resumed run takes from its manifest (everything that shapes its results). */
export interface Invocation {
  /** The scenario file, absolute (a resume may start from another directory). */
  scenarioFile?: string;
  /** The --plugin modules, absolute (a resume loads them again). */
  plugins?: string[];
  /** --agents as given (undefined: the scenario's default), which matters for a --graph file. */
  agents?: number;
  steps: number;
  params: Record<string, unknown>;
  graphFile?: string;
  graphRead?: Record<string, unknown>;
  snapshotEvery: number;
  stepSeconds: number;
  events: boolean;
  /** --checkpoint-every as given (undefined: automatic). */
  checkpointEvery?: number;
  /** The --llm options as given (no key). */
  llm?: Record<string, unknown>;
}

/**
 * Writes JSON atomically (temp file + rename), so a reader never sees half a manifest. A failure
 * removes the temp file and throws a FileWriteError naming `file` (the OS error alone does not).
 *
 * On a full disk (ENOSPC) the new text is written over the old file in place instead: a manifest
 * changes little in size, so it usually fits the blocks the old one holds, and a run that fails
 * because the disk is full can still record that it failed and why.
 */
export function writeJsonAtomic(file: string, value: unknown): void {
  const tmp = `${file}.tmp`;
  const text = JSON.stringify(value, null, 2) + '\n';
  try {
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    if ((err as NodeJS.ErrnoException).code === 'ENOSPC' && fs.existsSync(file)) {
      try {
        fs.writeFileSync(file, text, { flag: 'r+' });
        fs.truncateSync(file, Buffer.byteLength(text));
        return;
      } catch {
        // no room even in place: report the first error
      }
    }
    throw new FileWriteError(file, err, Buffer.byteLength(text));
  }
}

/** Files a run writes at the top of its directory (phases may add more; the manifest lists them). */
const RUN_FILES = ['manifest.json', 'checkpoint.bin', 'checkpoint.prev.bin', 'metrics.arrow', 'graph.arrow', 'graph-end.arrow', 'posts.arrow', 'events.arrow', 'cascades.arrow', 'conversations.arrow', 'archetypes.arrow', 'llm-cache.jsonl'];
/** A snapshot in agents/, or what an interrupted atomic write of one left. */
const SNAPSHOT_FILE = /^step-\d{6,}\.arrow(\.tmp)?$/;
/** A manifest-listed name that stays inside the directory: no separators, no leading dot. */
const PLAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export interface RunDirectoryOptions {
  /** Replace an earlier run in the directory (`--force`). */
  force?: boolean;
  /** The directory as the user named it, for messages (default: `dir`). */
  label?: string;
}

/** The manifest of the socsim run in `dir`, or undefined when it has none (or not socsim's). */
export function readRunManifest(dir: string): Partial<Manifest> | undefined {
  try {
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as unknown;
    const format = (m as { format?: unknown } | null)?.format;
    return typeof m === 'object' && !Array.isArray(m) && typeof format === 'string' && format.startsWith('socsim-run/') ? (m as Partial<Manifest>) : undefined;
  } catch {
    return undefined;
  }
}

/** Linux: a process that has exited but is not yet reaped (a zombie) is gone, though signal 0 reaches it. */
function zombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/**
 * Whether the process that writes a run is alive: 'gone', 'alive', or 'unknown'. With `dir`, the
 * directory's lock decides (dirLock.ts: held exactly as long as its writer lives, on any host that
 * shares the file system); without a lock file (a run from before locks), the recorded pid on this
 * host does, an exited but unreaped process counting as gone.
 */
export function writerState(m: Partial<Manifest>, dir?: string): 'gone' | 'alive' | 'unknown' {
  const busy = dir === undefined ? undefined : directoryBusy(dir);
  if (busy !== undefined) return busy ? 'alive' : 'gone';
  if (m.pid === undefined || m.host !== os.hostname()) return 'unknown';
  try {
    process.kill(m.pid, 0);
    return zombie(m.pid) ? 'gone' : 'alive';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? 'alive' : 'gone';
  }
}

/** The status a reader should report: a "running" run whose writer is gone was interrupted. */
export function effectiveStatus(m: Partial<Manifest>, dir?: string): string {
  if (m.status === 'running' && writerState(m, dir) === 'gone') return 'interrupted';
  return m.status ?? 'unknown';
}

/** The sizes of the named files of a run directory (its completion record). */
export function fileSizes(dir: string, names: readonly string[]): Record<string, number> {
  return Object.fromEntries(names.map((n) => [n, fs.statSync(path.join(dir, n)).size]));
}

/** Why a completed run's files are not as its completion record says (undefined: they are). */
export function runFilesDamage(dir: string, m: Partial<Manifest>): string | undefined {
  if (!m.file_bytes) return 'it has no completion record (a run from an older socsim)';
  for (const [name, bytes] of Object.entries(m.file_bytes)) {
    const st = fs.statSync(path.join(dir, name), { throwIfNoEntry: false });
    if (!st) return `${name} is missing`;
    if (st.size !== bytes) return `${name} has ${st.size} bytes, the run wrote ${bytes}`;
  }
  return undefined;
}

/**
 * Checks that a run may write into `dir`: it does not exist yet, is empty, or holds an earlier
 * socsim run and `force` is set. Anything else throws an InputError naming the directory and the
 * fix. Returns the earlier run's manifest, if there is one.
 */
export function checkRunDirectory(dir: string, o: RunDirectoryOptions = {}): Partial<Manifest> | undefined {
  const label = o.label ?? dir;
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (!st.isDirectory()) throw new InputError(`${label} is not a directory; choose a new or empty directory with --out DIR`);
  if (fs.readdirSync(dir).every((f) => LOCK_ENTRY.test(f))) return undefined;
  const m = readRunManifest(dir);
  if (!m) {
    throw new InputError(`${label} is not empty and is not a socsim run directory (no socsim manifest.json); choose a new or empty directory with --out DIR`);
  }
  if (!o.force) {
    const status = effectiveStatus(m, dir);
    const resume = status === 'interrupted' || status === 'failed' ? `continue it with --resume ${label}, ` : '';
    throw new InputError(`${label} already holds a socsim run (${m.scenario?.name ?? 'unknown scenario'}, ${status}); ${resume}pass --force to replace it, or choose another directory with --out DIR`);
  }
  return m;
}

/** Removes `file` if it is a file or a link (never a directory, never what a link points to). */
function removeFile(file: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch {
    return;
  }
  if (!st.isDirectory()) fs.rmSync(file, { force: true });
}

/**
 * Makes `dir` ready for a run (see checkRunDirectory). Replacing an earlier run removes only the
 * files a run writes (the fixed names above, the names its manifest lists, agents/step-*.arrow),
 * so stale snapshots never mix with new ones and nothing else in the directory is touched.
 */
export function prepareRunDirectory(dir: string, o: RunDirectoryOptions = {}): void {
  const old = checkRunDirectory(dir, o);
  makeDirectory(dir, o.label);
  const agents = path.join(dir, 'agents');
  if (old) {
    const names = new Set(RUN_FILES);
    const f = old.files ?? ({} as Partial<Manifest['files']>);
    for (const n of [f.metrics, f.graph, f.graph_end, ...(Array.isArray(f.other) ? f.other : [])]) {
      if (typeof n === 'string' && PLAIN_NAME.test(n)) names.add(n);
    }
    let snapshots: string[] = [];
    const st = fs.lstatSync(agents, { throwIfNoEntry: false });
    if (st) {
      if (!st.isDirectory()) throw new InputError(`${path.join(o.label ?? dir, 'agents')} is not a directory (socsim writes its snapshots there); move it out of the way, then run again`);
      snapshots = fs.readdirSync(agents).filter((n) => SNAPSHOT_FILE.test(n));
    }
    // Anything ending in .tmp is what an interrupted atomic write left.
    for (const n of names) for (const x of [n, `${n}.tmp`]) removeFile(path.join(dir, x));
    for (const n of snapshots) removeFile(path.join(agents, n));
  }
  makeDirectory(agents, path.join(o.label ?? dir, 'agents'));
}

/** Column data for every snapshot column of the agent table, plus the row index `agent`. */
export function snapshotColumns(agents: Table, ids: Int32Array): ColumnData[] {
  const cols: ColumnData[] = [{ name: 'agent', type: 'i32', values: ids }];
  for (const [name, spec] of Object.entries(agents.schema)) {
    if (spec.snapshot === false) continue;
    cols.push({ name, type: spec.type, values: agents.columns[name], width: spec.width, dictionary: spec.dictionary });
  }
  return cols;
}

export function snapshotName(step: number): string {
  return `agents/step-${String(step).padStart(6, '0')}.arrow`;
}

/**
 * Writes the follow edges as source/target columns (each undirected edge once, u < v). For
 * directed graphs the target column is the CSR's own array (no copy).
 */
/**
 * The process's peak resident memory so far, worker threads included: the kernel's high-water
 * mark (VmHWM in /proc/self/status) where there is one, which sees a peak inside a step that
 * samples between steps miss; else ru_maxrss.
 */
export function peakResidentBytes(): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // no /proc: not Linux
  }
  return process.resourceUsage().maxRSS * 1024;
}

export function writeGraph(file: string, graph: Graph): void {
  const g = graphColumns(graph);
  writeArrowFile(file, g.columns, g.rows, g.metadata);
}

/** Writes directed follow edges given as generated columns, as writeGraph writes a graph's. */
export function writeEdges(file: string, e: NonNullable<World['endEdges']>): void {
  const columns: ColumnData[] = [
    { name: 'source', type: 'i32', values: e.source },
    { name: 'target', type: 'i32', values: e.target },
  ];
  writeArrowFile(file, columns, e.rows, graphMetadata(true));
}

/**
 * writeGraph with the file's writes on libuv's threads while the run goes on (graph.arrow at 10M
 * agents is ~4 GB: ~16 s of disk on the 2-core machine). The graph's arrays must not change until
 * it settles (a follow rebuild makes new ones).
 */
export function writeGraphLater(file: string, graph: Graph): Promise<void> {
  const g = graphColumns(graph);
  return writeArrowFileLater(file, g.columns, g.rows, g.metadata);
}

/** graph.arrow's columns: the rows of the following CSR in order, each undirected edge once (u >= v). */
function graphColumns(graph: Graph): { columns: ColumnData[]; rows: number; metadata: Record<string, string> } {
  const { offsets, targets } = graph.following;
  const m = graph.directed ? graph.edges : graph.edges / 2;
  // Generated as the file is written (4 bytes per edge each, 2 GB at 495M edges).
  const column = (pick: (v: number, j: number) => number): GeneratedValues => {
    let v = 0;
    let j = 0;
    return {
      length: m,
      fill(out) {
        for (let i = 0; i < out.length; j++) {
          while (j >= offsets[v + 1]) v++;
          if (graph.directed || targets[j] >= v) out[i++] = pick(v, j);
        }
      },
    };
  };
  return {
    columns: [
      { name: 'source', type: 'i32', values: column((v) => v) },
      { name: 'target', type: 'i32', values: graph.directed ? targets.subarray(0, m) : column((_, j) => targets[j]) },
    ],
    rows: m,
    metadata: graphMetadata(graph.directed),
  };
}

const graphMetadata = (directed: boolean) => ({ directed: String(directed), edge_meaning: 'source follows target' });

/**
 * The metrics table: step, simulated time, then each phase's metrics, one row per step.
 *
 * Steps count as agents/step-NNNNNN.arrow does: the row of step N is the state after N steps
 * (`time` = N x step seconds), so it joins the snapshot step-N. A step's own metrics (the social
 * platform's counts of what happened in it) are in the row of the state it leaves: the first step's
 * in step 1. Classic models also write the initial state as a first row, step 0. Event tables
 * (posts, events, cascades, interventions, archetypes) instead say in which step something happened,
 * counted from 0: an event of step s happened between the states s and s + 1.
 */
export class MetricsWriter {
  private readonly schema: Array<[string, MetricType]>;
  private readonly appender: ArrowFileAppender;
  /** Opens `file` anew, or, given a checkpoint's `resume` state, as it was at that checkpoint. */
  constructor(file: string, schema: Array<[string, MetricType]>, resume?: AppenderState) {
    this.schema = schema;
    const cols = this.columns([0], [0], schema.map(() => []));
    this.appender = resume ? ArrowFileAppender.resume(file, cols, resume) : ArrowFileAppender.open(file, cols);
  }
  state(): AppenderState {
    return this.appender.state();
  }
  private columns(step: number[], time: number[], values: number[][]): ColumnData[] {
    return [
      { name: 'step', type: 'i32', values: Int32Array.from(step) },
      { name: 'time', type: 'f64', values: Float64Array.from(time) },
      ...this.schema.map(([name, type], i): ColumnData => ({
        name,
        type,
        values: type === 'i32' ? Int32Array.from(values[i]) : Float64Array.from(values[i]),
      })),
    ];
  }
  append(step: number, time: number, metrics: Map<string, number>): void {
    const values = this.schema.map(([name]) => [metrics.get(name) ?? NaN]);
    this.appender.append(this.columns([step], [time], values), 1);
  }
  close(): void {
    this.appender.close();
  }
}
