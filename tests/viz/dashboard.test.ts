/// <reference lib="dom" />
/**
 * Browser tests of the dashboard: build the app with vite, write real runs with the CLI, serve them
 * with runner/serve/serve.ts and drive Chromium through playwright-core. Every panel must draw the run's
 * data (element counts and labels checked against the Arrow files read here with flechette), the
 * scrubber must change the step panels, and a page opened on `socsim run --serve` must advance as
 * steps finish.
 *
 * The Chromium is the one inside the @sparticuz/chromium devDependency, so no system browser is
 * needed; SOCSIM_CHROMIUM points elsewhere (viz/scripts/browser.ts has the order).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableFromIPC } from '@uwdata/flechette';
import type { Page } from 'playwright-core';
import { buildDashboard } from '../../viz/build.ts';
import { launchBrowser, type Browser } from '../../viz/scripts/browser.ts';
import { startServer, type DashboardServer } from '../../runner/serve/serve.ts';
import { ccdf, histogram, latestByRoot } from '../../viz/src/data/reduce.ts';
import { formatValue } from '../../viz/src/ui/chart.ts';
import { writeArrowFile } from '../../sim-core/io/arrowFile.ts';
import { OPINION_BINS, OPINION_RANGE } from '../../viz/src/state.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = path.join(ROOT, 'bin/socsim.mjs');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-viz-'));
const appDir = path.join(tmp, 'app');
const SMALL = path.join(tmp, 'small');
const LLM = path.join(tmp, 'llm');
const STEPS = 12;

type Cols = Record<string, ArrayLike<number> & Iterable<number>>;
function readArrow(file: string): { rows: number; num: Cols; str: Record<string, string[]> } {
  const t = tableFromIPC(fs.readFileSync(file));
  const num: Cols = {};
  const str: Record<string, string[]> = {};
  for (const f of t.schema.fields) {
    const a = t.getChild(f.name)!.toArray() as unknown;
    if (ArrayBuffer.isView(a)) num[f.name] = a as unknown as Cols[string];
    else str[f.name] = Array.from(a as ArrayLike<unknown>, String);
  }
  return { rows: t.numRows, num, str };
}

function socsim(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A local OpenAI-compatible server whose replies name the archetype and the call number. */
async function fakeLlm(): Promise<{ url: string; close(): Promise<void> }> {
  let n = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      if (req.url?.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"object":"list","data":[]}');
        return;
      }
      const b = JSON.parse(body) as { model: string; messages: Array<{ role: string; content: string }> };
      const persona = /^Group: (.*)$/m.exec(b.messages.find((m) => m.role === 'user')?.content ?? '')?.[1] ?? '?';
      n++;
      const reply = {
        probabilities: { post: 0.04, like: 0.3, dislike: 0.02, repost: 0.05, quote: 0.01, comment: 0.03, report: 0.001, mute: 0.002, unfollow: 0.001, follow: 0.01 },
        opinion: { eps: 0.35, mu: 0.12, backfire: 0.02 },
        reason: `reason ${n}: ${persona}`,
        example_post: `example ${n}`,
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `c${n}`, object: 'chat.completion', created: 1, model: b.model, choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(reply) }, finish_reason: 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 40, total_tokens: 140 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/v1`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let browser: Browser;
const figures: Record<string, number> = {};
/** CLI children still running (killed in afterAll if a test failed before stopping them). */
const children = new Set<ChildProcess>();

beforeAll(async () => {
  const llm = await fakeLlm();
  try {
    const [built, small, withLlm, b] = await Promise.all([
      buildDashboard(appDir),
      socsim(['run', 'social-feed', '--agents', '5000', '--steps', String(STEPS), '--snapshot-every', '4', '--quiet', '--out', SMALL, '--set', 'platform.notes.enabled=true', '--set', 'platform.notes.contributors=0.2']),
      socsim(['run', 'social-feed', '--agents', '3000', '--steps', '7', '--llm', 'openai', '--llm-base-url', llm.url, '--llm-every', '3', '--quiet', '--out', LLM], { SOCSIM_LLM_API_KEY: 'test-key' }),
      launchBrowser(),
    ]);
    browser = b;
    figures.buildMs = built.ms;
    expect(small.code, small.stderr).toBe(0);
    expect(withLlm.code, withLlm.stderr).toBe(0);
  } finally {
    await llm.close();
  }
});

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await browser?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
  if (Object.keys(figures).length) process.stdout.write(`dashboard figures: ${JSON.stringify(figures)}\n`);
});

async function open(page: Page, url: string): Promise<number> {
  await page.goto(url);
  await page.waitForSelector('html[data-ready=true]', { timeout: 120_000 });
  return page.evaluate(() => (window as unknown as { __socsim: { firstFullRenderMs: number } }).__socsim.firstFullRenderMs);
}

const texts = (page: Page, sel: string) => page.$$eval(sel, (els) => els.map((e) => e.textContent ?? ''));
const attrs = (page: Page, sel: string, name: string) => page.$$eval(sel, (els, n) => els.map((e) => e.getAttribute(n) ?? ''), name);
const legendValue = (page: Page, chart: string, name: string) => page.$eval(`[data-chart="${chart}"] .legend li[data-name="${name}"] .value`, (e) => e.textContent);

describe('dashboard on a finished social-feed run', () => {
  let server: DashboardServer;
  const metrics = () => readArrow(path.join(SMALL, 'metrics.arrow'));
  const manifest = () => JSON.parse(fs.readFileSync(path.join(SMALL, 'manifest.json'), 'utf8'));
  beforeAll(async () => {
    server = await startServer({ runDir: SMALL, appDir, port: 0 });
  });
  afterAll(() => server?.close());

  it('draws every panel from the run files', async () => {
    const { page } = browser;
    browser.errors.length = 0;
    figures.smallFirstFullRenderMs = await open(page, server.url);
    const m = manifest();
    const met = metrics();
    const last = met.rows - 1;

    // Header.
    expect(await page.textContent('[data-field="scenario"]')).toBe('social-feed');
    expect(await page.textContent('[data-field="agents"]')).toBe('5,000');
    expect(await page.textContent('[data-field="edges"]')).toBe(m.edges.toLocaleString('en-US'));
    expect(await page.textContent('[data-field="step"]')).toBe(`${STEPS} / ${STEPS}`);
    expect(await page.textContent('[data-field="time"]')).toBe('12:00');
    expect(await page.textContent('[data-field="status"]')).toBe('completed');
    expect(Number(await page.textContent('[data-field="rate"]'))).toBeGreaterThan(0);

    // Time series: one path per metric, one point per step, legend values from metrics.arrow.
    expect(await attrs(page, '[data-chart="active"] path.line', 'data-name')).toEqual(['active_users']);
    expect(await attrs(page, '[data-chart="active"] path.line', 'data-points')).toEqual([String(STEPS)]);
    expect(await page.isVisible('[data-chart="fit"]')).toBe(false);
    expect(await legendValue(page, 'active', 'active_users')).toBe(formatValue(met.num.active_users![last]!));
    const actionNames = await attrs(page, '[data-chart="actions"] path.line', 'data-name');
    expect(actionNames).toEqual(['like', 'dislike', 'repost', 'quote', 'comment', 'post', 'follow', 'unfollow', 'mute', 'report'].map((a) => `actions_${a}`));
    expect(await legendValue(page, 'actions', 'actions_like')).toBe(formatValue(met.num.actions_like![last]!));
    expect(await attrs(page, '[data-chart="posts"] path.line', 'data-name')).toEqual(['posts_original', 'posts_repost', 'posts_quote', 'posts_comment']);
    expect(await legendValue(page, 'posts', 'posts_original')).toBe(formatValue(met.num.posts_original![last]!));
    expect(await page.$$('[data-chart="llm"] path.line')).toHaveLength(0);
    expect(await page.textContent('[data-chart="llm"] .note')).toMatch(/no LLM provider/);
    expect(await attrs(page, '[data-chart="notes"] path.line', 'data-name')).toEqual(['notes_written', 'note_ratings', 'notes_shown', 'posts_noted']);
    expect(await legendValue(page, 'notes', 'note_ratings')).toBe(formatValue(met.num.note_ratings![last]!));

    // Opinion: one heatmap column of 40 cells per snapshot; the histogram is the last snapshot's.
    const snaps = m.files.agents.length;
    expect(snaps).toBe(4);
    expect(await page.$$('.heatmap rect.cell')).toHaveLength(snaps * OPINION_BINS);
    expect(await attrs(page, '.heatmap g.column', 'data-step')).toEqual(['0', '4', '8', '12']);
    const op = readArrow(path.join(SMALL, `agents/step-${String(STEPS).padStart(6, '0')}.arrow`)).num.opinion!;
    const expectedHist = Array.from(histogram(op, OPINION_BINS, ...OPINION_RANGE));
    expect((await attrs(page, '.histogram rect.bar', 'data-count')).map(Number)).toEqual(expectedHist);
    expect(await attrs(page, '[data-chart="polarization"] path.line', 'data-points')).toEqual([String(STEPS), String(STEPS)]);
    expect(await legendValue(page, 'polarization', 'opinion_var')).toBe(formatValue(met.num.opinion_var![last]!));

    // Cascades: the 5 largest over time, and the CCDF with one point per distinct size.
    const cas = readArrow(path.join(SMALL, 'cascades.arrow'));
    expect(await page.$$('[data-chart="cascade-top"] path.line')).toHaveLength(5);
    const sizes = latestByRoot(cas.num as never, cas.num.size!, STEPS - 1);
    expect(await page.$$('[data-chart="cascade-ccdf"] circle.point')).toHaveLength(ccdf(sizes).x.length);
    expect(await page.textContent('[data-chart="cascade-ccdf"] .legend .name')).toBe(`${sizes.length.toLocaleString('en')} cascades after step ${STEPS}`);

    // Recommender.
    expect(await attrs(page, '[data-chart="recommender"] path.line', 'data-name')).toEqual(['echo_chamber_index', 'feed_diversity', 'in_network_share', 'feed_stance_distance']);
    expect(await legendValue(page, 'recommender', 'echo_chamber_index')).toBe(formatValue(met.num.echo_chamber_index![last]!));
    expect(await page.textContent('#panel-recommender .ranker')).toMatch(/ranker x-interest/);

    // Archetypes: one row per archetype present, sizes from the snapshot.
    const arch = readArrow(path.join(SMALL, `agents/step-${String(STEPS).padStart(6, '0')}.arrow`)).num.archetype!;
    const counts = new Map<number, number>();
    for (const a of arch) counts.set(a, (counts.get(a) ?? 0) + 1);
    expect(await page.$$('#panel-archetypes tbody tr')).toHaveLength(counts.size);
    const [topId, topCount] = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]!;
    expect(await page.getAttribute('#panel-archetypes tbody tr:first-child', 'data-archetype')).toBe(String(topId));
    expect(await page.textContent('#panel-archetypes tbody tr:first-child td.members')).toBe(topCount.toLocaleString('en-US'));

    // Network: a sample of at most 2,000 agents, drawn in many colours.
    const nodes = Number(await page.getAttribute('#panel-network canvas', 'data-nodes'));
    const edges = Number(await page.getAttribute('#panel-network canvas', 'data-edges'));
    expect(nodes).toBeGreaterThan(500);
    expect(nodes).toBeLessThanOrEqual(2000);
    expect(edges).toBeGreaterThan(nodes / 2);
    const colours = await page.$eval('#panel-network canvas', (c) => {
      const cv = c as HTMLCanvasElement;
      const d = cv.getContext('2d')!.getImageData(0, 0, cv.width, cv.height).data;
      const seen = new Set<number>();
      for (let i = 0; i < d.length; i += 4 * 7) seen.add((d[i]! << 16) | (d[i + 1]! << 8) | d[i + 2]!);
      return seen.size;
    });
    expect(colours).toBeGreaterThan(50);
    // Hovering a node shows its details.
    const box = (await page.$('#panel-network canvas'))!;
    const bb = (await box.boundingBox())!;
    let agent: string | null = null;
    for (let r = 0; r < 200 && !agent; r += 3) {
      const a = r * 0.7;
      await page.mouse.move(bb.x + bb.width / 2 + r * Math.cos(a), bb.y + bb.height / 2 + r * Math.sin(a));
      agent = await page.$eval('#panel-network .tooltip', (t) => ((t as HTMLElement).hidden ? null : (t as HTMLElement).dataset.agent ?? null));
    }
    expect(agent).not.toBeNull();
    expect(await page.textContent('#panel-network .tooltip')).toMatch(new RegExp(`^agent ${agent}\\nopinion -?\\d\\.\\d{3}\\narchetype \\d+`));
    expect(browser.errors).toEqual([]);
  });

  it('the scrubber (keyboard) moves the opinion panel, the network colours and the legends', async () => {
    const { page } = browser;
    const met = metrics();
    const before = await attrs(page, '.histogram rect.bar', 'data-count');
    const meanBefore = await page.getAttribute('#panel-network canvas', 'data-mean-opinion');
    await page.focus('#step');
    await page.keyboard.press('Home');
    await page.waitForFunction(() => document.querySelector<HTMLElement>('.histogram')!.dataset.step === '0' && document.querySelector<HTMLElement>('#panel-network canvas')!.dataset.step === '0');
    expect(await page.textContent('#step-label')).toBe(`after step 0 of ${STEPS} · 00:00`);
    const after = await attrs(page, '.histogram rect.bar', 'data-count');
    expect(after).not.toEqual(before);
    const op0 = readArrow(path.join(SMALL, 'agents/step-000000.arrow')).num.opinion!;
    expect(after.map(Number)).toEqual(Array.from(histogram(op0, OPINION_BINS, ...OPINION_RANGE)));
    expect(await page.getAttribute('#panel-network canvas', 'data-mean-opinion')).not.toBe(meanBefore);
    // Five steps on: the histogram shows the latest snapshot at or before step 5 (step 4), the legends step 5.
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => document.querySelector<HTMLElement>('.histogram')!.dataset.step === '4');
    expect(await page.textContent('.hist-note')).toMatch(/snapshot after step 4 \(the latest at or before step 5\)/);
    expect(await legendValue(page, 'active', 'active_users')).toBe(formatValue(met.num.active_users![4]!));
    const cas = readArrow(path.join(SMALL, 'cascades.arrow'));
    expect(await page.$$('[data-chart="cascade-ccdf"] circle.point')).toHaveLength(ccdf(latestByRoot(cas.num as never, cas.num.size!, 4)).x.length);
    await page.keyboard.press('End');
    await page.waitForFunction((s) => document.querySelector<HTMLElement>('.histogram')!.dataset.step === String(s) && document.querySelector<HTMLElement>('#panel-network canvas')!.dataset.step === String(s), STEPS);
  });

  it('a brush on active users sets the step range of the time panels; "all steps" resets it', async () => {
    const { page } = browser;
    const svg = (await page.$('[data-chart="active"] svg'))!;
    const bb = (await svg.boundingBox())!;
    const vb = await svg.evaluate((s) => (s as SVGSVGElement).viewBox.baseVal.width);
    const k = bb.width / vb;
    const left = 52;
    const iw = vb - 52 - 12;
    const px = (step: number) => bb.x + (left + (step / STEPS) * iw) * k;
    const y = bb.y + 40 * k;
    await page.mouse.move(px(3), y);
    await page.mouse.down();
    await page.mouse.move(px(6), y, { steps: 4 });
    await page.mouse.move(px(9), y, { steps: 4 });
    await page.mouse.up();
    await page.waitForFunction(() => document.querySelector<HTMLInputElement>('#range-from')!.value !== '0');
    expect(await page.inputValue('#range-from')).toBe('3');
    expect(await page.inputValue('#range-to')).toBe('9');
    const ticks = (await texts(page, '[data-chart="actions"] .axis.x .tick text')).map(Number);
    expect(Math.min(...ticks)).toBeGreaterThanOrEqual(3);
    expect(Math.max(...ticks)).toBeLessThanOrEqual(9);
    await page.click('#range-all');
    expect(await page.inputValue('#range-from')).toBe('0');
    const all = (await texts(page, '[data-chart="actions"] .axis.x .tick text')).map(Number);
    expect(Math.max(...all)).toBeGreaterThan(9);
  });

  it('switches between light and dark themes', async () => {
    const { page } = browser;
    const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.evaluate(() => localStorage.setItem('socsim-theme', 'auto'));
    await page.reload();
    await page.waitForSelector('html[data-ready=true]');
    const light = await bg();
    await page.click('#theme'); // auto -> light
    expect(await bg()).toBe(light);
    await page.click('#theme'); // light -> dark
    expect(await page.getAttribute('html', 'data-theme-resolved')).toBe('dark');
    const dark = await bg();
    expect(dark).not.toBe(light);
    const fg = await page.evaluate(() => getComputedStyle(document.querySelector('h1')!).color);
    expect(fg).not.toBe(dark);
    await page.click('#theme'); // back to auto
  });
});

describe('dashboard on a calibration\'s best run (target.arrow beside the metrics)', () => {
  let server: DashboardServer;
  const dir = path.join(tmp, 'best');
  const target = { step: Int32Array.from([3, 6, 9, 12]), active_users: Float64Array.from([100, 250, 175, 300]) };
  beforeAll(async () => {
    // What socsim calibrate leaves in DIR/best: a run, target.arrow, and the manifest listing it.
    fs.cpSync(SMALL, dir, { recursive: true });
    writeArrowFile(path.join(dir, 'target.arrow'), [{ name: 'step', type: 'i32', values: target.step }, { name: 'active_users', type: 'f64', values: target.active_users }], 4);
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    m.files.other = [...(m.files.other ?? []), 'target.arrow'];
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(m));
    server = await startServer({ runDir: dir, appDir, port: 0 });
  });
  afterAll(() => server?.close());

  it('draws each matched metric with its target, which a plain run does not show', async () => {
    const { page } = browser;
    browser.errors.length = 0;
    await open(page, server.url);
    expect(await page.isVisible('[data-chart="fit"]')).toBe(true);
    expect(await attrs(page, '[data-chart="fit"] path.line', 'data-name')).toEqual(['active_users', 'target active_users']);
    expect(await attrs(page, '[data-chart="fit"] path.line', 'data-points')).toEqual([String(STEPS), '4']);
    expect(await page.$$('[data-chart="fit"] circle.point')).toHaveLength(4);
    expect(await legendValue(page, 'fit', 'target active_users')).toBe(formatValue(300));
    expect(browser.errors).toEqual([]);
  });
});

describe('dashboard with an LLM provider', () => {
  it('shows per-archetype parameters, the last reason and example post, and LLM calls', async () => {
    const server = await startServer({ runDir: LLM, appDir, port: 0 });
    try {
      const { page } = browser;
      await page.goto('about:blank');
      browser.errors.length = 0;
      await open(page, server.url);
      const a = readArrow(path.join(LLM, 'archetypes.arrow'));
      const met = readArrow(path.join(LLM, 'metrics.arrow'));
      // The page shows step 7: each archetype's latest decision (made at step 6).
      const latest = new Map<number, number>();
      for (let i = 0; i < a.rows; i++) latest.set(a.num.archetype![i]!, i);
      expect(Number(await page.getAttribute('#panel-archetypes', 'data-decided'))).toBe(latest.size);
      for (const [arch, i] of [...latest].slice(0, 5)) {
        const row = `#panel-archetypes tr[data-archetype="${arch}"]`;
        expect(await page.textContent(`${row} td.reason`)).toBe(a.str.reason![i]);
        expect(await page.textContent(`${row} td.example`)).toBe(a.str.example_post![i]);
        expect(await page.textContent(`${row} td:nth-child(4)`)).toBe(String(a.num.step![i]));
        expect((await texts(page, `${row} td.param`))[1]).toBe(a.num.p_like![i]!.toFixed(3));
      }
      expect(await attrs(page, '[data-chart="llm"] path.line', 'data-name')).toEqual(['llm_calls', 'llm_failures', 'llm_cache_hits']);
      expect(await page.isVisible('[data-chart="notes"]')).toBe(false);
      // Calls happen in steps 0, 3 and 6 as archetypes.arrow counts them (from 0); the last is the
      // seventh step, whose count is metrics row 6 (step 7), the legend value.
      expect(await legendValue(page, 'llm', 'llm_calls')).toBe(formatValue(met.num.llm_calls![6]!));
      expect(met.num.llm_calls![6]).toBeGreaterThan(0);
      expect(await page.textContent('[data-field="llm"]')).toMatch(/^openai/);
      expect(browser.errors).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('dashboard on a live run (socsim run --serve)', () => {
  // Generous limits: the run's 30 steps take 10-20 s on a quiet 2-core machine and several times
  // that when the rest of the suite runs beside it; the page's state is checked once the run ends.
  it('advances as steps finish, then shows the completed run', async () => {
    const steps = 30;
    const out = path.join(tmp, 'live');
    const child: ChildProcess = spawn(process.execPath, [BIN, 'run', 'social-feed', '--agents', '20000', '--steps', String(steps), '--snapshot-every', '10', '--serve', '0', '--quiet', '--out', out], {
      cwd: ROOT,
      env: { ...process.env, SOCSIM_DASHBOARD_DIR: appDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((r) =>
      child.on('close', (code) => {
        children.delete(child);
        r(code);
      }),
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no dashboard URL; stderr: ${stderr}`)), 30_000);
        child.stdout!.setEncoding('utf8').on('data', (d: string) => {
          stdout += d;
          const m = /dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(stdout);
          if (m) {
            clearTimeout(t);
            resolve(m[1]!);
          }
        });
      });
      const { page } = browser;
      // Leave the previous test's page first: its event stream to a server that has since closed
      // would log a refused reconnection into this test's errors.
      await page.goto('about:blank');
      browser.errors.length = 0;
      await page.goto(url);
      // The run's last step is done once it says it keeps serving; then the page must catch up.
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`the run did not finish; stderr: ${stderr}`)), 240_000);
        const check = () => {
          if (!/still serving the dashboard/.test(stdout)) return;
          clearTimeout(t);
          resolve();
        };
        child.stdout!.on('data', check);
        check();
      });
      // Generous: under a loaded suite on 2 cores the page took over 30 s to catch up once
      // (2026-11-26, a fresh clone's full `npm test`; 10 s when the file runs alone).
      await page
        .waitForFunction((n) => document.querySelector<HTMLElement>('[data-field="step"]')?.dataset.value === String(n) && document.querySelector('[data-field="status"]')?.textContent === 'completed', steps, { timeout: 120_000 })
        .catch(async (e: Error) => {
          // Where the page stood (this has failed now and then under a loaded suite; not reproduced alone).
          const seen = await page.evaluate(() => ({
            step: document.querySelector('[data-field="step"]')?.textContent,
            status: document.querySelector('[data-field="status"]')?.textContent,
            live: document.querySelector<HTMLElement>('#live')?.dataset.state,
            probe: (window as unknown as { __socsim: unknown }).__socsim,
          }));
          throw new Error(`${e.message}; the page: ${JSON.stringify(seen)}; browser errors: ${JSON.stringify(browser.errors)}`);
        });
      const renders = await page.evaluate(() => (window as unknown as { __socsim: { renders: number[] } }).__socsim.renders);
      const distinct = [...new Set(renders)];
      // The page saw the run in several intermediate states, in order, before the end.
      expect(distinct.filter((s) => s > 0 && s < steps).length).toBeGreaterThanOrEqual(3);
      expect(distinct).toEqual([...distinct].sort((x, y) => x - y));
      expect(distinct.at(-1)).toBe(steps);
      expect(await attrs(page, '[data-chart="active"] path.line', 'data-points')).toEqual([String(steps)]);
      await page.waitForFunction(() => document.querySelectorAll('.heatmap g.column').length === 4);
      expect(await page.textContent('#step-label')).toMatch(new RegExp(`^after step ${steps} of ${steps}`));
      expect(stdout).toMatch(/still serving the dashboard/);
      // 503s during set-up are expected console noise; nothing else.
      expect(browser.errors.filter((e) => !/503/.test(e))).toEqual([]);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});

describe('dashboard whose refresh fails', () => {
  it('tries again with backoff, and catches up with no further event', async () => {
    // A copy of the small run, its manifest rewound to "running" one step short of the end.
    const dir = path.join(tmp, 'retry');
    fs.cpSync(SMALL, dir, { recursive: true });
    const file = path.join(dir, 'manifest.json');
    const done = fs.readFileSync(file, 'utf8');
    const m = JSON.parse(done);
    fs.writeFileSync(file, JSON.stringify({ ...m, status: 'running', steps_completed: m.steps_completed - 1 }));
    const server = await startServer({ runDir: dir, appDir, port: 0, watchMs: 100 });
    const { page } = browser;
    try {
      await page.goto('about:blank');
      browser.errors.length = 0;
      await open(page, server.url);
      expect(await page.textContent('[data-field="status"]')).toMatch(/^running/); // 'running · live' once the event stream is connected
      // The run finishes, and the page's next three manifest requests fail: the step and status
      // events the server sends for that change are the last ones it will send.
      let failed = 0;
      await page.route('**/manifest.json', (route) => (failed < 3 ? (failed++, route.abort()) : route.continue()));
      fs.writeFileSync(file, done);
      await page.waitForFunction(() => document.querySelector('[data-field="status"]')?.textContent === 'completed', undefined, { timeout: 120_000 });
      expect(failed).toBe(3);
      const errors = await page.evaluate(() => (window as unknown as { __socsim: { errors: string[] } }).__socsim.errors);
      expect(errors.length).toBeGreaterThanOrEqual(3);
      expect(await page.textContent('#step-label')).toMatch(new RegExp(`^after step ${m.steps_completed} of ${m.steps_completed}`));
    } finally {
      await page.unrouteAll();
      await server.close();
    }
  });
});
