/**
 * An experiment's runs under concurrency and damage (runner/experiment/experimentRun.ts): one experiment per
 * directory, child runs that stop when their experiment dies, and a completion record that a
 * re-run checks before it counts a run as done.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT, socsim, tempDir } from './cliHelpers.ts';

const tmp = tempDir('socsim-exprun-');
const FILE = 'experiments/sir-beta.ts';
// 6 runs; each long enough (steps of 20,000 agents) that the experiment can be caught mid-way.
const ARGS = ['--seeds', '2', '--agents', '20000', '--steps', '40', '--jobs', '2', '--quiet'];
const TABLES = ['summary.arrow', 'effects.arrow', 'series.arrow'];

/** Processes whose command line mentions `text` (Linux /proc). */
function processesWith(text: string): number[] {
  const out: number[] = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8');
      const state = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      if (cmd.includes(text) && !/\) Z/.test(state)) out.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const manifestOf = (dir: string) => {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { status: string; steps_completed: number };
  } catch {
    return undefined;
  }
};

describe('an experiment and its runs under concurrency and damage', () => {
  const reference = path.join(tmp, 'reference');
  const dir = path.join(tmp, 'contested');

  it('a second experiment on the same directory is refused; kill -9 of the first stops its runs; a re-run gives the uninterrupted tables', async () => {
    const ref = socsim(['experiment', FILE, '--out', reference, ...ARGS], ROOT, 600_000);
    expect(ref.code, ref.stderr).toBe(0);

    const first = spawn(process.execPath, [BIN, 'experiment', FILE, '--out', dir, ...ARGS], { cwd: ROOT, stdio: 'ignore' });
    // Wait until its child runs are writing (work, not time).
    const runs = path.join(dir, 'runs');
    const writing = () => (fs.existsSync(runs) ? fs.readdirSync(runs).some((r) => (manifestOf(path.join(runs, r))?.steps_completed ?? 0) >= 1) : false);
    while (!writing()) await new Promise((r) => setTimeout(r, 20));

    const second = spawnSync(process.execPath, [BIN, 'experiment', FILE, '--out', dir, ...ARGS], { cwd: ROOT, encoding: 'utf8', timeout: 600_000 });
    expect(second.status, second.stderr).toBe(2);
    expect(second.stderr).toMatch(new RegExp(`contested is being written by process ${first.pid} on this host \\(socsim experiment ${FILE}, since `));

    const children = processesWith(path.join(dir, 'runs'));
    expect(children.length).toBeGreaterThan(0);
    first.kill('SIGKILL');
    // Each child notices at once and stops at its next step boundary; give them a generous budget.
    const deadline = Date.now() + 120_000;
    while (processesWith(path.join(dir, 'runs')).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(processesWith(path.join(dir, 'runs'))).toEqual([]);

    const again = socsim(['experiment', FILE, '--out', dir, ...ARGS], ROOT, 600_000);
    expect(again.code, again.stderr).toBe(0);
    for (const t of TABLES) expect(fs.readFileSync(path.join(dir, t)).equals(fs.readFileSync(path.join(reference, t))), t).toBe(true);
  }, 900_000);

  it('a run marked completed whose files no longer match its completion record is run again, saying why', () => {
    const metrics = path.join(dir, 'runs', 'base-s1', 'metrics.arrow');
    const bytes = fs.statSync(metrics).size;
    fs.truncateSync(metrics, bytes - 100);
    const r = socsim(['experiment', FILE, '--out', dir, ...ARGS], ROOT, 600_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`run base-s1 is marked completed but metrics.arrow has ${bytes - 100} bytes, the run wrote ${bytes}; running it again`);
    expect(r.stdout).toMatch(/6 runs: 1 ran, 5 already complete, 0 failed/);
    expect(fs.statSync(metrics).size).toBe(bytes);
    for (const t of TABLES) expect(fs.readFileSync(path.join(dir, t)).equals(fs.readFileSync(path.join(reference, t))), t).toBe(true);
    // inspect reads an experiment directory too: its plan, its runs, its tables.
    const inspect = socsim(['inspect', dir]);
    expect(inspect.code, inspect.stderr).toBe(0);
    expect(inspect.stdout).toMatch(/^runs +6 of 6 complete$/m);
    expect(inspect.stdout).toMatch(/^ {2}effects\.arrow: \d+ rows; arm:/m);
  }, 600_000);
});
