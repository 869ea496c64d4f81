/**
 * `socsim query` end to end: SQL over a small social run (every table by name, agents with their
 * snapshot step) and over the sir-beta experiment at 2,000 agents, 1 seed, 2 hours (its tables and
 * its runs' tables with a run column); a table, CSV and Parquet out; SQL errors are one line, exit 2.
 * The SQL is read-only and limited to the run directory's tables: a COPY ... TO over a run's file
 * and a read of a file outside are refused with one line, exit 2, and the file is unchanged; empty
 * SQL is one line too; control characters of the SQL that DuckDB's messages quote are escaped.
 * A folder `socsim export` wrote answers the same SQL with the same rows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tableFromIPC } from 'apache-arrow';
import { DuckDBInstance } from '@duckdb/node-api';
import { InputError } from '../../sim-core/errors.ts';
import { runQuery } from '../../runner/analysis/query.ts';
import { STORY_SET, socsim, tempDir } from './cliHelpers.ts';

const tmp = tempDir('socsim-query-');
const run = path.join(tmp, 'run');
const exp = path.join(tmp, 'exp');
const rowsOf = (file: string) => tableFromIPC(fs.readFileSync(file));
/** runQuery in this process (the CLI is driven once per kind of output; the rest need no child). */
async function query(dir: string, sql: string, o: { csv?: string; parquet?: string } = { csv: '-' }): Promise<string> {
  let text = '';
  await runQuery(dir, sql, { ...o, write: (t) => (text += t) });
  return text;
}

beforeAll(() => {
  const r = socsim(['run', 'social-feed', '--agents', '1000', '--steps', '4', '--out', run, '--quiet', '--set', STORY_SET]);
  expect(r.code, r.stderr).toBe(0);
  const e = socsim(['experiment', 'experiments/sir-beta.ts', '--out', exp, '--seeds', '1', '--hours', '2', '--jobs', '2', '--quiet']);
  expect(e.code, e.stderr).toBe(0);
});

describe('socsim query', () => {
  it('sees every table of a run by name and prints a table', async () => {
    const posts = rowsOf(path.join(run, 'posts.arrow'));
    const r = socsim(['query', run, 'select count(*) as n, count(distinct kind) as kinds from posts']);
    expect(r.code, r.stderr).toBe(0);
    const kinds = new Set(Array.from({ length: posts.numRows }, (_, i) => posts.getChild('kind')!.get(i)));
    expect(r.stdout.trim().split('\n')).toEqual([expect.stringMatching(/^\s*n\s+kinds$/), expect.stringMatching(/^-+\s+-+$/), expect.stringMatching(new RegExp(`^\\s*${posts.numRows}\\s+${kinds.size}$`))]);
    const tables = await query(run, 'show tables');
    expect(tables.trim().split('\n').slice(1).sort()).toEqual(['agents', 'cascades', 'conversations', 'graph', 'graph_end', 'interventions', 'metrics', 'posts', 'stories']);
    const inter = await query(run, 'select step, kind, posts from interventions order by step');
    expect(inter).toMatch(/^step,kind,posts\n0,inject,5\n2,label,\d+\n$/);
  });

  it('gathers agent snapshots with their step, and writes CSV and Parquet files', async () => {
    const csv = path.join(tmp, 'agents.csv');
    const r = socsim(['query', run, 'select step, count(*) as n, avg(opinion) as mean from agents group by step order by step', '--csv', csv]);
    expect(r.code, r.stderr).toBe(0);
    const lines = fs.readFileSync(csv, 'utf8').trim().split('\n');
    expect(lines.map((l) => l.split(',').slice(0, 2).join(','))).toEqual(['step,n', '0,1000', '4,1000']);
    const last = rowsOf(path.join(run, 'agents/step-000004.arrow')).getChild('opinion')!.toArray() as Float32Array;
    const mean = last.reduce((a, b) => a + b, 0) / last.length;
    expect(Number(lines[2].split(',')[2])).toBeCloseTo(mean, 6);
    const pq = path.join(tmp, 'metrics.parquet');
    await query(run, 'select step, posts_original from metrics', { parquet: pq });
    const conn = await (await DuckDBInstance.create(':memory:')).connect();
    const back = await conn.runAndReadAll(`select count(*) from read_parquet('${pq}')`);
    expect(back.getRowsJson()[0][0]).toBe(String(rowsOf(path.join(run, 'metrics.arrow')).numRows));
  });

  it('sees an experiment\'s tables and its runs\' tables with a run column', async () => {
    const r = socsim(['query', exp, "select run, count(*) as steps from metrics where step > 0 group by run order by run", '--csv']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('run,steps\nbase-s1,2\nhigh-s1,2\nlow-s1,2\n');
    const eff = await query(exp, "select arm, mean from effects where outcome = 'final_recovered' order by arm");
    expect(eff.trim().split('\n').map((l) => l.split(',')[0])).toEqual(['arm', 'base', 'high', 'low']);
    const summary = rowsOf(path.join(exp, 'summary.arrow'));
    const s = await query(exp, 'select count(*) from summary');
    expect(s.trim().split('\n')[1]).toBe(String(summary.numRows));
  });

  it('reads the folder socsim export wrote (Parquet) by the same table names, with the same rows', async () => {
    for (const [dir, sqls] of [
      [run, ['select step, count(*) as n, avg(opinion) as mean from agents group by step order by step', 'select * from metrics order by step', 'select count(*) as n, sum(depth) as d from posts', 'select * from interventions']],
      [exp, ["select run, count(*) as n, max(recovered) as r from metrics group by run order by run", "select arm, mean from effects order by arm, outcome", 'select run, step, count(*) as n from agents group by run, step order by run, step']],
    ] as const) {
      const exported = `${dir}-parquet`;
      const e = socsim(['export', dir, '--format', 'parquet', '--out', exported]);
      expect(e.code, e.stderr).toBe(0);
      expect(await query(exported, 'show tables')).toBe(await query(dir, 'show tables'));
      for (const sql of sqls) expect(await query(exported, sql), sql).toBe(await query(dir, sql));
    }
  });

  it('answers a SQL error with one line and exit code 2', () => {
    const r = socsim(['query', run, 'select nope from posts']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/SQL error: .*nope.*\(tables: .*posts/);
  });

  it('is read-only: a COPY over a run\'s file is refused with one line, exit 2, the file unchanged', () => {
    const file = path.join(run, 'metrics.arrow');
    const before = fs.readFileSync(file);
    const r = socsim(['query', run, `COPY (select 1) TO '${file}'`]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^socsim: SQL refused: socsim query is read-only and limited to the run directory .*metrics\.arrow/)]);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    const into = path.join(tmp, 'copied.csv');
    const c = socsim(['query', run, `COPY metrics TO '${into}'`]);
    expect(c.code, c.stderr).toBe(2);
    expect(fs.existsSync(into)).toBe(false);
  });

  it('reads no file outside the run directory\'s tables', async () => {
    const outside = path.join(tmp, 'outside.csv');
    fs.writeFileSync(outside, 'a,b\n1,2\n');
    const r = socsim(['query', run, "select * from read_csv('/etc/passwd')"]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^socsim: SQL refused: socsim query is read-only and limited to the run directory .*"\/etc\/passwd"/)]);
    expect(r.stdout).not.toMatch(/root:/);
    for (const sql of [`select * from read_csv('${outside}')`, `select * from read_text('${outside}')`, `select * from glob('${tmp}/*')`, `select * from read_json('${path.join(run, 'manifest.json')}')`, "set enable_external_access = true", `attach '${path.join(tmp, 'x.db')}'`, 'install httpfs']) {
      const err = await runQuery(run, sql, { write: () => {} }).then(() => undefined, (e: unknown) => e);
      expect(err, sql).toBeInstanceOf(InputError);
      expect((err as Error).message, sql).toMatch(/^SQL refused: socsim query is read-only and limited to the run directory/);
    }
    expect(fs.existsSync(path.join(tmp, 'x.db'))).toBe(false);
  });

  it('writes --csv and --parquet files where the user says, also in a folder of their own', async () => {
    const own = fs.mkdtempSync(path.join(tmp, 'own-'));
    await query(run, 'select step, posts_original from metrics order by step -- a trailing comment', { csv: path.join(own, 'm.csv') });
    expect(fs.readFileSync(path.join(own, 'm.csv'), 'utf8')).toMatch(/^step,posts_original\n1,\d+\n2,\d+\n/);
    await query(run, 'show tables', { parquet: path.join(own, 't.parquet') });
    const conn = await (await DuckDBInstance.create(':memory:')).connect();
    const back = await conn.runAndReadAll(`select count(*) from read_parquet('${path.join(own, 't.parquet')}')`);
    expect(back.getRowsJson()[0][0]).toBe('9');
    const err = await runQuery(run, 'select 1', { csv: path.join(tmp, 'no-such-folder', 'x.csv'), write: () => {} }).then(() => undefined, (e: unknown) => e);
    expect((err as Error).message).toMatch(/^--csv .*x\.csv: cannot write it \(ENOENT\)$/);
  });

  it('answers empty SQL with one line and exit code 2', async () => {
    for (const sql of ['', '  ', ' ;; ']) {
      const r = socsim(['query', run, sql]);
      expect(r.code, JSON.stringify(sql)).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^socsim: no SQL statement given; socsim query runs one/)]);
    }
    const err = await runQuery(run, '-- only a comment', { write: () => {} }).then(() => undefined, (e: unknown) => e);
    expect((err as Error).message).toMatch(/^no SQL statement given/);
  });

  it('escapes the control characters that DuckDB\'s message quotes from the SQL', () => {
    const r = socsim(['query', run, 'select "\x1b[31m" from metrics']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('"\\x1b[31m"');
    expect(r.stderr).not.toContain('\x1b');
  });

  it('refuses other bad input with an InputError naming it', async () => {
    for (const [dir, sql, o, what] of [
      [run, 'selec 1', {}, /^SQL error: Parser Error: syntax error at or near "selec"/],
      [run, 'select * from nothing_here', {}, /^SQL error: .*nothing_here/],
      [path.join(tmp, 'missing'), 'select 1', {}, /not a directory/],
      [run, 'select 1', { csv: '-', parquet: 'x.parquet' }, /--csv or --parquet/],
      [run, 'select 1; select 2', {}, /one SQL statement; got 2/],
    ] as const) {
      const err = await runQuery(dir, sql, { ...o, write: () => {} }).then(() => undefined, (e: unknown) => e);
      expect(err, sql).toBeInstanceOf(InputError);
      expect((err as Error).message).toMatch(what);
      expect((err as Error).message).not.toMatch(/\n/);
    }
  });
});
