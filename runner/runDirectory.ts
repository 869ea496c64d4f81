/**
 * The run directory (DESIGN.md section 8): manifest.json, metrics.arrow (one row per step, appended
 * and readable after every step), agents/step-NNNNNN.arrow snapshots and graph.arrow. Arrow files
 * hold only simulation results, so the same scenario and seed give byte-identical files; timings,
 * thread count and other run facts live in the manifest.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ArrowFileAppender, FileWriteError, writeArrowFile, type ColumnData } from '../sim-core/io/arrowFile.ts';
import type { Graph } from '../sim-core/csr.ts';
import type { MetricType } from '../sim-core/phase.ts';
import { sharedArray, type Table } from '../sim-core/table.ts';

export type RunStatus = 'running' | 'completed' | 'interrupted' | 'failed';

export interface Manifest {
  format: 'socsim-run/1';
  scenario: { name: string; file: string; description: string };
  parameters: Record<string, unknown>;
  seed: number;
  threads: number;
  backend: 'cpu';
  agents: number;
  edges: number;
  directed: boolean;
  step_seconds: number;
  snapshot_every: number;
  steps_requested: number;
  steps_completed: number;
  status: RunStatus;
  error?: string;
  versions: Record<string, string>;
  started_at: string;
  finished_at?: string;
  setup_seconds: number;
  step_wall_ms: number[];
  /** Wall time of each phase in every step, by phase name. */
  phase_wall_ms: Record<string, number[]>;
  peak_rss_bytes: number;
  /** Resident memory once the world is built and the first files are written. */
  rss_after_setup_bytes?: number;
  /** The behaviour provider: heuristic, or an LLM (never the key). */
  llm: { provider: string; model?: string; base_url?: string; cache?: string; every?: number; budget?: number; samples?: number };
  /** Whether events.arrow (the full action trace) was written. */
  events?: boolean;
  files: { metrics: string; graph: string; agents: string[]; graph_end?: string; other?: string[] };
}

/**
 * Writes JSON atomically (temp file + rename), so a reader never sees half a manifest. A failure
 * removes the temp file and throws a FileWriteError naming `file` (the OS error alone does not).
 */
export function writeJsonAtomic(file: string, value: unknown): void {
  const tmp = `${file}.tmp`;
  const text = JSON.stringify(value, null, 2) + '\n';
  try {
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw new FileWriteError(file, err, Buffer.byteLength(text));
  }
}

/** Removes the files a previous run left in `dir`, so stale snapshots never mix with new ones. */
export function prepareRunDirectory(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['manifest.json', 'metrics.arrow', 'graph.arrow', 'graph-end.arrow', 'posts.arrow', 'events.arrow', 'cascades.arrow', 'archetypes.arrow', 'llm-cache.jsonl']) {
    fs.rmSync(path.join(dir, f), { force: true });
  }
  fs.rmSync(path.join(dir, 'agents'), { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'agents'));
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
export function writeGraph(file: string, graph: Graph): void {
  const { offsets, targets } = graph.following;
  const m = graph.directed ? graph.edges : graph.edges / 2;
  const source = sharedArray('i32', m);
  let target = targets;
  if (graph.directed) {
    for (let v = 0; v < graph.nodes; v++) source.fill(v, offsets[v], offsets[v + 1]);
  } else {
    target = sharedArray('i32', m);
    let k = 0;
    for (let v = 0; v < graph.nodes; v++) {
      for (let j = offsets[v]; j < offsets[v + 1]; j++) {
        const u = targets[j];
        if (u < v) continue;
        source[k] = v;
        target[k++] = u;
      }
    }
  }
  writeArrowFile(
    file,
    [
      { name: 'source', type: 'i32', values: source },
      { name: 'target', type: 'i32', values: target.subarray(0, m) },
    ],
    m,
    { directed: String(graph.directed), edge_meaning: 'source follows target' },
  );
}

/** The metrics table: step, simulated time, then each phase's metrics, one row per step. */
export class MetricsWriter {
  private readonly appender: ArrowFileAppender;
  constructor(
    file: string,
    private readonly schema: Array<[string, MetricType]>,
  ) {
    this.appender = ArrowFileAppender.open(file, this.columns([0], [0], schema.map(() => [])));
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
