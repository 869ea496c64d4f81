/**
 * `socsim export --format parquet` on a small social run (1,000 agents, 4 steps, an injected and
 * labelled story, so posts, cascades and interventions all have rows): every Arrow file has its
 * Parquet file, and DuckDB's own read_parquet (an independent reader: the files are written by
 * parquet-wasm) gives the same rows as the Arrow file, column by column; categorical columns are
 * dictionary-encoded and pages ZSTD-compressed. Files are read a slice of rows at a time (small
 * slices here, so batches split), which is what lets a 4 GB graph.arrow convert.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tableFromIPC } from 'apache-arrow';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { InputError } from '../../sim-core/errors.ts';
import { exportParquet, writeParquetFile } from '../../runner/analysis/parquetExport.ts';
import { STORY_SET, socsim, tempDir } from './cliHelpers.ts';

const tmp = tempDir('socsim-export-');
const run = path.join(tmp, 'run');
const out = path.join(tmp, 'pq');

/** A value as JSON-comparable: bigints and non-finite numbers as strings, vectors as arrays. */
function norm(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return String(v);
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof (v as Iterable<unknown>)[Symbol.iterator] === 'function') return Array.from(v as Iterable<unknown>, norm);
  return v;
}

function arrowRows(file: string): { names: string[]; rows: unknown[][] } {
  const t = tableFromIPC(fs.readFileSync(file));
  const names = t.schema.fields.map((f) => f.name);
  const cols = names.map((n) => t.getChild(n)!);
  return { names, rows: Array.from({ length: t.numRows }, (_, i) => cols.map((c) => norm(c.get(i)))) };
}

let conn: DuckDBConnection;
beforeAll(async () => {
  const r = socsim(['run', 'social-feed', '--agents', '1000', '--steps', '4', '--out', run, '--quiet', '--set', STORY_SET]);
  expect(r.code, r.stderr).toBe(0);
  conn = await (await DuckDBInstance.create(':memory:')).connect();
});

describe('socsim export --format parquet', () => {
  it('writes every table of a social run, read back by DuckDB with identical rows', async () => {
    const r = socsim(['export', run, '--format', 'parquet', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const arrows = (fs.readdirSync(run, { recursive: true }) as string[]).filter((f) => f.endsWith('.arrow')).sort();
    expect(arrows).toEqual(expect.arrayContaining(['metrics.arrow', 'posts.arrow', 'cascades.arrow', 'interventions.arrow', 'graph.arrow', 'agents/step-000000.arrow', 'agents/step-000004.arrow']));
    const parquets = (fs.readdirSync(out, { recursive: true }) as string[]).filter((f) => f.endsWith('.parquet')).sort();
    expect(parquets).toEqual(arrows.map((f) => f.replace(/\.arrow$/, '.parquet')));
    for (const f of arrows) {
      const want = arrowRows(path.join(run, f));
      const got = await conn.runAndReadAll(`SELECT * FROM read_parquet('${path.join(out, f.replace(/\.arrow$/, '.parquet'))}')`);
      expect(got.columnNames(), f).toEqual(want.names);
      expect(got.currentRowCount, f).toBe(want.rows.length);
      expect(got.getRowsJson().map((row) => row.map(norm)), f).toEqual(want.rows);
    }
    const posts = arrowRows(path.join(run, 'posts.arrow'));
    expect(posts.rows.length).toBeGreaterThan(50);
    expect(new Set(posts.rows.map((row) => row[posts.names.indexOf('tag')]))).toContain('rumour');
  });

  it('keeps categorical columns dictionary-encoded and compresses with ZSTD', async () => {
    const meta = await conn.runAndReadAll(`SELECT path_in_schema, encodings, compression FROM parquet_metadata('${path.join(out, 'posts.parquet')}')`);
    const rows = meta.getRowObjectsJson() as Array<{ path_in_schema: string; encodings: string; compression: string }>;
    const kind = rows.find((r) => r.path_in_schema === 'kind')!;
    expect(kind.encodings).toMatch(/DICTIONARY/);
    expect(new Set(rows.map((r) => r.compression))).toEqual(new Set(['ZSTD']));
    // The Arrow schema travels in the file, so Arrow readers get the dictionary type back.
    const kv = await conn.runAndReadAll(`SELECT decode(key) AS k FROM parquet_kv_metadata('${path.join(out, 'posts.parquet')}')`);
    expect(kv.getRowsJson().flat()).toContain('ARROW:schema');
  });

  it('refuses bad input with one line and exit code 2', async () => {
    const r = socsim(['export', run, '--format', 'parquet', '--out', out]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/not empty; pass --force/)]);
    expect(socsim(['export', run, '--format', 'csv']).code).toBe(2);
    for (const [dir, to, what] of [
      [tmp, path.join(tmp, 'x'), /holds no tables/],
      [run, path.join(run, 'pq'), /inside/],
      [path.join(tmp, 'missing'), undefined, /not a directory/],
    ] as const) {
      await expect(exportParquet(dir, to, false)).rejects.toThrow(InputError);
      await expect(exportParquet(dir, to, false)).rejects.toThrow(what);
    }
  });

  it('converts a file slice by slice (batches split, styles export and scratch) to the same rows', async () => {
    for (const f of ['graph.arrow', 'posts.arrow', 'agents/step-000004.arrow']) {
      const want = arrowRows(path.join(run, f));
      for (const style of ['export', 'scratch'] as const) {
        const target = path.join(tmp, `sliced-${style}-${path.basename(f, '.arrow')}.parquet`);
        await writeParquetFile(path.join(run, f), target, style, 64);
        const got = await conn.runAndReadAll(`SELECT * FROM read_parquet('${target}')`);
        expect(got.currentRowCount, f).toBe(want.rows.length);
        expect(want.rows.length, f).toBeGreaterThan(64); // more than one slice
        expect(got.getRowsJson().map((row) => row.map(norm)), f).toEqual(want.rows);
        const meta = await conn.runAndReadAll(`SELECT DISTINCT compression FROM parquet_metadata('${target}')`);
        expect(meta.getRowsJson().flat(), `${f} ${style}`).toEqual([style === 'export' ? 'ZSTD' : 'UNCOMPRESSED']);
      }
    }
  });

  it('names a table file that is not Arrow (exit 2); a query not naming its table still runs', () => {
    // A sparse file (no disk used) with the size of a 10M-agent run's graph.arrow, all zeros.
    const big = path.join(tmp, 'big-run');
    fs.mkdirSync(big);
    fs.copyFileSync(path.join(run, 'manifest.json'), path.join(big, 'manifest.json'));
    fs.copyFileSync(path.join(run, 'metrics.arrow'), path.join(big, 'metrics.arrow'));
    fs.writeFileSync(path.join(big, 'graph.arrow'), '');
    fs.truncateSync(path.join(big, 'graph.arrow'), 3_959_950_090);
    const r = socsim(['export', big, '--format', 'parquet', '--out', path.join(tmp, 'big-pq')]);
    expect(r.code, r.stderr).toBe(2);
    // The progress line for a file past 1 GB, then the error.
    expect(r.stderr.trim().split('\n')).toEqual(['converting graph.arrow (3.96 GB) to Parquet', expect.stringMatching(/^socsim: .*graph\.arrow: no Arrow schema message$/)]);
    const q = socsim(['query', big, 'select count(*) from graph']);
    expect(q.code, q.stderr).toBe(2);
    expect(q.stderr.trim().split('\n')).toEqual(['converting graph.arrow (3.96 GB) to Parquet', expect.stringMatching(/^socsim: .*graph\.arrow: no Arrow schema message$/)]);
    expect(socsim(['query', big, 'select count(*) as n from metrics']).code).toBe(0);
  });
});
