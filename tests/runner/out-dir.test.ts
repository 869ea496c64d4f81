/**
 * `socsim run --out DIR` never deletes what it did not write: a non-empty directory that is not a
 * socsim run is refused, an existing run is replaced only with --force, and then only the files a
 * run writes are removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareRunDirectory } from '../../runner/run/runDirectory.ts';
import { socsim, tempDir } from './cliHelpers.ts';

const tmp = tempDir('socsim-outdir-');

/** A small, fast run: 300 agents, `steps` steps, a snapshot after every step. */
const tiny = (steps: number) => ['run', 'voter', '--agents', '300', '--steps', String(steps), '--snapshot-every', '1', '--quiet'];
const manifest = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
const listing = (dir: string) => (fs.readdirSync(dir, { recursive: true }) as string[]).map((f) => f.split(path.sep).join('/')).sort();

function expectRefused(r: ReturnType<typeof socsim>, re: RegExp) {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(re);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
}

describe('socsim run --out', () => {
  it('refuses a non-empty directory that is not a run, and leaves its files alone', () => {
    const dir = path.join(tmp, 'notes');
    fs.mkdirSync(path.join(dir, 'agents'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'thesis.txt'), 'three years of work');
    fs.writeFileSync(path.join(dir, 'data.arrow'), 'not ours');
    fs.writeFileSync(path.join(dir, 'agents/people.csv'), 'a,b');
    fs.writeFileSync(path.join(dir, 'manifest.json'), '{"name": "some other tool"}');
    const before = listing(dir);
    const r = socsim([...tiny(1), '--out', dir]);
    expectRefused(r, new RegExp(`${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not empty and is not a socsim run directory.*--out`));
    expect(listing(dir)).toEqual(before);
    expect(fs.readFileSync(path.join(dir, 'thesis.txt'), 'utf8')).toBe('three years of work');
    // --force does not change that: it only replaces runs.
    expectRefused(socsim([...tiny(1), '--out', dir, '--force']), /is not a socsim run directory/);
    expect(listing(dir)).toEqual(before);
  });

  it('runs into an empty directory and into one that does not exist yet', () => {
    const empty = path.join(tmp, 'empty');
    fs.mkdirSync(empty);
    expect(socsim([...tiny(1), '--out', empty]).code).toBe(0);
    expect(manifest(empty).status).toBe('completed');
    const fresh = path.join(tmp, 'a/b/fresh');
    expect(socsim([...tiny(1), '--out', fresh]).code).toBe(0);
    expect(manifest(fresh).status).toBe('completed');
  });

  it('refuses a file', () => {
    const file = path.join(tmp, 'file.txt');
    fs.writeFileSync(file, 'x');
    expectRefused(socsim([...tiny(1), '--out', file]), /file\.txt is not a directory/);
    expect(fs.readFileSync(file, 'utf8')).toBe('x');
  });

  it('refuses to overwrite a run without --force; with it, replaces only the run\'s files', () => {
    const dir = path.join(tmp, 'run');
    const first = socsim([...tiny(3), '--out', dir]);
    expect(first.code, first.stderr).toBe(0);
    const m1 = manifest(dir);
    expect(m1.files.agents).toContain('agents/step-000003.arrow');
    fs.writeFileSync(path.join(dir, 'notes.md'), 'my notes on this run');
    fs.writeFileSync(path.join(dir, 'agents/README'), 'mine');
    const before = listing(dir);

    const again = socsim([...tiny(1), '--out', dir]);
    expectRefused(again, /already holds a socsim run \(voter, completed\).*--force/);
    expect(listing(dir)).toEqual(before);
    expect(manifest(dir)).toEqual(m1);

    const forced = socsim([...tiny(1), '--out', dir, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    const m2 = manifest(dir);
    expect(m2.steps_requested).toBe(1);
    expect(m2.started_at).not.toBe(m1.started_at);
    // The old run's later snapshots are gone; what the user put there is not.
    expect(listing(dir)).toEqual(['.socsim.lock', 'agents', 'agents/README', 'agents/step-000000.arrow', 'agents/step-000001.arrow', 'graph.arrow', 'manifest.json', 'metrics.arrow', 'notes.md']);
    expect(fs.readFileSync(path.join(dir, 'notes.md'), 'utf8')).toBe('my notes on this run');
  });

  it('the default directory runs/<scenario> follows the same rule', () => {
    const cwd = path.join(tmp, 'cwd');
    fs.mkdirSync(cwd);
    expect(socsim(tiny(1), cwd).code).toBe(0);
    expect(manifest(path.join(cwd, 'runs/voter')).status).toBe('completed');
    expectRefused(socsim(tiny(1), cwd), /runs\/voter already holds a socsim run.*--force/);
    expect(socsim([...tiny(1), '--force'], cwd).code).toBe(0);
  });

  it('--help documents --force', () => {
    const r = socsim(['run', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--force\s+replace/);
  });
});

describe('prepareRunDirectory', () => {
  it('never removes a file outside the directory, whatever the old manifest lists', () => {
    const dir = path.join(tmp, 'listed');
    const outside = path.join(tmp, 'outside.arrow');
    fs.mkdirSync(path.join(dir, 'agents'), { recursive: true });
    fs.writeFileSync(outside, 'precious');
    fs.writeFileSync(path.join(dir, 'metrics.arrow'), 'old');
    fs.writeFileSync(path.join(dir, 'agents/step-000004.arrow'), 'old');
    fs.writeFileSync(
      path.join(dir, 'manifest.json'),
      JSON.stringify({ format: 'socsim-run/1', scenario: { name: 'x' }, status: 'completed', files: { metrics: '../outside.arrow', graph: '/etc/hostname', agents: ['agents/../../outside.arrow'], other: ['../outside.arrow', 'posts.arrow'] } }),
    );
    prepareRunDirectory(dir, { force: true });
    expect(fs.readFileSync(outside, 'utf8')).toBe('precious');
    expect(listing(dir)).toEqual(['agents']);
  });

  it('refuses an agents/ that is a link out of the directory', () => {
    const dir = path.join(tmp, 'linked');
    const elsewhere = path.join(tmp, 'elsewhere');
    fs.mkdirSync(elsewhere);
    fs.writeFileSync(path.join(elsewhere, 'step-000001.arrow'), 'not this run\'s');
    fs.mkdirSync(dir);
    fs.symlinkSync(elsewhere, path.join(dir, 'agents'));
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ format: 'socsim-run/1', scenario: { name: 'x' }, status: 'completed', files: { agents: [] } }));
    expect(() => prepareRunDirectory(dir, { force: true })).toThrow(/agents is not a directory/);
    expect(fs.readdirSync(elsewhere)).toEqual(['step-000001.arrow']);
  });
});
