/**
 * What the SQL of `socsim query` may touch: it is read-only and limited to the run directory's
 * tables. Two of DuckDB's own guards, each of which alone keeps the run directory unwritten:
 *
 * - Files. The database is in memory (none of it is a file), and before any SQL runs
 *   `enable_external_access = false` with `allowed_directories` = the scratch folder holding the
 *   Parquet copies of the run's tables (the only files the views read; DuckDB's spill files,
 *   `temp_directory`, go there too), then `lock_configuration = true`, so no statement can SET any
 *   of it back. DuckDB then refuses to open any other path for reading or writing: `/etc/passwd`,
 *   the run directory itself (its tables are read through the copies, as DuckDB reads Arrow only
 *   through an extension), `ATTACH` of a file. Extensions are neither installed nor autoloaded.
 * - Statements. `allowed_directories` admits writes as well as reads, so the one statement must
 *   prepare as a SELECT (SHOW, DESCRIBE, SUMMARIZE, PRAGMA listings and VALUES are SELECTs too) or
 *   an EXPLAIN of one: EXPLAIN ANALYZE runs what it explains. COPY, EXPORT, ATTACH, CREATE, SET,
 *   INSTALL, LOAD, CALL and the rest are refused, so the user's SQL writes no file at all.
 *
 * `--csv FILE` and `--parquet FILE` are socsim's own COPY of the result into the scratch folder,
 * which socsim then moves to FILE (query.ts): the path the user gave is never open to their SQL.
 */
import path from 'node:path';
import type { DuckDBConnection, DuckDBExtractedStatements, DuckDBPreparedStatement } from '@duckdb/node-api';
import { InputError, escapeControls } from '../../sim-core/errors.ts';

const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** DuckDB's settings at creation for a query whose tables' Parquet copies lie under `scratch`. */
export function lockedConfig(scratch: string): Record<string, string> {
  return { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false', allow_community_extensions: 'false', temp_directory: path.join(scratch, 'spill') };
}

/**
 * Limits the instance of `conn` to the files under `scratch` and locks its configuration. Runs
 * before any view is made and any user SQL runs. (`allowed_directories`, a list, cannot be given
 * through the C API's creation options, hence SET; `enable_external_access` then turns it on.)
 */
export async function lockDown(conn: DuckDBConnection, scratch: string): Promise<void> {
  await conn.run(`SET allowed_directories = [${literal(scratch)}]`);
  await conn.run('SET enable_external_access = false');
  await conn.run('SET lock_configuration = true');
}

/** The one-line refusal of SQL that would reach past the run's tables; `what` says what it tried. */
export function refusal(what: string, tables: string[]): InputError {
  return new InputError(escapeControls(`SQL refused: socsim query is read-only and limited to the run directory (its tables: ${tables.join(', ')}); ${what}`));
}

/** DuckDB's message when a file outside `allowed_directories` is named, as a refusal; else undefined. */
export function accessRefusal(message: string, tables: string[]): InputError | undefined {
  if (!/^Permission Error: /.test(message)) return undefined;
  const file = /Cannot access (?:file|directory) "([^"]*)"/.exec(message);
  return refusal(file ? `it cannot open "${file[1]}"` : message.split('\n')[0], tables);
}

/** Leading comments, EXPLAIN, its ANALYZE and its options: what precedes the explained statement. */
const EXPLAIN_HEAD = /^(?:\s+|--[^\n]*|\/\*[\s\S]*?\*\/)*explain\b\s*(?:analy[sz]e\b\s*)?(?:\((?:[^()'"]|'[^']*')*\)\s*)?/i;

/**
 * The prepared statement of `statements` (one, `body`), when it is a query: a SELECT, or an EXPLAIN
 * whose explained statement prepares as a SELECT. Anything else is refused. DuckDB's errors while
 * preparing (a syntax error, a file outside the scratch folder) are thrown as they are.
 */
export async function prepareQuery(conn: DuckDBConnection, statements: DuckDBExtractedStatements, body: string, tables: string[]): Promise<DuckDBPreparedStatement> {
  const { StatementType } = await import('@duckdb/node-api');
  const prepared = await statements.prepare(0);
  const type = prepared.statementType;
  if (type === StatementType.SELECT) return prepared;
  const howToWrite = type === StatementType.COPY || type === StatementType.EXPORT ? '; write a result with --csv FILE or --parquet FILE' : '';
  if (type !== StatementType.EXPLAIN) throw refusal(`it runs a query (SELECT, SHOW, DESCRIBE, SUMMARIZE, EXPLAIN), not ${StatementType[type].replace(/_/g, ' ')}${howToWrite}`, tables);
  const head = EXPLAIN_HEAD.exec(body);
  const explained = head ? await conn.prepare(body.slice(head[0].length)).catch(() => undefined) : undefined;
  const inner = explained?.statementType;
  explained?.destroySync();
  if (inner !== StatementType.SELECT) throw refusal('it explains a query only (EXPLAIN [ANALYZE] SELECT ...)', tables);
  return prepared;
}
