/**
 * `socsim query DIR "SQL"`: SQL over a run, experiment or calibration directory on embedded DuckDB
 * (`@duckdb/node-api`, whose binary ships inside the npm package). DuckDB reads Parquet natively but
 * Arrow IPC only through an extension it downloads, so the tables the SQL names (runTables.ts; all
 * of them when it names none) are first written as Parquet to a temporary directory by the same
 * encoder as `socsim export` (uncompressed: the files are read once and deleted; a file is read a
 * slice of rows at a time, so tables of any size work), and each becomes a view: one file as it
 * is, several (agent snapshots, the runs of an experiment) as a `UNION ALL BY NAME` with their
 * `step` and `run` key columns.
 *
 * Output: an aligned text table of the first `maxRows` rows, or every row as CSV (stdout or a file)
 * or Parquet (a file), written by DuckDB's COPY. A SQL error is bad input (exit 2, one line).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { InputError } from '../sim-core/errors.ts';
import { listTables, type RunTable } from './runTables.ts';
import { parquetPath, writeParquetFiles } from './parquetExport.ts';

export const DUCKDB_INSTALL = 'npm install @duckdb/node-api';

async function duckdb(): Promise<typeof import('@duckdb/node-api')> {
  try {
    return await import('@duckdb/node-api');
  } catch (err) {
    throw new InputError(`socsim query needs DuckDB (the optional dependency @duckdb/node-api), which is not installed or does not load here (${(err as Error).message.split('\n')[0]}); install it with: ${DUCKDB_INSTALL}`);
  }
}

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;
const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** The SQL of the view for `t`, whose Parquet files lie under `root`. */
export function viewSql(t: RunTable, root: string): string {
  const parts = t.files.map((f) => {
    const keys = [
      ...(t.keys.includes('run') ? [`${literal(f.run!)} AS run`] : []),
      ...(t.keys.includes('step') ? [`${f.step!} AS step`] : []),
    ];
    return `SELECT ${[...keys, '*'].join(', ')} FROM read_parquet(${literal(path.join(root, parquetPath(f.rel)))})`;
  });
  return `CREATE VIEW ${ident(t.name)} AS ${parts.join(' UNION ALL BY NAME ')}`;
}

/** The tables whose names occur as words in `sql`; all of them when none does (e.g. SHOW TABLES). */
export function tablesNamed(sql: string, tables: RunTable[]): Set<string> {
  const named = tables.filter((t) => new RegExp(`(^|[^A-Za-z0-9_])${t.name}($|[^A-Za-z0-9_])`, 'i').test(sql));
  return new Set((named.length > 0 ? named : tables).map((t) => t.name));
}

/** DuckDB's message as one line (it spans several: the error, candidates, the SQL with a caret). */
export function oneLine(message: string): string {
  return message
    .replace(/^Failed to extract statements: /, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^LINE \d+:/.test(l) && !/^\^$/.test(l))
    .join(' ');
}

export interface QueryOptions {
  /** Write every row as CSV to this file; '-' for stdout. */
  csv?: string;
  /** Write every row as Parquet to this file. */
  parquet?: string;
  /** Rows printed as a table (default 50). */
  maxRows?: number;
  write?: (text: string) => void;
  /** Hears of each table file past 1 GB while it is converted to Parquet (stderr in the CLI). */
  progress?: (line: string) => void;
}

/** Formats rows as an aligned text table (numbers right-aligned). */
export function formatTable(names: string[], rows: unknown[][], numeric: boolean[]): string {
  const cell = (v: unknown) => (v === null || v === undefined ? 'NULL' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const cells = rows.map((r) => r.map(cell));
  const width = names.map((n, j) => Math.max(n.length, ...cells.map((r) => r[j].length)));
  const line = (r: string[]) => r.map((c, j) => (numeric[j] ? c.padStart(width[j]) : c.padEnd(width[j]))).join('  ').trimEnd();
  return [line(names), width.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n') + '\n';
}

const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL)/;

/** Runs `sql` over the tables of `dirArg` and writes the result. */
export async function runQuery(dirArg: string, sql: string, o: QueryOptions = {}): Promise<void> {
  if (o.csv !== undefined && o.parquet !== undefined) throw new InputError('give --csv or --parquet, not both');
  const write = o.write ?? ((s: string) => process.stdout.write(s));
  const dir = path.resolve(dirArg);
  const { tables } = listTables(dir, dirArg);
  const { DuckDBInstance } = await duckdb();
  const only = tablesNamed(sql, tables);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-query-'));
  const instance = await DuckDBInstance.create(':memory:');
  let conn: DuckDBConnection | undefined;
  try {
    await writeParquetFiles(dir, tables, tmp, { only, style: 'scratch', progress: o.progress });
    conn = await instance.connect();
    for (const t of tables) if (only.has(t.name)) await conn.run(viewSql(t, tmp));
    const body = sql.trim().replace(/;+\s*$/, '');
    const fail = (err: unknown) => {
      throw new InputError(`SQL error: ${oneLine((err as Error).message)} (tables: ${tables.map((t) => t.name).join(', ')})`);
    };
    const statements = await conn.extractStatements(body).catch(fail);
    if (statements!.count !== 1) throw new InputError(`socsim query runs one SQL statement; got ${statements!.count}`);
    if (o.csv !== undefined || o.parquet !== undefined) {
      const target = o.csv === '-' ? path.join(tmp, 'out.csv') : path.resolve((o.csv ?? o.parquet)!);
      const format = o.csv !== undefined ? 'FORMAT csv, HEADER true' : 'FORMAT parquet, COMPRESSION zstd';
      // FROM (...) also takes SHOW and DESCRIBE, which COPY (...) alone does not.
      await conn.run(`COPY (FROM (${body})) TO ${literal(target)} (${format})`).catch(fail);
      if (o.csv === '-') write(fs.readFileSync(target, 'utf8'));
      return;
    }
    const max = o.maxRows ?? 50;
    const reader = await conn.runAndReadUntil(body, max + 1).catch(fail);
    const rows = reader!.getRowsJson();
    const numeric = reader!.columnTypes().map((t) => NUMERIC.test(t.toString()));
    write(formatTable(reader!.columnNames(), rows.slice(0, max), numeric));
    if (rows.length > max) write(`(first ${max} rows shown; --max-rows N for more, --csv or --parquet for all)\n`);
  } finally {
    conn?.closeSync();
    instance.closeSync();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
