/**
 * `socsim export DIR --format parquet`: every table of a run, experiment or calibration directory
 * (runTables.ts) as Parquet, one .parquet file per .arrow file at the same relative path. The
 * encoder is parquet-wasm (arrow-rs compiled to WebAssembly), which takes Arrow IPC: columns keep
 * their types, categorical columns stay dictionary-encoded (and arrow-rs stores the Arrow schema in
 * the file, so polars and pyarrow read them back as categoricals), and pages are ZSTD-compressed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tableFromIPC, tableToIPC } from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import { InputError } from '../sim-core/errors.ts';
import { listTables, type RunTable } from './runTables.ts';

/** Parquet bytes of one Arrow IPC file (file or stream format). */
export function arrowToParquet(ipc: Uint8Array): Uint8Array {
  // parquet-wasm reads the IPC stream format; socsim writes the file format (Feather v2).
  const stream = tableToIPC(tableFromIPC(ipc), 'stream');
  const table = parquet.Table.fromIPCStream(stream);
  const props = new parquet.WriterPropertiesBuilder().setCompression(parquet.Compression.ZSTD).setDictionaryEnabled(true).build();
  return parquet.writeParquet(table, props); // consumes table and props
}

export const parquetPath = (rel: string) => rel.replace(/\.arrow$/, '.parquet');

/** The largest file read whole (Node's readFileSync, parquet-wasm's single table): 2 GiB - 1. */
const MAX_WHOLE = 2 ** 31 - 1;

export interface ExportResult {
  tables: RunTable[];
  files: number;
  bytes: number;
}

/** Writes `tables` (files relative to `dir`) as Parquet under `out`, same relative paths. */
export function writeParquetFiles(dir: string, tables: RunTable[], out: string, only?: ReadonlySet<string>): ExportResult {
  let files = 0;
  let bytes = 0;
  for (const t of tables) {
    if (only && !only.has(t.name)) continue;
    for (const f of t.files) {
      const target = path.join(out, parquetPath(f.rel));
      fs.mkdirSync(path.dirname(target), { recursive: true });
      const source = path.join(dir, f.rel);
      const size = fs.statSync(source).size;
      if (size > MAX_WHOLE) {
        throw new InputError(
          `${f.rel} is ${(size / 1e9).toFixed(2)} GB, past the 2 GiB that socsim export and query read at once (table ${t.name}); read it with pyarrow or polars (pyarrow.ipc.open_file, polars.scan_ipc), or leave the table out of the SQL`,
        );
      }
      const pq = arrowToParquet(fs.readFileSync(source));
      const tmp = `${target}.tmp`;
      fs.writeFileSync(tmp, pq);
      fs.renameSync(tmp, target);
      files++;
      bytes += pq.length;
    }
  }
  return { tables, files, bytes };
}

/**
 * `socsim export`: `out` must be new or empty; with `force`, an earlier export there is
 * overwritten file by file (files this export does not write are left alone).
 */
export function exportParquet(dirArg: string, outArg: string | undefined, force: boolean): ExportResult & { out: string } {
  const dir = path.resolve(dirArg);
  const { tables } = listTables(dir, dirArg);
  const out = path.resolve(outArg ?? `${dir}-parquet`);
  const label = outArg ?? path.relative(process.cwd(), out);
  if (out === dir || out.startsWith(dir + path.sep)) throw new InputError(`--out ${label} is inside ${dirArg}; choose a directory outside it, so the run directory keeps only what socsim run wrote`);
  if (fs.existsSync(out)) {
    if (!fs.statSync(out).isDirectory()) throw new InputError(`--out ${label} is not a directory; choose a new or empty directory`);
    if (fs.readdirSync(out).length > 0 && !force) throw new InputError(`--out ${label} is not empty; pass --force to overwrite the files of an earlier export there, or choose a new directory`);
  }
  fs.mkdirSync(out, { recursive: true });
  return { ...writeParquetFiles(dir, tables, out), out };
}
