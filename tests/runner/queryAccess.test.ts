/**
 * The statement guard of socsim query on a bare DuckDB instance locked to one folder: files under
 * the folder are open to DuckDB (the run's Parquet copies live there), so a statement that writes
 * one (COPY, also inside EXPLAIN ANALYZE, which runs it) is refused before it runs, and the
 * configuration cannot be SET back. Queries, and EXPLAIN of one, prepare.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { InputError } from '../../sim-core/errors.ts';
import { lockDown, lockedConfig, prepareQuery } from '../../runner/analysis/queryAccess.ts';
import { tempDir } from './cliHelpers.ts';

const scratch = tempDir('socsim-query-access-');

describe('prepareQuery on a locked instance', () => {
  it('prepares queries and refuses what would write, even under the allowed folder', async () => {
    const instance = await DuckDBInstance.create(':memory:', lockedConfig(scratch));
    const conn = await instance.connect();
    try {
      await lockDown(conn, scratch);
      await conn.run(`COPY (select range as x from range(3)) TO '${path.join(scratch, 't.parquet')}'`); // socsim's own copy, allowed
      await conn.run(`CREATE VIEW t AS SELECT * FROM read_parquet('${path.join(scratch, 't.parquet')}')`);
      const prepare = async (sql: string) => prepareQuery(conn, await conn.extractStatements(sql), sql, ['t']);
      for (const sql of ['select sum(x) from t', 'show tables', 'describe t', 'summarize t', 'explain select * from t', 'explain analyze select * from t', '/* c */ EXPLAIN (ANALYZE) select 1']) {
        await expect(prepare(sql), sql).resolves.toBeDefined();
      }
      const evil = path.join(scratch, 'evil.csv');
      for (const sql of [`copy t to '${evil}'`, `explain analyze copy t to '${evil}'`, `explain (analyze) copy t to '${evil}'`, `/* c */ explain analyze copy t to '${evil}'`, `attach '${path.join(scratch, 'x.db')}'`, 'create table u as select 1', 'set threads = 1', 'load json', 'checkpoint']) {
        const err = await prepare(sql).then(() => undefined, (e: unknown) => e);
        expect(err, sql).toBeInstanceOf(InputError);
        expect((err as Error).message, sql).toMatch(/^SQL refused: socsim query is read-only and limited to the run directory \(its tables: t\); it /);
      }
      expect(fs.readdirSync(scratch).sort()).toEqual(['t.parquet']);
      await expect(conn.run('SET enable_external_access = true')).rejects.toThrow(/locked/);
      await expect(conn.run("select * from read_csv('/etc/passwd')")).rejects.toThrow(/Permission Error/);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});
