/// <reference lib="dom" />
/** The dashboard's experiment reductions (viz/src/data/experiment.ts), on hand-written tables. */
import { describe, expect, it } from 'vitest';
import { armSeries, effectRows, excludesZero, fmtInterval, fmtStat, gridLabel, gridPoints, rowGridKeys, seriesMetrics, sortEffects, type ExperimentPlan } from '../../viz/src/data/experiment.ts';
import type { Columns } from '../../viz/src/data/run.ts';

const plan: ExperimentPlan = {
  format: 'socsim-experiment/1',
  name: 'herding',
  scenario: 'social-feed',
  reference: 'control',
  arms: ['control', 'up'],
  grid: { 'platform.feedSize': [10, 20] },
  seeds: [1, 2],
  outcomes: ['final_score', 'positive_share'],
  runs: [10, 20].flatMap((f) =>
    ['control', 'up'].flatMap((arm) => [1, 2].map((seed) => ({ id: `${arm}-platform.feedSize=${f}-s${seed}`, arm, grid: { 'platform.feedSize': f }, seed, dir: `runs/${arm}-platform.feedSize=${f}-s${seed}` }))),
  ),
};

/** A series table: arms up (listed first, out of plan order) and control, two metrics, grid 10 and 20, steps out of order. */
function seriesTable(): Columns {
  const arm: string[] = [];
  const metric: string[] = [];
  const feed: number[] = [];
  const step: number[] = [];
  const mean: number[] = [];
  for (const f of [10, 20]) {
    for (const a of ['up', 'control']) {
      for (const m of ['active_users', 'opinion_mean']) {
        for (const s of [1, 0, 2]) {
          arm.push(a);
          metric.push(m);
          feed.push(f);
          step.push(s);
          mean.push(f * 100 + (a === 'up' ? 10 : 0) + (m === 'opinion_mean' ? 5 : 0) + s);
        }
      }
    }
  }
  return {
    rows: arm.length,
    names: ['arm', 'platform.feedSize', 'metric', 'step', 'n', 'mean', 'ci_low', 'ci_high'],
    num: {
      'platform.feedSize': Float64Array.from(feed),
      step: Int32Array.from(step),
      n: Int32Array.from(step, () => 2),
      mean: Float64Array.from(mean),
      ci_low: Float64Array.from(mean, (v) => v - 1),
      ci_high: Float64Array.from(mean, (v) => v + 1),
    },
    str: { arm, metric },
  };
}

describe('grid points', () => {
  it('come from the runs in order, keyed so table rows match them', () => {
    const pts = gridPoints(plan);
    expect(pts.map((p) => p.label)).toEqual(['platform.feedSize=10', 'platform.feedSize=20']);
    const t = seriesTable();
    const keys = rowGridKeys(t, Object.keys(plan.grid));
    expect(keys.filter((k) => k === pts[1]!.key)).toHaveLength(t.rows / 2);
  });
  it('without runs, are the product of the grid; without a grid, one point that every row matches', () => {
    const two = { ...plan, runs: [], grid: { a: [1, 2], b: ['x', 'y'] } };
    expect(gridPoints(two).map((p) => p.label)).toEqual(['a=1 · b=x', 'a=1 · b=y', 'a=2 · b=x', 'a=2 · b=y']);
    const none = { ...plan, runs: [], grid: {} };
    const [only] = gridPoints(none);
    expect(gridPoints(none)).toHaveLength(1);
    expect(only!.label).toBe('no grid');
    expect(rowGridKeys(seriesTable(), []).every((k) => k === only!.key)).toBe(true);
    expect(gridLabel(['k'], { k: 'v' })).toBe('k=v');
  });
});

describe('armSeries', () => {
  it('gives one series per arm in plan order, steps sorted and drawn at their step (the steps completed), with the band', () => {
    const t = seriesTable();
    const keys = rowGridKeys(t, ['platform.feedSize']);
    const [, p20] = gridPoints(plan);
    expect(seriesMetrics(t)).toEqual(['active_users', 'opinion_mean']);
    const s = armSeries(t, keys, plan, 'opinion_mean', p20!.key);
    expect(s.map((a) => a.arm)).toEqual(['control', 'up']);
    expect(Array.from(s[0]!.x)).toEqual([0, 1, 2]);
    expect(Array.from(s[0]!.mean)).toEqual([2005, 2006, 2007]);
    expect(Array.from(s[1]!.mean)).toEqual([2015, 2016, 2017]);
    expect(Array.from(s[1]!.lo)).toEqual([2014, 2015, 2016]);
    expect(Array.from(s[1]!.hi)).toEqual([2016, 2017, 2018]);
    expect(Array.from(s[1]!.n)).toEqual([2, 2, 2]);
    expect(armSeries(t, keys, plan, 'missing', p20!.key)).toEqual([]);
  });
});

/** effects.arrow columns for one grid point: rows in an order unlike the default. */
function effectsTable(): Columns {
  const rows = [
    // arm, group, outcome, n, mean, lo, hi, diff, dlo, dhi, ulo, uhi
    ['up', '', 'positive_share', 2, 0.6, 0.5, 0.7, 0.1, 0.05, 0.15, -0.02, 0.22],
    ['control', '', 'positive_share', 2, 0.5, 0.45, 0.55, NaN, NaN, NaN, NaN, NaN],
    ['up', '', 'final_score', 2, 3, 2, 4, -1, -3, 1, -4, 2],
    ['control', '', 'final_score', 2, 4, 3, 5, NaN, NaN, NaN, NaN, NaN],
  ] as const;
  const numNames = ['n', 'mean', 'ci_low', 'ci_high', 'diff', 'diff_ci_low', 'diff_ci_high', 'unpaired_ci_low', 'unpaired_ci_high'];
  return {
    rows: rows.length,
    names: ['arm', 'group', 'outcome', ...numNames],
    num: Object.fromEntries(numNames.map((n, j) => [n, Float64Array.from(rows, (r) => r[j + 3] as number)])),
    str: { arm: rows.map((r) => r[0]), group: rows.map((r) => r[1]), outcome: rows.map((r) => r[2]) },
  };
}

describe('effects', () => {
  it('reads rows, marks the reference arm and orders them outcome, group, reference first', () => {
    const t = effectsTable();
    const rows = effectRows(t, rowGridKeys(t, []), { ...plan, grid: {} }, '');
    expect(rows.map((r) => `${r.outcome}/${r.arm}`)).toEqual(['final_score/control', 'final_score/up', 'positive_share/control', 'positive_share/up']);
    expect(rows[0]).toMatchObject({ reference: true, mean: 4, diff: NaN });
    expect(rows[3]).toMatchObject({ reference: false, n: 2, mean: 0.6, diff_ci_low: 0.05, unpaired_ci_high: 0.22 });
  });
  it('sorts by a column either way, ties in the default order, NaN last', () => {
    const t = effectsTable();
    const rows = effectRows(t, rowGridKeys(t, []), plan, '');
    expect(sortEffects(rows, plan, 'outcome', true).map((r) => `${r.outcome}/${r.arm}`)).toEqual(['positive_share/control', 'positive_share/up', 'final_score/control', 'final_score/up']);
    expect(sortEffects(rows, plan, 'diff', true).map((r) => r.diff)).toEqual([0.1, -1, NaN, NaN]);
    expect(sortEffects(rows, plan, 'diff', false).map((r) => r.diff)).toEqual([-1, 0.1, NaN, NaN]);
    expect(sortEffects(rows, plan, 'arm', false).map((r) => `${r.arm}/${r.outcome}`)).toEqual(['control/final_score', 'control/positive_share', 'up/final_score', 'up/positive_share']);
    expect(sortEffects(rows, plan, 'mean', false).map((r) => r.mean)).toEqual([0.5, 0.6, 3, 4]);
  });
});

describe('formats', () => {
  it('3 significant digits, whole numbers from 1,000, a sign on differences, – for NaN', () => {
    expect(fmtStat(0.123456)).toBe('0.123');
    expect(fmtStat(2)).toBe('2');
    expect(fmtStat(12345.6)).toBe('12,346');
    expect(fmtStat(0.05, true)).toBe('+0.05');
    expect(fmtStat(0, true)).toBe('0');
    expect(fmtStat(2500, true)).toBe('+2,500');
    expect(fmtStat(-0.5, true)).toBe('−0.5');
    expect(fmtStat(NaN)).toBe('–');
    expect(fmtInterval(0.05, 0.15)).toBe('[0.05, 0.15]');
    expect(fmtInterval(NaN, NaN)).toBe('');
    expect(excludesZero(0.05, 0.15)).toBe(true);
    expect(excludesZero(-3, 1)).toBe(false);
    expect(excludesZero(-3, -1)).toBe(true);
    expect(excludesZero(NaN, NaN)).toBe(false);
  });
});
