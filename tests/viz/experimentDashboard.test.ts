/// <reference lib="dom" />
/**
 * Browser tests of the dashboard on an experiment directory (CONTRACT.md of issue 10): the
 * directory is written here (experiment.json and the Arrow tables, with apache-arrow; one real run
 * inside from `socsim run`), served with runner/serve/serve.ts and read in Chromium as
 * dashboard.test.ts does. Checked: the header, one line and one band per arm, the metric and grid
 * pickers, numbers in the effects table and its sorting, the link to a run's own dashboard, and an
 * experiment whose tables are not written yet (pending, then drawn when they appear).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import type { Page } from 'playwright-core';
import { buildDashboard } from '../../viz/build.ts';
import { launchBrowser, type Browser } from '../../viz/scripts/browser.ts';
import { startServer, type DashboardServer } from '../../runner/serve/serve.ts';
import { formatValue } from '../../viz/src/ui/chart.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-viz-exp-'));
const appDir = path.join(tmp, 'app');
const EXP = path.join(tmp, 'exp');
const PENDING = path.join(tmp, 'pending');

const ARMS = ['control', 'up', 'down'];
const FEEDS = [10, 20];
const SEEDS = [1, 2];
const METRICS = ['active_users', 'opinion_mean'];
const OUTCOMES = ['final_score', 'positive_share'];
const STEPS = 6;
const runId = (arm: string, feed: number, seed: number) => `${arm}-platform.feedSize=${feed}-s${seed}`;
/** The run written for real (the others have no directory: "not started"). */
const REAL = runId('up', 10, 1);

const plan = {
  format: 'socsim-experiment/1',
  name: 'herding',
  file: 'experiments/herding.ts',
  file_abs: '/abs/experiments/herding.ts',
  description: 'Does showing scores make people follow the crowd?',
  scenario: 'social-feed',
  reference: 'control',
  arms: ARMS,
  grid: { 'platform.feedSize': FEEDS },
  seeds: SEEDS,
  outcomes: OUTCOMES,
  options: { agents: 2000, steps: STEPS },
  runs: FEEDS.flatMap((f) => ARMS.flatMap((arm) => SEEDS.map((seed) => ({ id: runId(arm, f, seed), arm, grid: { 'platform.feedSize': f }, seed, dir: `runs/${runId(arm, f, seed)}` })))),
};

/** The mean in series.arrow: distinct per grid point, arm, metric and step. */
const seriesMean = (feed: number, arm: string, metric: string, step: number) => feed * 1000 + ARMS.indexOf(arm) * 100 + METRICS.indexOf(metric) * 10 + step;

function writeArrow(file: string, cols: Record<string, unknown>): void {
  fs.writeFileSync(file, tableToIPC(tableFromArrays(cols as Parameters<typeof tableFromArrays>[0]), 'file'));
}

function writeTables(dir: string): void {
  const s = { arm: [] as string[], feed: [] as number[], metric: [] as string[], step: [] as number[], mean: [] as number[] };
  for (const f of FEEDS)
    for (const arm of ARMS)
      for (const metric of METRICS)
        for (let step = 0; step < STEPS; step++) {
          s.arm.push(arm);
          s.feed.push(f);
          s.metric.push(metric);
          s.step.push(step);
          s.mean.push(seriesMean(f, arm, metric, step));
        }
  writeArrow(path.join(dir, 'series.arrow'), {
    arm: s.arm,
    'platform.feedSize': Float64Array.from(s.feed),
    metric: s.metric,
    step: Int32Array.from(s.step),
    n: Int32Array.from(s.step, () => SEEDS.length),
    mean: Float64Array.from(s.mean),
    ci_low: Float64Array.from(s.mean, (v) => v - 3),
    ci_high: Float64Array.from(s.mean, (v) => v + 3),
  });
  // effects.arrow: one row per (grid point, arm, group, outcome); the row checked below is up / feed 10 / positive_share.
  const e: Record<string, Array<number | string>> = {};
  const push = (row: Record<string, number | string>) => {
    for (const [k, v] of Object.entries(row)) (e[k] ??= []).push(v);
  };
  for (const f of FEEDS)
    for (const arm of ARMS)
      for (const outcome of OUTCOMES) {
        const ref = arm === 'control';
        const checked = f === 10 && arm === 'up' && outcome === 'positive_share';
        const mean = checked ? 0.6 : f + ARMS.indexOf(arm) + OUTCOMES.indexOf(outcome) / 10;
        const diff = ref ? NaN : checked ? 0.1 : ARMS.indexOf(arm) * (arm === 'down' ? -1 : 1);
        push({
          arm,
          'platform.feedSize': f,
          group: '',
          outcome,
          n: SEEDS.length,
          mean,
          ci_low: checked ? 0.5 : mean - 1,
          ci_high: checked ? 0.7 : mean + 1,
          diff,
          diff_ci_low: checked ? 0.05 : diff - 0.5,
          diff_ci_high: checked ? 0.15 : diff + 0.5,
          unpaired_ci_low: checked ? -0.02 : diff - 3,
          unpaired_ci_high: checked ? 0.22 : diff + 3,
        });
      }
  const f64 = (k: string) => Float64Array.from(e[k] as number[]);
  writeArrow(path.join(dir, 'effects.arrow'), {
    arm: e.arm,
    'platform.feedSize': f64('platform.feedSize'),
    group: e.group,
    outcome: e.outcome,
    n: Int32Array.from(e.n as number[]),
    ...Object.fromEntries(['mean', 'ci_low', 'ci_high', 'diff', 'diff_ci_low', 'diff_ci_high', 'unpaired_ci_low', 'unpaired_ci_high'].map((k) => [k, f64(k)])),
  });
  // summary.arrow: one row per run (no grouping); the dashboard does not read it, the contract has it.
  const runs = plan.runs;
  writeArrow(path.join(dir, 'summary.arrow'), {
    arm: runs.map((r) => r.arm),
    seed: Int32Array.from(runs, (r) => r.seed),
    'platform.feedSize': Float64Array.from(runs, (r) => r.grid['platform.feedSize']),
    group: runs.map(() => ''),
    final_score: Float64Array.from(runs, (_r, i) => i),
    positive_share: Float64Array.from(runs, () => 0.5),
  });
}

function socsimRun(out: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const args = ['run', 'social-feed', '--agents', '2000', '--steps', String(STEPS), '--snapshot-every', '3', '--quiet', '--out', out];
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/socsim.mjs'), ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

let browser: Browser;
let server: DashboardServer;

beforeAll(async () => {
  for (const d of [EXP, PENDING]) {
    fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(d, 'experiment.json'), JSON.stringify(plan, null, 2));
  }
  writeTables(EXP);
  const [, real, b] = await Promise.all([buildDashboard(appDir), socsimRun(path.join(EXP, 'runs', REAL)), launchBrowser()]);
  browser = b;
  expect(real.code, real.stderr).toBe(0);
  server = await startServer({ runDir: EXP, appDir, port: 0, watchMs: 100 });
});

afterAll(async () => {
  await server?.close();
  await browser?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function open(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForSelector('html[data-ready=true]', { timeout: 120_000 });
}
/**
 * Console errors other than 404s: the page asks for manifest.json before experiment.json, and for
 * tables and run manifests that may not exist yet; Chromium logs each 404 as an error.
 */
const pageErrors = () => browser.errors.filter((e) => !/status of 404/.test(e));
const attrs = (page: Page, sel: string, name: string) => page.$$eval(sel, (els, n) => els.map((e) => e.getAttribute(n) ?? ''), name);
const legend = (page: Page, arm: string) => page.$eval(`[data-chart="arms"] .legend li[data-name="${arm}"] .value`, (e) => e.textContent);
const cell = (page: Page, arm: string, outcome: string, cls: string) => page.$eval(`#exp-effects tr[data-arm="${arm}"][data-outcome="${outcome}"] td.${cls}`, (e) => e.textContent);

describe('dashboard on an experiment directory', () => {
  it('shows the plan, one line and one band per arm, and switches metric and grid point', async () => {
    const { page } = browser;
    browser.errors.length = 0;
    await open(page, server.url);
    expect(await page.textContent('#exp-title')).toBe('herding');
    expect(await page.textContent('#exp-header .description')).toBe(plan.description);
    expect(await page.textContent('[data-field="scenario"]')).toBe('social-feed');
    expect(await page.textContent('[data-field="arms"]')).toBe('control (reference) up down');
    expect(await page.textContent('[data-field="reference"]')).toBe('control');
    expect(await page.textContent('[data-field="seeds"]')).toBe('1, 2');
    expect(await page.textContent('[data-field="grid"]')).toBe('platform.feedSize ∈ {10, 20}');
    expect(await page.textContent('[data-field="runs"]')).toBe(String(plan.runs.length));
    // The run panels and step controls are not shown.
    expect(await page.isVisible('#panel-timeseries')).toBe(false);
    expect(await page.isVisible('#step')).toBe(false);

    // One line and one band per arm, STEPS points each, first metric at the first grid point.
    expect(await attrs(page, '[data-chart="arms"] path.line', 'data-name')).toEqual(ARMS);
    expect(await attrs(page, '[data-chart="arms"] path.band', 'data-name')).toEqual(ARMS);
    expect(await attrs(page, '[data-chart="arms"] path.line', 'data-points')).toEqual(ARMS.map(() => String(STEPS)));
    for (const d of await attrs(page, '[data-chart="arms"] path.band', 'd')) expect(d).toMatch(/^M.*Z$/);
    expect(await page.inputValue('#exp-metric')).toBe('active_users');
    expect(await page.$$eval('#exp-metric option', (o) => o.map((x) => (x as HTMLOptionElement).value))).toEqual(METRICS);
    for (const arm of ARMS) expect(await legend(page, arm)).toBe(formatValue(seriesMean(10, arm, 'active_users', STEPS - 1)));
    expect(await page.textContent('[data-chart="arms"] .legend li[data-name="control"] .name')).toBe('control (reference)');

    await page.selectOption('#exp-metric', 'opinion_mean');
    await page.waitForSelector('[data-chart="arms"][data-metric="opinion_mean"]');
    for (const arm of ARMS) expect(await legend(page, arm)).toBe(formatValue(seriesMean(10, arm, 'opinion_mean', STEPS - 1)));
    expect(await page.textContent('[data-chart="arms"] figcaption')).toBe('opinion_mean at platform.feedSize=10');

    expect(await page.isVisible('#exp-grid')).toBe(true);
    await page.selectOption('#exp-grid', { label: 'platform.feedSize=20' });
    expect(await legend(page, 'up')).toBe(formatValue(seriesMean(20, 'up', 'opinion_mean', STEPS - 1)));
    expect(await page.textContent('#exp-effects .grid-note')).toBe('at platform.feedSize=20');
    expect(await cell(page, 'up', 'final_score', 'mean')).toBe('21 [20, 22]');
    await page.selectOption('#exp-grid', { label: 'platform.feedSize=10' });
    expect(pageErrors()).toEqual([]);
  });

  it('shows the effects with their intervals, marks the reference arm and sorts by a column', async () => {
    const { page } = browser;
    const rows = () => page.$$eval('#exp-effects tbody tr', (trs) => trs.map((t) => `${(t as HTMLElement).dataset.outcome}/${(t as HTMLElement).dataset.arm}`));
    expect(await rows()).toEqual(OUTCOMES.flatMap((o) => ARMS.map((a) => `${o}/${a}`)));
    expect(await cell(page, 'up', 'positive_share', 'n')).toBe('2');
    expect(await cell(page, 'up', 'positive_share', 'mean')).toBe('0.6 [0.5, 0.7]');
    expect(await cell(page, 'up', 'positive_share', 'diff')).toBe('+0.1 [0.05, 0.15]');
    expect(await cell(page, 'up', 'positive_share', 'unpaired')).toBe('[−0.02, 0.22]');
    // The paired interval excludes 0 (the unpaired one does not): marked.
    expect(await page.getAttribute('#exp-effects tr[data-arm="up"][data-outcome="positive_share"] td.diff', 'class')).toMatch(/\bsig\b/);
    expect(await page.getAttribute('#exp-effects tr[data-arm="control"][data-outcome="positive_share"]', 'class')).toBe('reference');
    expect(await cell(page, 'control', 'positive_share', 'arm')).toBe('control reference');
    expect(await cell(page, 'control', 'positive_share', 'diff')).toBe('—');
    // No grouping in this experiment: no group column.
    expect(await page.$$('#exp-effects th.group')).toHaveLength(0);

    await page.click('#exp-effects button[data-sort="outcome"]'); // already ascending: now descending
    expect(await page.getAttribute('#exp-effects th.outcome', 'aria-sort')).toBe('descending');
    expect(await rows()).toEqual([...OUTCOMES].reverse().flatMap((o) => ARMS.map((a) => `${o}/${a}`)));
    await page.click('#exp-effects button[data-sort="diff"]');
    const diffs = await page.$$eval('#exp-effects tbody td.diff', (tds) => tds.map((t) => t.textContent!.split(' ')[0]));
    expect(diffs.slice(0, 4)).toEqual(['−2', '−2', '+0.1', '+1']);
    expect(diffs.slice(4)).toEqual(['—', '—']);
  });

  it('lists the runs; a run link opens that run in the single-run dashboard, which links back', async () => {
    const { page } = browser;
    await page.waitForFunction((id) => document.querySelector(`#exp-runs tr[data-run="${id}"] td.status`)?.textContent === 'completed', REAL);
    expect(await page.$$('#exp-runs tbody tr')).toHaveLength(plan.runs.length);
    expect(await page.textContent(`#exp-runs tr[data-run="${runId('down', 20, 2)}"] td.status`)).toBe('not started');
    browser.errors.length = 0;
    await page.click(`#exp-runs tr[data-run="${REAL}"] a`);
    await page.waitForSelector('html[data-ready=true]', { timeout: 120_000 });
    expect(new URL(page.url()).searchParams.get('run')).toBe(`runs/${REAL}`);
    expect(await page.textContent('[data-field="scenario"]')).toBe('social-feed');
    expect(await page.textContent('[data-field="agents"]')).toBe('2,000');
    expect(await page.textContent('[data-field="step"]')).toBe(`${STEPS} / ${STEPS}`);
    expect(await attrs(page, '[data-chart="active"] path.line', 'data-points')).toEqual([String(STEPS)]);
    expect(await page.$$('.heatmap g.column')).toHaveLength(3);
    expect(await page.isVisible('#exp-header')).toBe(false);
    // Its event stream follows that run (/events?run=runs/<id>).
    await page.waitForSelector('#live[data-state="connected"]');
    expect(pageErrors()).toEqual([]);
    await page.click('#back');
    await page.waitForSelector('#exp-title');
    expect(await page.textContent('#exp-title')).toBe('herding');
  });

  it('refuses a run path that is not plain segments', async () => {
    const { page } = browser;
    await page.goto(`${server.url}?run=${encodeURIComponent('../secret')}`);
    await page.waitForSelector('#error:not([hidden])');
    expect(await page.textContent('#error')).toMatch(/bad run path/);
  });
});

describe('dashboard on an experiment in progress', () => {
  it('says the tables are not computed yet, then draws them when they appear', async () => {
    const s = await startServer({ runDir: PENDING, appDir, port: 0, watchMs: 100 });
    try {
      const { page } = browser;
      await page.goto('about:blank');
      browser.errors.length = 0;
      await open(page, s.url);
      expect(await page.textContent('#exp-title')).toBe('herding');
      expect(await page.getAttribute('#exp-series', 'data-state')).toBe('pending');
      expect(await page.getAttribute('#exp-effects', 'data-state')).toBe('pending');
      expect(await page.textContent('#exp-series .pending')).toMatch(/series\.arrow is not computed yet/);
      expect(await page.textContent('#exp-effects .pending')).toMatch(/effects\.arrow is not computed yet/);
      expect(await page.$$('[data-chart="arms"] path.line')).toHaveLength(0);
      expect(await page.isVisible('#exp-effects table')).toBe(false);
      // The experiment finishes: the server's `experiment` event makes the page read the tables.
      writeTables(PENDING);
      await page.waitForSelector('#exp-effects[data-state="ready"]', { timeout: 10_000 });
      await page.waitForSelector('#exp-series[data-state="ready"]');
      expect(await page.$$('[data-chart="arms"] path.line')).toHaveLength(ARMS.length);
      expect(await cell(page, 'up', 'positive_share', 'mean')).toBe('0.6 [0.5, 0.7]');
      expect(pageErrors()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
