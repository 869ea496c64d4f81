/** Outcome builders on a small real sir run, against values read from its files directly. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tableFromIPC } from '@uwdata/flechette';
import { BIN, tempDir } from '../runner/cliHelpers.ts';
import { custom, metric, openRun, rows } from '../../runner/experiment/outcomes.ts';
import { parseShard } from '../../runner/experiment/conduct.ts';

const dir = path.join(tempDir('socsim-outcomes-'), 'run');
let recovered: number[] = [];
let steps: number[] = [];
let states: string[] = [];
let leanings: string[] = [];

beforeAll(() => {
  const r = spawnSync(process.execPath, [BIN, 'run', 'sir', '--agents', '2000', '--steps', '8', '--quiet', '--set', 'beta=0.06', '--out', dir], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  const m = tableFromIPC(fs.readFileSync(path.join(dir, 'metrics.arrow')));
  recovered = Array.from(m.getChild('recovered').toArray() as Int32Array);
  steps = Array.from(m.getChild('step').toArray() as Int32Array);
  const a = tableFromIPC(fs.readFileSync(path.join(dir, 'agents/step-000008.arrow')));
  states = a.getChild('state').toArray() as string[];
  leanings = a.getChild('leaning').toArray() as string[];
});

describe('outcome builders', () => {
  it('metric statistics over every row, the initial state (step 0) included; at and timeTo by the hours of the states', () => {
    const run = openRun(dir);
    expect(steps).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(recovered[0]).toBe(0);
    expect(metric('recovered').final().evaluate(run)).toBe(recovered[8]);
    expect(metric('recovered').peak().evaluate(run)).toBe(Math.max(...recovered));
    expect(metric('recovered').min().evaluate(run)).toBe(0);
    expect(metric('recovered').mean().evaluate(run)).toBeCloseTo(recovered.reduce((a, b) => a + b, 0) / 9, 9);
    // Row step s is the state after s steps, at hour s (time = step x 3600 s); at(3.5) is the step-3 row.
    expect(metric('recovered').at(3.5).evaluate(run)).toBe(recovered[3]);
    expect(metric('recovered').at(0).evaluate(run)).toBe(recovered[0]);
    expect(metric('recovered').at(-0.5).evaluate(run)).toBeNaN();
    const threshold = recovered[5];
    const first = recovered.findIndex((v) => v >= threshold);
    expect(metric('recovered').timeTo(threshold).evaluate(run)).toBe(steps[first]);
    expect(metric('recovered').timeTo(1e9).evaluate(run)).toBeNaN();
    // The initial state (0 recovered) already is at or below 0: at hour 0.
    expect(metric('recovered').timeTo(0, { below: true }).evaluate(run)).toBe(0);
    expect(() => metric('recoverd').final().evaluate(run)).toThrow(/no column recoverd; did you mean recovered\?/);
  });

  it('rows: count, sum, mean and ratio, grouped, filtered, with fixed groups (a missing one is NaN)', () => {
    const run = openRun(dir);
    const infected: number[] = states.map((s) => (s === "susceptible" ? 0 : 1));
    expect(rows('agents/final', { count: true }).evaluate(run)).toBe(2000);
    expect(rows('agents/final', { sum: (r) => (r.state === 'susceptible' ? 0 : 1) }).evaluate(run)).toBe(infected.reduce((a, b) => a + b, 0));
    const byLeaning = rows('agents/final', { groupBy: 'leaning', mean: (r) => (r.state === 'susceptible' ? 0 : 1) }).evaluate(run) as Record<string, number>;
    const groups = [...new Set(leanings)].sort();
    expect(Object.keys(byLeaning)).toEqual(groups);
    for (const g of groups) {
      const idx = leanings.map((l, i) => (l === g ? i : -1)).filter((i) => i >= 0);
      expect(byLeaning[g]).toBeCloseTo(idx.reduce((t, i) => t + infected[i], 0) / idx.length, 12);
    }
    const fixed = rows('agents/step-000008.arrow', { groupBy: 'leaning', where: (r) => r.leaning !== 'left', count: true, groups: ['right', 'left', 'nowhere'] }).evaluate(run) as Record<string, number>;
    expect(Object.keys(fixed)).toEqual(['right', 'left', 'nowhere']);
    expect(fixed.right).toBe(leanings.filter((l) => l === 'right').length);
    expect(fixed.left).toBeNaN();
    expect(fixed.nowhere).toBeNaN();
    const ratio = rows('graph', { ratio: ['source', 'target'] }).evaluate(run) as number;
    const g = tableFromIPC(fs.readFileSync(path.join(dir, 'graph.arrow')));
    const sum = (c: string) => (Array.from(g.getChild(c).toArray() as Int32Array) as number[]).reduce((a, b) => a + b, 0);
    expect(ratio).toBeCloseTo(sum('source') / sum('target'), 12);
    expect(() => rows('posts', { count: true }).evaluate(run)).toThrow(/table posts.arrow is not in run/);
    expect(() => rows('graph', { count: true, sum: 'source' })).toThrow(/exactly one of/);
    expect(() => rows('graph', { count: true, groupby: 'x' } as never)).toThrow(/unknown option groupby; did you mean groupBy\?/);
  });

  it('custom outcomes see the manifest and tables; a wrong return value is an error', () => {
    const run = openRun(dir);
    expect(custom((r) => r.manifest.agents!).evaluate(run)).toBe(2000);
    expect(custom((r) => ({ a: r.table('metrics.arrow').numRows })).evaluate(run)).toEqual({ a: 9 });
    expect(() => custom(() => 'x' as never).evaluate(run)).toThrow(/return a number/);
  });
});

describe('--shard', () => {
  it('reads i/N, or the index of a Kubernetes Indexed Job or a Slurm array', () => {
    expect(parseShard('1/3', {})).toEqual({ index: 1, count: 3 });
    expect(parseShard('auto/4', { JOB_COMPLETION_INDEX: '2' })).toEqual({ index: 2, count: 4 });
    expect(parseShard('auto/4', { SLURM_ARRAY_TASK_ID: '7', SLURM_ARRAY_TASK_MIN: '5' })).toEqual({ index: 2, count: 4 });
    expect(() => parseShard('auto/4', {})).toThrow(/JOB_COMPLETION_INDEX/);
    expect(() => parseShard('4/4', {})).toThrow(/from 0 to 3/);
    expect(() => parseShard('x', {})).toThrow(/i\/N/);
  });
});
