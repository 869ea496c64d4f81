/**
 * Time to first full render of the dashboard on a run directory (not part of npm test):
 *
 *   node bin/socsim.mjs run social-feed --agents 1000000 --steps 6 --threads 2 --snapshot-every 0 --out /tmp/run1m
 *   npm run bench:viz -- /tmp/run1m [--runs 5]
 *
 * Each run opens the page in a fresh Chromium profile (no HTTP cache) against the real server and
 * reads the page's own probe: `firstFullRenderMs` is the time from navigation start until every
 * panel has drawn data (header, time series, all heatmap columns, the selected step's histogram,
 * cascades, archetypes, and the first frame of the network sample). It also times a scrubber move
 * to another snapshot (load one snapshot's columns + redraw). Prints medians with min and max.
 */
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { buildDashboard } from '../build.ts';
import { startServer } from '../../runner/serve/serve.ts';
import { launchBrowser } from './browser.ts';

const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 5;
const runDir = path.resolve(args[0] ?? '/tmp/run1m');
if (!fs.existsSync(path.join(runDir, 'manifest.json'))) {
  process.stderr.write(`no run at ${runDir}; make one with:\n  node bin/socsim.mjs run social-feed --agents 1000000 --steps 6 --threads 2 --snapshot-every 0 --out ${runDir}\n`);
  process.exit(2);
}
const manifest = JSON.parse(fs.readFileSync(path.join(runDir, 'manifest.json'), 'utf8'));
const appDir = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-bench-app-'));
const built = await buildDashboard(appDir);
const server = await startServer({ runDir, appDir, port: 0, watch: false });

interface Probe {
  firstFullRenderMs: number;
  marks: Record<string, number>;
  bytes: number;
  errors: string[];
}
const results: Array<{ first: number; scrub: number; marks: Record<string, number>; bytes: number }> = [];
let chromium = '';
try {
  for (let i = 0; i < runs; i++) {
    const browser = await launchBrowser();
    chromium = `${browser.chromium.version} (${browser.chromium.source}: ${browser.chromium.path})`;
    try {
      const { page } = browser;
      await page.goto(server.url);
      await page.waitForSelector('html[data-ready=true]', { timeout: 60_000 });
      const probe = await page.evaluate(() => (window as unknown as { __socsim: Probe }).__socsim);
      if (probe.errors.length) throw new Error(probe.errors.join('\n'));
      // Scrub to step 0 (another snapshot): time until its histogram and network colours are drawn.
      // (A string, not a function: a transform may wrap named inner functions in a helper the page lacks.)
      const scrub = (await page.evaluate(`new Promise((resolve) => {
        const t0 = performance.now();
        const input = document.querySelector('#step');
        input.value = '0';
        input.dispatchEvent(new Event('input'));
        const check = () => document.querySelector('#panel-network canvas').dataset.step === '0' ? resolve(performance.now() - t0) : requestAnimationFrame(check);
        check();
      })`)) as number;
      results.push({ first: probe.firstFullRenderMs, scrub: Math.round(scrub), marks: probe.marks, bytes: probe.bytes });
      process.stdout.write(`run ${i + 1}: first full render ${probe.firstFullRenderMs} ms, scrub ${Math.round(scrub)} ms, ${(probe.bytes / 1e6).toFixed(1)} MB of run files\n`);
    } finally {
      await browser.close();
    }
  }
} finally {
  await server.close();
  fs.rmSync(appDir, { recursive: true, force: true });
}

const stat = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor((s.length - 1) / 2)]!, min: s[0]!, max: s.at(-1)! };
};
const marks: Record<string, ReturnType<typeof stat>> = {};
for (const k of Object.keys(results[0]?.marks ?? {})) marks[k] = stat(results.map((r) => r.marks[k] ?? NaN));
const report = {
  machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memory_gib: Math.round(os.totalmem() / 2 ** 30), node: process.versions.node, chromium },
  run: { dir: runDir, agents: manifest.agents, edges: manifest.edges, steps: manifest.steps_completed, snapshots: manifest.files.agents.length },
  build_ms: Math.round(built.ms),
  runs,
  first_full_render_ms: stat(results.map((r) => r.first)),
  scrub_to_other_snapshot_ms: stat(results.map((r) => r.scrub)),
  run_file_bytes: stat(results.map((r) => r.bytes)),
  marks_ms: marks,
};
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
