/**
 * Everything the dashboard reads from a run directory, through the server's /run/ route:
 * manifest.json, whole small tables (metrics, cascades, archetypes) with flechette, and agent
 * snapshots and the follow graph by byte ranges (arrowRanges.ts), one snapshot at a time.
 */
import { tableFromIPC } from '@uwdata/flechette';
import { httpSource, isDict, openArrowFile, readColumns, rowCount, type Column, type DictColumn, type NumericArray } from './arrowRanges.ts';

/** The part of runner/run/runDirectory.ts's Manifest the dashboard uses (the run-directory contract). */
export interface RunManifest {
  format: string;
  scenario: { name: string; file: string; description: string };
  parameters: Record<string, unknown>;
  seed: number;
  threads: number;
  agents: number;
  edges: number;
  directed: boolean;
  step_seconds: number;
  snapshot_every: number;
  steps_requested: number;
  steps_completed: number;
  status: 'running' | 'completed' | 'interrupted' | 'failed';
  error?: string;
  setup_seconds: number;
  step_wall_ms: number[];
  llm: { provider: string; model?: string };
  files: { metrics: string; graph: string; agents: string[]; graph_end?: string; other?: string[] };
}

/** A table as named columns (numbers as typed arrays, strings as arrays). */
export interface Columns {
  rows: number;
  names: string[];
  num: Record<string, NumericArray | Float64Array>;
  str: Record<string, string[]>;
}

export class HttpError extends Error {
  readonly status: number;
  constructor(status: number, url: string) {
    super(`${url}: HTTP ${status}`);
    this.status = status;
  }
}

async function get(url: string): Promise<Response> {
  const res = await fetch(url, { cache: 'no-store' });
  if (!res.ok) throw new HttpError(res.status, url);
  return res;
}

/** A JSON file under `base`. */
export function fetchJson<T>(base: string, name: string): Promise<T> {
  return get(`${base}${name}`).then((r) => r.json() as Promise<T>);
}

export function fetchManifest(base: string): Promise<RunManifest> {
  return fetchJson<RunManifest>(base, 'manifest.json');
}

/**
 * Reads a whole Arrow file into columns; undefined when the file does not exist (404). A file that
 * a live run appends to is valid at every instant, but one HTTP read can span an append and come
 * back torn: then it is read again (up to 5 times).
 */
export async function fetchTable(base: string, name: string): Promise<Columns | undefined> {
  let t;
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await get(`${base}${name}`);
    } catch (e) {
      if (e instanceof HttpError && e.status === 404) return undefined;
      throw e;
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    try {
      t = tableFromIPC(bytes);
      break;
    } catch (e) {
      if (attempt >= 4) throw new Error(`${name}: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
    }
  }
  const cols: Columns = { rows: t.numRows, names: [], num: {}, str: {} };
  for (const f of t.schema.fields) {
    const a = t.getChild(f.name)!.toArray() as unknown;
    cols.names.push(f.name);
    if (ArrayBuffer.isView(a)) cols.num[f.name] = a as NumericArray;
    else if (Array.isArray(a) && a.every((v) => typeof v === 'number' || typeof v === 'bigint')) cols.num[f.name] = Float64Array.from(a as number[], Number);
    else if (Array.isArray(a)) cols.str[f.name] = (a as unknown[]).map((v) => (v == null ? '' : String(v)));
  }
  return cols;
}

/** Snapshot step from its file name (agents/step-000012.arrow -> 12). */
export function snapshotStep(name: string): number {
  const m = /step-(\d+)\.arrow$/.exec(name);
  return m ? Number(m[1]) : NaN;
}

/** Columns a snapshot reading asks for, when present. */
export const SNAPSHOT_ATTRS = ['age_band', 'leaning', 'activity_tier'];

export interface Snapshot {
  step: number;
  rows: number;
  opinion?: NumericArray;
  archetype?: NumericArray;
  attrs: DictColumn[];
  /** Bytes fetched for it. */
  bytes: number;
}

/** Reads the named columns of one snapshot that exist in it (others are skipped). */
export async function fetchSnapshot(base: string, name: string, want: string[]): Promise<Snapshot> {
  const src = httpSource(`${base}${name}`);
  const file = await openArrowFile(src);
  const have = new Set(file.fields.map((f) => f.name));
  const names = want.filter((n) => have.has(n));
  const cols: Record<string, Column> = names.length ? await readColumns(file, names) : {};
  const rows = names.length ? (isDict(cols[names[0]!]!) ? (cols[names[0]!] as DictColumn).codes.length : (cols[names[0]!] as NumericArray).length) : await rowCount(file);
  const attrs = SNAPSHOT_ATTRS.filter((n) => cols[n] && isDict(cols[n])).map((n) => cols[n] as DictColumn);
  return {
    step: snapshotStep(name),
    rows,
    opinion: cols.opinion && !isDict(cols.opinion) ? cols.opinion : undefined,
    archetype: cols.archetype && !isDict(cols.archetype) ? cols.archetype : undefined,
    attrs,
    bytes: src.bytes,
  };
}

/**
 * Edge rows (source, target) of graph.arrow from `windows` evenly spaced windows of `rowsPer` rows
 * each, read by byte ranges and concatenated in row order (so follow lists stay contiguous). Spread
 * windows see ordinary accounts as well as the heavy followers that come first in some graphs.
 */
export async function fetchEdgeWindows(base: string, name: string, windows: number, rowsPer: number): Promise<{ source: Int32Array; target: Int32Array; total: number; rows: number; bytes: number }> {
  const src = httpSource(`${base}${name}`);
  const file = await openArrowFile(src);
  const total = await rowCount(file);
  const starts: number[] = [];
  if (total <= windows * rowsPer) starts.push(0);
  else for (let k = 0; k < windows; k++) starts.push(Math.floor((k * (total - rowsPer)) / Math.max(1, windows - 1)));
  const parts = await Promise.all(
    starts.map((st) => readColumns(file, ['source', 'target'], { rowStart: st, rowEnd: Math.min(total, starts.length === 1 ? total : st + rowsPer) })),
  );
  const rows = parts.reduce((a, p) => a + (p.source as NumericArray).length, 0);
  const source = new Int32Array(rows);
  const target = new Int32Array(rows);
  let at = 0;
  for (const p of parts) {
    source.set(p.source as NumericArray, at);
    target.set(p.target as NumericArray, at);
    at += (p.source as NumericArray).length;
  }
  return { source, target, total, rows, bytes: src.bytes };
}
