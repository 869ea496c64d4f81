/**
 * One step numbering for metrics, snapshots and progress: step N is the state after N steps. A SIR
 * run's metrics row of step N counts the same infectious agents as agents/step-N.arrow (a join on
 * `step` matches, in SQL too), the initial state is step 0 at time 0, and the progress line of the
 * k-th step says `step k/n` with the metrics of row k.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tableFromIPC } from 'apache-arrow';
import { runQuery } from '../../runner/analysis/query.ts';
import { socsim, tempDir } from './cliHelpers.ts';

const dir = path.join(tempDir('socsim-steps-'), 'sir');
let stderr = '';
let steps: number[] = [];
let times: number[] = [];
let infectious: number[] = [];

beforeAll(() => {
  // Not --quiet, and stderr is a pipe: one plain progress line per step.
  const r = socsim(['run', 'sir', '--agents', '2000', '--steps', '6', '--snapshot-every', '3', '--set', 'beta=0.08', '--out', dir]);
  expect(r.code, r.stderr).toBe(0);
  stderr = r.stderr;
  const m = tableFromIPC(fs.readFileSync(path.join(dir, 'metrics.arrow')));
  steps = Array.from(m.getChild('step')!.toArray() as Int32Array);
  times = Array.from(m.getChild('time')!.toArray() as Float64Array);
  infectious = Array.from(m.getChild('infectious')!.toArray() as Int32Array);
});

describe('step numbering', () => {
  it('metrics rows are numbered by the steps completed: the initial state is step 0, at time 0', () => {
    expect(steps).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(times).toEqual(steps.map((s) => s * 3600));
  });

  it('the metrics row of step N describes agents/step-N', () => {
    for (const n of [0, 3, 6]) {
      const snap = tableFromIPC(fs.readFileSync(path.join(dir, `agents/step-${String(n).padStart(6, '0')}.arrow`)));
      const state = snap.getChild('state')!.toArray() as string[];
      expect(infectious[steps.indexOf(n)], `step ${n}`).toBe(state.filter((s) => s === 'infectious').length);
    }
    // The counts change from step to step, so a join off by one would not match.
    expect(new Set(infectious).size).toBeGreaterThan(3);
  });

  it('joining metrics and agents on step in socsim query matches every snapshot', async () => {
    let csv = '';
    const sql = "select m.step, m.infectious, count(*) filter (where a.state = 'infectious') as counted from metrics m join agents a on a.step = m.step group by m.step, m.infectious order by m.step";
    await runQuery(dir, sql, { csv: '-', write: (t) => (csv += t) });
    const rows = csv.trim().split('\n').slice(1).map((l) => l.split(',').map(Number));
    expect(rows.map((r) => r[0])).toEqual([0, 3, 6]);
    for (const [, m, counted] of rows) expect(counted).toBe(m);
  });

  it('progress says step k/n for the k-th step, with the metrics of row k', () => {
    const lines = [...stderr.matchAll(/^step (\d+)\/6 .* infectious=(\d+)/gm)];
    expect(lines.map((l) => Number(l[1]))).toEqual([1, 2, 3, 4, 5, 6]);
    for (const l of lines) expect(Number(l[2]), l[0]).toBe(infectious[steps.indexOf(Number(l[1]))]);
  });
});
