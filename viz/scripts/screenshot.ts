/**
 * Writes viz/dashboard.png, the picture in the README: builds the dashboard (dist/dashboard), runs a small
 * social-feed scenario (or takes a run directory, or an experiment directory), serves it, and
 * photographs the whole page once the network layout has settled.
 *
 *   npm run screenshot [-- <run-dir>] [-- --theme dark] [-- --out file.png]
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildDashboard, VIZ_ROOT } from '../build.ts';
import { startServer } from '../../runner/serve/serve.ts';
import { launchBrowser } from './browser.ts';

const ROOT = path.resolve(VIZ_ROOT, '..');
const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const theme = (flag('--theme') ?? 'light') as 'light' | 'dark';
const out = path.resolve(flag('--out') ?? path.join(VIZ_ROOT, 'dashboard.png'));
let runDir = args[0] ? path.resolve(args[0]) : undefined;
let tmp: string | undefined;

const { ms } = await buildDashboard();
process.stdout.write(`built dist/dashboard in ${(ms / 1000).toFixed(2)} s\n`);
if (!runDir) {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-shot-'));
  runDir = path.join(tmp, 'run');
  const cmd = ['run', 'social-feed', '--agents', '20000', '--steps', '24', '--snapshot-every', '2', '--quiet', '--out', runDir];
  process.stdout.write(`socsim ${cmd.join(' ')}\n`);
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/socsim.mjs'), ...cmd], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const server = await startServer({ runDir, port: 0, watch: false });
const browser = await launchBrowser({ width: 1400, height: 1000, colorScheme: theme });
try {
  const { page } = browser;
  await page.goto(`${server.url}?theme=${theme}`);
  await page.waitForSelector('html[data-ready=true]', { timeout: 60_000 });
  const first = await page.evaluate(() => (window as unknown as { __socsim: { firstFullRenderMs: number } }).__socsim.firstFullRenderMs);
  // A run: wait for the network layout to settle (an experiment directory has no network panel).
  const experiment = await page.evaluate(() => document.body.dataset.view === 'experiment');
  if (!experiment) await page.waitForSelector('#panel-network canvas[data-settled=true]', { timeout: 60_000 }).catch(() => {});
  await page.mouse.move(0, 0);
  await page.screenshot({ path: out, fullPage: true });
  process.stdout.write(`first full render ${first} ms; wrote ${path.relative(process.cwd(), out)} (${Math.round(fs.statSync(out).size / 1024)} KiB)\n`);
  if (browser.errors.length) process.stdout.write(`page errors:\n${browser.errors.join('\n')}\n`);
} finally {
  await browser.close();
  await server.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}
