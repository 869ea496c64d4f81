/**
 * `socsim export DIR --format parquet`: every table of a run, experiment or calibration directory
 * (runTables.ts) as Parquet, one .parquet file per .arrow file at the same relative path. The
 * encoder is parquet-wasm (arrow-rs compiled to WebAssembly), which takes Arrow IPC: columns keep
 * their types, categorical columns stay dictionary-encoded (and arrow-rs stores the Arrow schema in
 * the file, so polars and pyarrow read them back as categoricals), and pages are ZSTD-compressed.
 * Files are read and encoded a slice of rows at a time, so a table file of any size converts in
 * bounded memory (graph.arrow of 10M agents, 3.96 GB: 66 s here, ~0.5 GB resident).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Table, tableFromIPC, tableToIPC, type RecordBatch } from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import { InputError } from '../../sim-core/errors.ts';
import { readArrowBatches } from '../../sim-core/io/arrowFile.ts';
import { isParquet, listTables, type RunTable } from '../run/runTables.ts';
import { makeDirectory } from '../../sim-core/io/makeDirectory.ts';

/**
 * How Parquet files are written. `export`: ZSTD pages, dictionary encoding. `scratch`: neither, for
 * files DuckDB reads once and `socsim query` deletes (3.96 GB of graph.arrow at 10M agents: 20 s
 * against 66 s to write here).
 */
export type ParquetStyle = 'export' | 'scratch';

function writerProperties(style: ParquetStyle): parquet.WriterProperties {
  const b = new parquet.WriterPropertiesBuilder();
  if (style === 'scratch') return b.setCompression(parquet.Compression.UNCOMPRESSED).setDictionaryEnabled(false).build();
  return b.setCompression(parquet.Compression.ZSTD).setDictionaryEnabled(true).build();
}

/** Parquet bytes of one Arrow IPC file (file or stream format), read whole (a file with no rows). */
function arrowToParquet(ipc: Uint8Array, style: ParquetStyle = 'export'): Uint8Array {
  // parquet-wasm reads the IPC stream format; socsim writes the file format (Feather v2).
  const table = parquet.Table.fromIPCStream(tableToIPC(tableFromIPC(ipc), 'stream'));
  return parquet.writeParquet(table, writerProperties(style)); // consumes table and props
}

/** An apache-arrow batch as parquet-wasm's (through the IPC stream format). */
function wasmBatch(batch: RecordBatch): parquet.RecordBatch {
  const table = parquet.Table.fromIPCStream(tableToIPC(new Table([batch]), 'stream'));
  try {
    return table.recordBatch(0)!;
  } finally {
    table.free();
  }
}

/**
 * Writes the Arrow IPC file `source` as Parquet to `target` (through `target.tmp`, renamed when
 * whole) and returns the bytes written. The file is read a slice of rows at a time
 * (readArrowBatches) and encoded as a stream, so its size is not bounded by what one read or
 * WebAssembly's 4 GiB memory holds: graph.arrow at 10M agents is 3.96 GB. `rows` bounds a slice
 * (readArrowBatches' default when not given).
 */
export async function writeParquetFile(source: string, target: string, style: ParquetStyle = 'export', rows?: number): Promise<number> {
  const tmp = `${target}.tmp`;
  const batches = readArrowBatches(source, rows);
  const first = batches.next();
  if (first.done) {
    // No rows: parquet-wasm's stream writer takes its schema from the first batch, so the file
    // (a schema and dictionaries only) is encoded whole.
    const pq = arrowToParquet(fs.readFileSync(source), style);
    fs.writeFileSync(tmp, pq);
    fs.renameSync(tmp, target);
    return pq.length;
  }
  let next: IteratorResult<RecordBatch> = first;
  const input = new ReadableStream<parquet.RecordBatch>({
    pull(controller) {
      if (next.done) controller.close();
      else {
        controller.enqueue(wasmBatch(next.value));
        next = batches.next();
      }
    },
  });
  let bytes = 0;
  try {
    const output = (await parquet.transformParquetStream(input, writerProperties(style))) as ReadableStream<Uint8Array>;
    const fh = await fs.promises.open(tmp, 'w');
    try {
      for await (const chunk of output as unknown as AsyncIterable<Uint8Array>) {
        await fh.write(chunk);
        bytes += chunk.length;
      }
    } finally {
      await fh.close();
    }
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.renameSync(tmp, target);
  return bytes;
}

export const parquetPath = (rel: string) => rel.replace(/\.arrow$/, '.parquet');

export interface ExportResult {
  tables: RunTable[];
  files: number;
  bytes: number;
}

export interface WriteOptions {
  /** Only these tables (by name). */
  only?: ReadonlySet<string>;
  style?: ParquetStyle;
  /** Hears of each file past 1 GB: before it is converted and how long it took. */
  progress?: (line: string) => void;
}

/**
 * Writes `tables` (files relative to `dir`) as Parquet under `out`, same relative paths. A table
 * file that is Parquet already (`dir` is an export) is copied as it is.
 */
export async function writeParquetFiles(dir: string, tables: RunTable[], out: string, { only, style = 'export', progress }: WriteOptions = {}): Promise<ExportResult> {
  let files = 0;
  let bytes = 0;
  for (const t of tables) {
    if (only && !only.has(t.name)) continue;
    for (const f of t.files) {
      const target = path.join(out, parquetPath(f.rel));
      makeDirectory(path.dirname(target));
      const source = path.join(dir, f.rel);
      const size = fs.statSync(source).size;
      const t0 = performance.now();
      if (size > 1e9) progress?.(`converting ${f.rel} (${(size / 1e9).toFixed(2)} GB) to Parquet`);
      if (isParquet(source)) {
        fs.copyFileSync(source, target);
        bytes += size;
      } else bytes += await writeParquetFile(source, target, style);
      if (size > 1e9) progress?.(`converted ${f.rel} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      files++;
    }
  }
  return { tables, files, bytes };
}

/**
 * `socsim export`: `out` must be new or empty; with `force`, an earlier export there is
 * overwritten file by file (files this export does not write are left alone).
 */
export async function exportParquet(dirArg: string, outArg: string | undefined, force: boolean, progress?: (line: string) => void): Promise<ExportResult & { out: string }> {
  const dir = path.resolve(dirArg);
  const { tables } = listTables(dir, dirArg);
  const out = path.resolve(outArg ?? `${dir}-parquet`);
  const label = outArg ?? path.relative(process.cwd(), out);
  if (out === dir || out.startsWith(dir + path.sep)) throw new InputError(`--out ${label} is inside ${dirArg}; choose a directory outside it, so the run directory keeps only what socsim run wrote`);
  if (fs.existsSync(out)) {
    if (!fs.statSync(out).isDirectory()) throw new InputError(`--out ${label} is not a directory; choose a new or empty directory`);
    if (fs.readdirSync(out).length > 0 && !force) throw new InputError(`--out ${label} is not empty; pass --force to overwrite the files of an earlier export there, or choose a new directory`);
  }
  makeDirectory(out);
  return { ...(await writeParquetFiles(dir, tables, out, { progress })), out };
}
