/**
 * `socsim experiment` end to end on the sir-beta example at 2,000 agents, 2 seeds and 6 hours
 * (6 runs of about a second): --jobs 1 and --jobs 2 give the same bytes, a re-run skips what is
 * done, shards merge to the same tables, and bad input is one line with exit code 2.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tableFromIPC } from '@uwdata/flechette';
import { BIN, ROOT, socsim, tempDir } from '../runner/cliHelpers.ts';

/** Runs `socsim ARGS` without waiting (several at once); resolves to the exit code and stderr. */
function socsimAsync(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

const tmp = tempDir('socsim-exp-');
const FILE = 'experiments/sir-beta.ts';
const SMALL = ['--seeds', '2', '--hours', '6', '--quiet'];
const TABLES = ['summary.arrow', 'effects.arrow', 'series.arrow'];

function arrowFiles(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.arrow')).sort();
}

function expectSameFiles(a: string, b: string, files: string[]) {
  for (const f of files) expect(fs.readFileSync(path.join(a, f)).equals(fs.readFileSync(path.join(b, f))), f).toBe(true);
}

/** stderr of a refused command: exactly one line, naming `what`. */
function expectOneLine(r: { code: number | null; stderr: string }, what: RegExp) {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(what);
}

describe('socsim experiment', () => {
  const one = path.join(tmp, 'jobs1');
  const two = path.join(tmp, 'jobs2');

  // Two experiments of six child runs each, one after the other: each child may take the
  // helper's 120 s on a loaded machine, so the test gets both (the default 60 s failed under load).
  it('--jobs 1 and --jobs 2 write byte-identical tables and run files, as the contract lays them out', () => {
    const a = socsim(['experiment', FILE, '--out', one, '--jobs', '1', ...SMALL]);
    const b = socsim(['experiment', FILE, '--out', two, '--jobs', '2', ...SMALL]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(a.stdout).toMatch(/6 runs: 6 ran, 0 already complete, 0 failed/);
    expect(a.stdout).toMatch(/final_recovered/);
    expect(a.stdout).toMatch(/socsim serve/);
    const files = arrowFiles(one);
    expect(files).toEqual(expect.arrayContaining([...TABLES, 'runs/base-s1/metrics.arrow', 'runs/high-s2/agents/step-000006.arrow']));
    expect(arrowFiles(two)).toEqual(files);
    expectSameFiles(one, two, files);

    const plan = JSON.parse(fs.readFileSync(path.join(one, 'experiment.json'), 'utf8'));
    expect(plan.format).toBe('socsim-experiment/1');
    expect(plan.arms).toEqual(['base', 'low', 'high']);
    expect(plan.seeds).toEqual([1, 2]);
    expect(plan.runs[0]).toEqual({ id: 'base-s1', arm: 'base', grid: {}, seed: 1, dir: 'runs/base-s1' });
    expect(JSON.parse(fs.readFileSync(path.join(one, 'plans/low-s2.json'), 'utf8'))).toEqual({ gamma: 0.2, seedCount: 20, beta: 0.03 });
    const m = JSON.parse(fs.readFileSync(path.join(one, 'runs/low-s2/manifest.json'), 'utf8'));
    expect([m.seed, m.agents, m.steps_requested, m.parameters.beta]).toEqual([2, 2000, 6, 0.03]);

    const summary = tableFromIPC(fs.readFileSync(path.join(one, 'summary.arrow')));
    expect(summary.schema.fields.map((f) => f.name)).toEqual(['arm', 'seed', 'group', ...plan.outcomes]);
    // Per run: the ungrouped row, then the five leanings in their declared order.
    expect(summary.numRows).toBe(6 * 6);
    const rows = summary.toArray();
    expect(rows.slice(0, 6).map((r) => r.group)).toEqual(['', 'left', 'center-left', 'center', 'center-right', 'right']);
    expect(rows[0].arm).toBe('base');
    expect(Number.isNaN(rows[0].ever_infected)).toBe(true);
    expect(Number.isNaN(rows[1].final_recovered)).toBe(true);

    // Effects agree with the summary: mean across seeds, and the paired difference per seed.
    const effects = tableFromIPC(fs.readFileSync(path.join(one, 'effects.arrow'))).toArray();
    const val = (arm: string, seed: number) => rows.find((r) => r.arm === arm && r.seed === seed && r.group === '')!.final_recovered as number;
    const hi = effects.find((e) => e.arm === 'high' && e.outcome === 'final_recovered')!;
    expect(hi.n).toBe(2);
    expect(hi.mean).toBeCloseTo((val('high', 1) + val('high', 2)) / 2, 9);
    expect(hi.diff).toBeCloseTo((val('high', 1) - val('base', 1) + val('high', 2) - val('base', 2)) / 2, 9);
    expect(hi.diff).toBeGreaterThan(0);
    const ref = effects.find((e) => e.arm === 'base' && e.outcome === 'final_recovered')!;
    expect(Number.isNaN(ref.diff) && Number.isNaN(ref.unpaired_ci_low)).toBe(true);

    const series = tableFromIPC(fs.readFileSync(path.join(one, 'series.arrow')));
    expect(series.schema.fields.map((f) => f.name)).toEqual(['arm', 'metric', 'step', 'n', 'mean', 'ci_low', 'ci_high']);
    const s = series.toArray().filter((r) => r.arm === 'low' && r.metric === 'recovered');
    expect(s.map((r) => r.step)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('a re-run skips completed runs (files untouched) and finishes a run whose directory was deleted', () => {
    const metrics = path.join(two, 'runs/base-s2/metrics.arrow');
    const before = fs.statSync(metrics).mtimeMs;
    const tables = TABLES.map((t) => fs.readFileSync(path.join(two, t)));
    const again = socsim(['experiment', FILE, '--out', two, '--jobs', '2', ...SMALL]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/6 runs: 0 ran, 6 already complete/);
    expect(fs.statSync(metrics).mtimeMs).toBe(before);
    fs.rmSync(path.join(two, 'runs/low-s1'), { recursive: true });
    const fill = socsim(['experiment', FILE, '--out', two, '--jobs', '2', ...SMALL]);
    expect(fill.code, fill.stderr).toBe(0);
    expect(fill.stdout).toMatch(/6 runs: 1 ran, 5 already complete/);
    expect(fs.statSync(metrics).mtimeMs).toBe(before);
    TABLES.forEach((t, i) => expect(fs.readFileSync(path.join(two, t)).equals(tables[i]), t).toBe(true));
  });

  it('--arms runs only the arms named (in the experiment\'s order): their runs and effects are those of the full experiment', () => {
    const dir = path.join(tmp, 'arms');
    const r = socsim(['experiment', FILE, '--out', dir, '--arms', 'high,base', '--jobs', '2', ...SMALL]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/4 runs: 4 ran/);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'experiment.json'), 'utf8')).arms).toEqual(['base', 'high']);
    expect(fs.readdirSync(path.join(dir, 'runs')).sort()).toEqual(['base-s1', 'base-s2', 'high-s1', 'high-s2']);
    expectSameFiles(dir, one, arrowFiles(path.join(dir, 'runs')).map((f) => path.join('runs', f)));
    const effects = (d: string) => tableFromIPC(fs.readFileSync(path.join(d, 'effects.arrow'))).toArray().map((e) => ({ ...e }));
    expect(effects(dir)).toEqual(effects(one).filter((e) => e.arm !== 'low'));
    expectOneLine(socsim(['experiment', FILE, '--out', path.join(tmp, 'arms-bad'), '--arms', 'low,high', ...SMALL]), /--arms must include the reference arm "base"/);
    expectOneLine(socsim(['experiment', FILE, '--out', path.join(tmp, 'arms-bad'), '--arms', 'base,hgih', ...SMALL]), /no arm "hgih"; its arms are base, low, high/);
    expectOneLine(socsim(['experiment', FILE, '--out', path.join(tmp, 'arms-bad'), '--arms', 'base,', ...SMALL]), /--arms expects arm names separated by commas/);
  });

  it('refuses a directory that holds another plan, in one line', () => {
    expectOneLine(socsim(['experiment', FILE, '--out', two, '--seeds', '3', '--hours', '6', '--quiet']), /another plan.*--force/);
  });

  it('shards 0/2 and 1/2 in separate directories merge into the same tables; an incomplete set exits 2', () => {
    const d0 = path.join(tmp, 'shard0');
    const d1 = path.join(tmp, 'shard1');
    const s0 = socsim(['experiment', FILE, '--out', d0, '--shard', '0/2', ...SMALL]);
    expect(s0.code, s0.stderr).toBe(0);
    expect(s0.stdout).toMatch(/3 runs \(shard 0\/2\)/);
    expect(s0.stdout).toMatch(/experiment merge/);
    expect(fs.existsSync(path.join(d0, 'summary.arrow'))).toBe(false);
    const early = socsim(['experiment', 'merge', d0]);
    expectOneLine(early, /3 of 6 planned runs.*base-s2.*--shard 1\/2/);
    const s1 = socsim(['experiment', FILE, '--out', d1, '--shard', '1/2', ...SMALL]);
    expect(s1.code, s1.stderr).toBe(0);
    const out = path.join(tmp, 'merged');
    const merged = socsim(['experiment', 'merge', d0, d1, '--out', out]);
    expect(merged.code, merged.stderr).toBe(0);
    expectSameFiles(one, out, TABLES);
    expect(fs.existsSync(path.join(out, 'runs'))).toBe(false);
  });

  it('shards started together in one shared directory (auto/N from JOB_COMPLETION_INDEX), then merge, give the same tables', async () => {
    const shared = path.join(tmp, 'shared');
    const args = ['experiment', FILE, '--out', shared, '--shard', 'auto/3', ...SMALL];
    const shards = await Promise.all([0, 1, 2].map((i) => socsimAsync(args, { JOB_COMPLETION_INDEX: String(i) })));
    for (const s of shards) expect(s.code, s.stderr).toBe(0);
    expect(fs.readdirSync(shared).filter((f) => f.startsWith('shard-')).sort()).toEqual(['shard-0-of-3.json', 'shard-1-of-3.json', 'shard-2-of-3.json']);
    const merged = socsim(['experiment', 'merge', shared]);
    expect(merged.code, merged.stderr).toBe(0);
    expectSameFiles(one, shared, [...TABLES, ...arrowFiles(path.join(shared, 'runs')).map((f) => path.join('runs', f))]);
  });

  it('--shard auto/N without an index in the environment is one line', () => {
    expectOneLine(socsim(['experiment', FILE, '--out', path.join(tmp, 'auto'), '--shard', 'auto/2', ...SMALL]), /JOB_COMPLETION_INDEX.*SLURM_ARRAY_TASK_ID/);
  });
});

describe('bad experiment files and parameters', () => {
  const api = path.join(ROOT, 'dist/index.js'); // the public entry, compiled, as a study imports it
  const write = (name: string, body: string) => {
    const f = path.join(tmp, name.replace(/\.ts$/, '.mts'));
    fs.writeFileSync(f, `import { defineExperiment, metric } from ${JSON.stringify(api)};\nexport default defineExperiment({ name: 'bad', description: 'x', scenario: 'sir', ${body} });\n`);
    return f;
  };
  const arms = `arms: { a: { beta: 0.05 }, b: { beta: 0.1 } }`;

  it('an unknown field names the closest one', () => {
    const f = write('unknown-key.ts', `${arms}, seed: 3, outcomes: { r: metric('recovered').final() }`);
    expectOneLine(socsim(['experiment', f, '--out', path.join(tmp, 'bad1')]), /unknown field seed; did you mean seeds\?/);
  });

  it('an unknown reference arm names the arms', () => {
    const f = write('bad-ref.ts', `${arms}, reference: 'control', outcomes: { r: metric('recovered').final() }`);
    expectOneLine(socsim(['experiment', f, '--out', path.join(tmp, 'bad2')]), /reference control is not an arm; arms: a, b/);
  });

  it('an unknown parameter in an arm names the arm and the closest parameter', () => {
    const f = write('bad-param.ts', `arms: { a: { beta: 0.05 }, b: { betta: 0.1 } }, outcomes: { r: metric('recovered').final() }`);
    expectOneLine(socsim(['experiment', f, '--out', path.join(tmp, 'bad3')]), /arm b: .*unknown parameter betta; did you mean beta\?/);
  });

  it('an unknown metric stops after the first run, naming the closest metric', () => {
    const f = write('bad-metric.ts', `${arms}, seeds: 2, defaults: { agents: 500, steps: 2 }, outcomes: { r: metric('recoverd').final() }`);
    const r = socsim(['experiment', f, '--out', path.join(tmp, 'bad4'), '--quiet']);
    expectOneLine(r, /outcome r on run a-s1: metrics.arrow has no column recoverd; did you mean recovered\?/);
  });

  it('run --params FILE with an unknown key names the file and the key', () => {
    const f = path.join(tmp, 'params.json');
    fs.writeFileSync(f, JSON.stringify({ gama: 0.1 }));
    expectOneLine(socsim(['run', 'sir', '--params', f, '--agents', '200', '--steps', '1', '--out', path.join(tmp, 'p')]), new RegExp(`--params ${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*unknown parameter gama; did you mean gamma\\?`));
    expect(fs.existsSync(path.join(tmp, 'p'))).toBe(false);
  });

  it('describe prints an experiment plan and a scenario\'s parameters from its schema', () => {
    const e = socsim(['describe', FILE]);
    expect(e.code, e.stderr).toBe(0);
    expect(e.stdout).toMatch(/runs: +12 \(3 arms x 1 grid points x 4 seeds\)/);
    expect(e.stdout).toMatch(/base \(reference\)/);
    const s = socsim(['describe', 'sir']);
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).toMatch(/\n  beta +number \(>= 0, <= 1\) +0\.05/);
    expect(s.stdout).toMatch(/graph\(kind=barabasi-albert\)\.m +integer/);
  });
});

describe('grids and failing runs', () => {
  const api = path.join(ROOT, 'dist/index.js'); // the public entry, compiled, as a study imports it
  const file = path.join(tmp, 'grid.mts');
  fs.writeFileSync(
    file,
    `import { defineExperiment, metric } from ${JSON.stringify(api)};\n` +
      `export default defineExperiment({ name: 'grid', description: 'x', scenario: 'sir', seeds: 1,\n` +
      `  arms: { a: { beta: 0.05 }, b: { beta: 0.1 } }, grid: { gamma: [0.2, 0.3], seeds: ['random', 'hubs'] },\n` +
      `  defaults: { agents: 500, steps: 3 }, outcomes: { r: metric('recovered').final() } });\n`,
  );

  it('a grid multiplies the runs; grid keys become columns (f64 for numbers, utf8 otherwise) and run-id parts', () => {
    const dir = path.join(tmp, 'grid');
    const r = socsim(['experiment', file, '--out', dir, '--jobs', '2', '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(fs.readFileSync(path.join(dir, 'experiment.json'), 'utf8'));
    expect(plan.runs.map((x: { id: string }) => x.id)).toEqual([
      'a-gamma=0.2-seeds=random-s1', 'b-gamma=0.2-seeds=random-s1', 'a-gamma=0.2-seeds=hubs-s1', 'b-gamma=0.2-seeds=hubs-s1',
      'a-gamma=0.3-seeds=random-s1', 'b-gamma=0.3-seeds=random-s1', 'a-gamma=0.3-seeds=hubs-s1', 'b-gamma=0.3-seeds=hubs-s1',
    ]);
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'runs/b-gamma=0.3-seeds=hubs-s1/manifest.json'), 'utf8'));
    expect([m.parameters.beta, m.parameters.gamma, m.parameters.seeds]).toEqual([0.1, 0.3, 'hubs']);
    const summary = tableFromIPC(fs.readFileSync(path.join(dir, 'summary.arrow')));
    expect(summary.schema.fields.map((f) => f.name)).toEqual(['arm', 'seed', 'gamma', 'seeds', 'group', 'r']);
    const rows = summary.toArray();
    expect(rows.map((x) => [x.arm, x.gamma, x.seeds])[6]).toEqual(['a', 0.3, 'hubs']);
    expect(typeof rows[0].gamma).toBe('number');
    const effects = tableFromIPC(fs.readFileSync(path.join(dir, 'effects.arrow'))).toArray();
    expect(effects.map((e) => `${e.arm} ${e.gamma} ${e.seeds}`)).toEqual(['a 0.2 random', 'b 0.2 random', 'a 0.2 hubs', 'b 0.2 hubs', 'a 0.3 random', 'b 0.3 random', 'a 0.3 hubs', 'b 0.3 hubs']);
    // One seed: the difference is the single paired difference, with no interval.
    expect(effects[1].diff).toBe(rows[1].r - rows[0].r);
    expect(Number.isNaN(effects[1].diff_ci_low)).toBe(true);
  });

  it('a run that fails is reported with its stderr; the others finish; exit 1; a re-run completes it', () => {
    const dir = path.join(tmp, 'failing');
    fs.mkdirSync(path.join(dir, 'runs/b-gamma=0.2-seeds=hubs-s1'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'runs/b-gamma=0.2-seeds=hubs-s1/notes.txt'), 'not a run');
    const r = socsim(['experiment', file, '--out', dir, '--jobs', '2', '--quiet']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/8 runs: 7 ran, 0 already complete, 1 failed/);
    expect(r.stderr).toMatch(/b-gamma=0\.2-seeds=hubs-s1: exit 2:\n.*is not empty and is not a socsim run directory/);
    expect(fs.existsSync(path.join(dir, 'summary.arrow'))).toBe(false);
    fs.rmSync(path.join(dir, 'runs/b-gamma=0.2-seeds=hubs-s1/notes.txt'));
    const again = socsim(['experiment', file, '--out', dir, '--quiet']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/8 runs: 1 ran, 7 already complete, 0 failed/);
    expectSameFiles(path.join(tmp, 'grid'), dir, TABLES);
  });
});

describe('the sir-beta example', () => {
  it('at its own size (4 seeds, 20 hours) shows the expected signs with paired intervals that exclude zero', () => {
    const dir = path.join(tmp, 'sir-beta');
    const r = socsim(['experiment', FILE, '--out', dir, '--jobs', '2', '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const effects = tableFromIPC(fs.readFileSync(path.join(dir, 'effects.arrow'))).toArray();
    const get = (arm: string, outcome: string) => effects.find((e) => e.arm === arm && e.outcome === outcome && e.group === '')!;
    for (const outcome of ['final_recovered', 'attack_rate']) {
      expect(get('high', outcome).n).toBe(4);
      expect(get('high', outcome).diff_ci_low, outcome).toBeGreaterThan(0);
      expect(get('low', outcome).diff_ci_high, outcome).toBeLessThan(0);
    }
    // A faster epidemic reaches 100 recovered sooner.
    expect(get('high', 'hours_to_100_recovered').diff_ci_high).toBeLessThan(0);
  });
});

describe('reference group', () => {
  const api = path.join(ROOT, 'dist/index.js'); // the public entry, compiled, as a study imports it
  const file = path.join(tmp, 'groups.mts');
  // Per run, group a = seed and group b = seed^2, so b - a over seeds 1, 2, 3 is 0, 2, 6.
  fs.writeFileSync(
    file,
    `import { custom, defineExperiment } from ${JSON.stringify(api)};\n` +
      `export default defineExperiment({ name: 'groups', description: 'x', scenario: 'sir', seeds: 3, arms: { only: {} },\n` +
      `  referenceGroup: 'a', defaults: { agents: 300, steps: 1 },\n` +
      `  outcomes: { g: custom((run) => ({ a: run.manifest.seed, b: run.manifest.seed ** 2 })) } });\n`,
  );

  it('grouped diffs are against the reference group of the same arm, paired by seed (hand-computed)', () => {
    const dir = path.join(tmp, 'groups');
    const r = socsim(['experiment', file, '--out', dir, '--jobs', '2', '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const rows = tableFromIPC(fs.readFileSync(path.join(dir, 'effects.arrow'))).toArray();
    const [a, b] = [rows.find((x) => x.group === 'a')!, rows.find((x) => x.group === 'b')!];
    expect([a.versus, b.versus]).toEqual(['group a', 'group a']);
    expect(Number.isNaN(a.diff)).toBe(true);
    // mean 8/3; s = sqrt(((0-8/3)^2 + (2-8/3)^2 + (6-8/3)^2) / 2) = sqrt(28/3); half-width 4.302653 s / sqrt(3).
    const half = (4.302653 * Math.sqrt(28 / 3)) / Math.sqrt(3);
    expect(b.diff).toBeCloseTo(8 / 3, 9);
    expect(b.diff_ci_low).toBeCloseTo(8 / 3 - half, 4);
    expect(b.diff_ci_high).toBeCloseTo(8 / 3 + half, 4);
    expect(r.stdout).toMatch(/group a/);
  });
});
