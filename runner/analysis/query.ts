/**
 * `socsim query DIR "SQL"`: SQL over a run, experiment or calibration directory on embedded DuckDB
 * (`@duckdb/node-api`, whose binary ships inside the npm package). DuckDB reads Parquet natively but
 * Arrow IPC only through an extension it downloads, so the tables the SQL names (runTables.ts; all
 * of them when it names none) are first written as Parquet to a temporary directory by the same
 * encoder as `socsim export` (uncompressed: the files are read once and deleted; a file is read a
 * slice of rows at a time, so tables of any size work; the Parquet files of a folder `socsim export`
 * wrote are copied there as they are), and each becomes a view: one file as it
 * is, several (agent snapshots, the runs of an experiment) as a `UNION ALL BY NAME` with their
 * `step` and `run` key columns.
 *
 * The SQL is read-only and reaches only those tables (queryAccess.ts): a statement that would write
 * a file or read one past them is refused, as bad input.
 *
 * Output: an aligned text table of the first `maxRows` rows, or every row as CSV (stdout or a file)
 * or Parquet (a file), written by DuckDB's COPY into the temporary directory and moved from there to
 * the file by socsim. A SQL error, a refused statement and empty SQL are bad input (exit 2, one
 * line, control characters escaped: DuckDB's messages quote the SQL).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { InputError, escapeControls, isInputError } from '../../sim-core/errors.ts';
import { listTables, type RunTable } from '../run/runTables.ts';
import { parquetPath, writeParquetFiles } from './parquetExport.ts';
import { accessRefusal, lockDown, lockedConfig, prepareQuery } from './queryAccess.ts';

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

/**
 * Moves socsim's result file `from` (in the temporary directory) to the user's `to`, named in
 * messages as `flag`; across file systems, a copy.
 */
function deliver(from: string, to: string, flag: string): void {
  const cannot = (err: unknown) => new InputError(`${flag} ${to}: cannot write it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  try {
    fs.renameSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw cannot(err);
    try {
      fs.copyFileSync(from, to);
    } catch (err2) {
      throw cannot(err2);
    }
  }
}

/** Runs `sql` over the tables of `dirArg` and writes the result. */
export async function runQuery(dirArg: string, sql: string, o: QueryOptions = {}): Promise<void> {
  if (o.csv !== undefined && o.parquet !== undefined) throw new InputError('give --csv or --parquet, not both');
  if (/^[\s;]*$/.test(sql)) throw new InputError('no SQL statement given; socsim query runs one, e.g. socsim query DIR "select * from metrics"');
  const write = o.write ?? ((s: string) => process.stdout.write(s));
  const dir = path.resolve(dirArg);
  const { tables } = listTables(dir, dirArg);
  const names = tables.map((t) => t.name);
  const { DuckDBInstance } = await duckdb();
  const only = tablesNamed(sql, tables);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-query-'));
  const instance = await DuckDBInstance.create(':memory:', lockedConfig(tmp));
  let conn: DuckDBConnection | undefined;
  try {
    await writeParquetFiles(dir, tables, tmp, { only, style: 'scratch', progress: o.progress });
    conn = await instance.connect();
    await lockDown(conn, tmp);
    for (const t of tables) if (only.has(t.name)) await conn.run(viewSql(t, tmp));
    const body = sql.trim().replace(/;+\s*$/, '');
    const fail = (err: unknown): never => {
      if (isInputError(err)) throw err;
      const message = (err as Error).message;
      // node-api reports a text of comments alone (no statement, so no parse error) thus.
      if (message === 'Error in native callback') throw new InputError('no SQL statement given (only comments); socsim query runs one');
      throw accessRefusal(message, names) ?? new InputError(escapeControls(`SQL error: ${oneLine(message)} (tables: ${names.join(', ')})`));
    };
    const statements = await conn.extractStatements(body).catch(fail);
    if (statements.count !== 1) throw new InputError(`socsim query runs one SQL statement; got ${statements.count}`);
    const prepared = await prepareQuery(conn, statements, body, names).catch(fail);
    if (o.csv !== undefined || o.parquet !== undefined) {
      const result = path.join(tmp, o.csv !== undefined ? '.result.csv' : '.result.parquet');
      const format = o.csv !== undefined ? 'FORMAT csv, HEADER true' : 'FORMAT parquet, COMPRESSION zstd';
      // FROM (...) also takes SHOW and DESCRIBE, which COPY (...) alone does not; the line break
      // ends a trailing -- comment of the SQL.
      await conn.run(`COPY (FROM (${body}\n)) TO ${literal(result)} (${format})`).catch(fail);
      if (o.csv === '-') write(fs.readFileSync(result, 'utf8'));
      else deliver(result, path.resolve((o.csv ?? o.parquet)!), o.csv !== undefined ? '--csv' : '--parquet');
      return;
    }
    const max = o.maxRows ?? 50;
    const reader = await prepared.runAndReadUntil(max + 1).catch(fail);
    const rows = reader.getRowsJson();
    const numeric = reader.columnTypes().map((t) => NUMERIC.test(t.toString()));
    write(formatTable(reader.columnNames(), rows.slice(0, max), numeric));
    if (rows.length > max) write(`(first ${max} rows shown; --max-rows N for more, --csv or --parquet for all)\n`);
  } finally {
    conn?.closeSync();
    instance.closeSync();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
