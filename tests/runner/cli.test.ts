import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tableFromIPC } from '@uwdata/flechette';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = path.join(ROOT, 'bin/socsim.mjs');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-cli-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function socsim(args: string[], opts: { cwd?: string } = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? ROOT, encoding: 'utf8', timeout: 600_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function arrowFiles(dir: string): string[] {
  const out: string[] = [];
  for (const f of fs.readdirSync(dir, { recursive: true }) as string[]) if (f.endsWith('.arrow')) out.push(f);
  return out.sort();
}

describe('socsim run', () => {
  it('writes byte-identical Arrow files with 1 and 2 threads, and a full manifest', () => {
    const common = ['run', 'opinion-cascade', '--agents', '3000', '--steps', '6', '--seed', '7', '--snapshot-every', '2', '--quiet'];
    const a = socsim([...common, '--threads', '1', '--out', path.join(tmp, 't1')]);
    const b = socsim([...common, '--threads', '2', '--out', path.join(tmp, 't2')]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const files = arrowFiles(path.join(tmp, 't1'));
    expect(files).toEqual(['agents/step-000000.arrow', 'agents/step-000002.arrow', 'agents/step-000004.arrow', 'agents/step-000006.arrow', 'graph.arrow', 'metrics.arrow']);
    expect(arrowFiles(path.join(tmp, 't2'))).toEqual(files);
    for (const f of files) {
      const x = fs.readFileSync(path.join(tmp, 't1', f));
      const y = fs.readFileSync(path.join(tmp, 't2', f));
      expect(x.equals(y), f).toBe(true);
    }
    const m = JSON.parse(fs.readFileSync(path.join(tmp, 't2/manifest.json'), 'utf8'));
    expect(m.status).toBe('completed');
    expect(m.threads).toBe(2);
    expect(m.seed).toBe(7);
    expect(m.backend).toBe('cpu');
    expect(m.scenario.name).toBe('opinion-cascade');
    expect(m.parameters.eps).toBe(0.3);
    expect(m.step_wall_ms).toHaveLength(6);
    expect(m.versions.node).toBe(process.versions.node);
    // A different seed changes the results.
    const c = socsim([...common.map((x) => (x === '7' ? '8' : x)), '--out', path.join(tmp, 't3')]);
    expect(c.code, c.stderr).toBe(0);
    expect(fs.readFileSync(path.join(tmp, 't3/metrics.arrow')).equals(fs.readFileSync(path.join(tmp, 't1/metrics.arrow')))).toBe(false);
  });

  it('files open in flechette (not apache-arrow) with the right types; categoricals are dictionaries', () => {
    const dir = path.join(tmp, 't1');
    const metrics = tableFromIPC(fs.readFileSync(path.join(dir, 'metrics.arrow')));
    // Six steps and, first, the initial state (step 0; opinion-cascade runs classic models).
    expect(metrics.numRows).toBe(7);
    const mt = Object.fromEntries(metrics.schema.fields.map((f) => [f.name, f.type]));
    expect(mt.step).toMatchObject({ typeId: 2, bitWidth: 32, signed: true });
    expect(mt.ic_fraction).toMatchObject({ typeId: 3, precision: 2 });
    expect(Array.from(metrics.getChild('step')!.toArray() as Int32Array)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const snap = tableFromIPC(fs.readFileSync(path.join(dir, 'agents/step-000006.arrow')));
    expect(snap.numRows).toBe(3000);
    const st = Object.fromEntries(snap.schema.fields.map((f) => [f.name, f.type]));
    for (const c of ['age_band', 'gender', 'region', 'leaning', 'chronotype', 'state']) expect(st[c].typeId, c).toBe(-1);
    expect(st.opinion).toMatchObject({ typeId: 3, precision: 1 });
    const leaning = snap.getChild('leaning')!.toArray() as string[];
    expect(new Set(leaning)).toEqual(new Set(['left', 'center-left', 'center', 'center-right', 'right']));
    const graph = tableFromIPC(fs.readFileSync(path.join(dir, 'graph.arrow')));
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect(graph.numRows).toBe(m.edges);
  });

  it('SIGINT keeps every completed step readable and marks the manifest interrupted', async () => {
    const out = path.join(tmp, 'int');
    const child = spawn(process.execPath, [BIN, 'run', 'opinion-cascade', '--agents', '20000', '--steps', '100000', '--snapshot-every', '0', '--out', out], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    let stdout = '';
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => (stdout += d));
    await new Promise<void>((resolve, reject) => {
      const t = setInterval(() => {
        if ((err.match(/^step \d+/gm) ?? []).length >= 3) {
          clearInterval(t);
          child.kill('SIGINT');
          resolve();
        }
      }, 20);
      child.on('exit', () => reject(new Error(`exited early: ${err}`)));
    });
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(code).toBe(130);
    const m = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
    expect(m.status).toBe('interrupted');
    expect(m.steps_completed).toBeGreaterThanOrEqual(3);
    const metrics = tableFromIPC(fs.readFileSync(path.join(out, 'metrics.arrow')));
    expect(metrics.numRows).toBe(m.steps_completed + 1);
    expect(m.step_wall_ms).toHaveLength(m.steps_completed);
    // It says how to go on.
    expect(stdout).toContain(`interrupted after ${m.steps_completed} steps; completed steps are in ${path.relative(ROOT, out).startsWith('..') ? out : path.relative(ROOT, out)}; continue from step ${m.checkpoint.step} with: socsim run --resume `);
  });

  it('--quiet prints the result and its files, without the reading guide', () => {
    const r = socsim(['run', 'voter', '--agents', '300', '--steps', '2', '--quiet', '--out', path.join(tmp, 'quiet')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').map((l) => l.split(':')[0])).toEqual(['done', 'files']);
    expect(r.stderr).toBe('');
    // Without it, the guide: how pandas, polars, DuckDB, R and the dashboard open the run.
    const loud = socsim(['run', 'voter', '--agents', '300', '--steps', '2', '--out', path.join(tmp, 'loud')]);
    expect(loud.code, loud.stderr).toBe(0);
    expect(loud.stdout).toMatch(/pandas/);
    expect(loud.stdout).toMatch(/dashboard: npx socsim serve .*loud/);
  });
});

describe('bad input exits 2 with one clear line', () => {
  const edgeFile = (name: string, text: string) => {
    const p = path.join(tmp, name);
    fs.writeFileSync(p, text);
    return p;
  };
  const cases: Array<[string, string[], RegExp]> = [
    ['unknown scenario', ['run', 'no-such-scenario'], /unknown scenario "no-such-scenario".*opinion-cascade/],
    ['non-numeric agents', ['run', 'voter', '--agents', 'lots'], /--agents must be a whole number.*"lots"/],
    ['zero threads', ['run', 'voter', '--threads', '0'], /--threads must be a whole number from 1 to 256/],
    ['negative seed', ['run', 'voter', '--seed', '-3'], /--seed must be a whole number >= 0/],
    ['unknown parameter', ['run', 'voter', '--set', 'colour=red'], /scenario voter: unknown parameter colour; known: graph, states/],
    ['parameter out of range', ['run', 'independent-cascade', '--set', 'p=1.5'], /parameter p: .*1.*--set p=VALUE/],
    ['unknown option', ['run', 'voter', '--agnets', '5'], /^socsim: unknown option '--agnets'.*; see socsim --help\n$/],
    ['unknown command', ['runn', 'voter'], /^socsim: unknown command 'runn'.*; see socsim --help\n$/],
    ['too large for memory', ['run', 'voter', '--agents', '2000000000'], /population too large for this machine.*GiB.*fewer --agents/],
  ];
  for (const [what, args, re] of cases) {
    it(what, () => {
      const r = socsim([...args, '--out', path.join(tmp, 'bad')]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(re);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    });
  }

  it('a malformed edge-list line, with its line number', () => {
    const f = edgeFile('bad.txt', '# comment\n0 1\n1 2\n7\n');
    const r = socsim(['run', 'voter', '--graph', f, '--out', path.join(tmp, 'bad')]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/bad\.txt.*line 4/);
    expect(r.stderr.trim().split('\n').length).toBeLessThanOrEqual(2);
  });

  it('an id out of range for --agents', () => {
    const f = edgeFile('range.txt', '0 1\n1 2\n2 9\n');
    const r = socsim(['run', 'voter', '--graph', f, '--agents', '5', '--out', path.join(tmp, 'bad')]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/line 3.*9.*out of range/);
  });

  it('a good edge list runs, with node ids remapped', () => {
    const f = edgeFile('good.tsv', '# SNAP-style\nfrom\tto\n10\t20\n20\t30\n30\t10\n40\t10\n');
    const out = path.join(tmp, 'good');
    const r = socsim(['run', 'voter', '--graph', f, '--steps', '2', '--quiet', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const m = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
    expect(m.agents).toBe(4);
    expect(m.edges).toBe(4);
  });

  it('--help exits 0 and lists the commands', () => {
    const r = socsim(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/run/);
    expect(r.stdout).toMatch(/inspect/);
    expect(r.stdout).toMatch(/bench/);
    const run = socsim(['run', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/--threads/);
  });

  it('inspect summarises a run and rejects a folder that is not one', () => {
    const r = socsim(['inspect', path.join(tmp, 't1')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/status\s+completed/);
    expect(r.stdout).toMatch(/metrics.arrow: 7 rows/);
    const bad = socsim(['inspect', tmp]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/not a run or experiment directory/);
  });

  it('inspect lists every file a social run wrote, each with its rows', () => {
    const out = path.join(tmp, 'social');
    expect(socsim(['run', 'social-feed', '--agents', '3000', '--steps', '2', '--quiet', '--out', out]).code).toBe(0);
    const m = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
    const r = socsim(['inspect', out]);
    expect(r.code, r.stderr).toBe(0);
    const listed = [...r.stdout.matchAll(/^ {2}(\S+): /gm)].map((x) => x[1]);
    expect(listed.sort()).toEqual(Object.keys(m.file_bytes).sort());
    expect(listed).toEqual(expect.arrayContaining(['posts.arrow', 'cascades.arrow', 'conversations.arrow', 'interventions.arrow']));
    expect(r.stdout).toMatch(/^ {2}posts\.arrow: \d+ rows; id:Int32/m);
  });
});

describe('input files quoted in messages', () => {
  it('a --params file that is not JSON: its control bytes are escaped, never sent raw to the terminal', () => {
    const f = path.join(tmp, 'esc.json');
    fs.writeFileSync(f, '{"beta": \x1b[31m0.1}');
    const r = socsim(['run', 'sir', '--params', f, '--agents', '100', '--steps', '1', '--out', path.join(tmp, 'esc')]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^socsim: --params .*esc\.json: not valid JSON \(/);
    expect(r.stderr).not.toContain('\x1b');
  });
});
