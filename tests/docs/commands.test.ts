/**
 * The tours of docs/getting-started.md and README.md run as written: each line of their blocks
 * marked `<!-- docs-test: run -->`, through bash, in a temporary folder per page where
 * `npx socsim` is this checkout's built CLI (dist/; `npm test` builds it first) and experiments/
 * is the repository's.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, testedCommands } from './markdown.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-docs-commands-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A folder with an `npx` that runs `socsim ...` as this checkout's bin and refuses anything else. */
function npxShim(): string {
  const bin = path.join(root, '.bin');
  if (fs.existsSync(bin)) return bin;
  fs.mkdirSync(bin);
  const script = `#!/bin/sh\nif [ "$1" != socsim ]; then echo "the docs test runs only npx socsim, not npx $1" >&2; exit 127; fi\nshift\nexec "${process.execPath}" "${path.join(ROOT, 'bin', 'socsim.mjs')}" "$@"\n`;
  fs.writeFileSync(path.join(bin, 'npx'), script, { mode: 0o755 });
  return bin;
}

/** Runs a page's tested commands in order in a new folder; returns the folder. */
function runPage(page: string): string {
  const commands = testedCommands(fs.readFileSync(path.join(ROOT, page), 'utf8'));
  expect(commands.length, `${page} has no block marked <!-- docs-test: run -->`).toBeGreaterThan(3);
  expect(commands.filter((c) => !c.startsWith('npx socsim '))).toEqual([]);
  const dir = path.join(root, page.replace(/\W/g, '-'));
  fs.mkdirSync(dir);
  fs.symlinkSync(path.join(ROOT, 'experiments'), path.join(dir, 'experiments'));
  const env = { ...process.env, PATH: `${npxShim()}${path.delimiter}${process.env.PATH}` };
  for (const command of commands) {
    const r = spawnSync('bash', ['-c', command], { cwd: dir, env, encoding: 'utf8', timeout: 300_000 });
    expect(r.status, `${page}: ${command}\nexited ${r.status}:\n${(r.stderr || r.stdout).slice(-2000)}`).toBe(0);
  }
  return dir;
}

describe('documented commands', () => {
  it('docs/getting-started.md: every command of the tour, in order, as written', () => {
    const dir = runPage('docs/getting-started.md');
    expect(fs.existsSync(path.join(dir, 'runs', 'sir-beta', 'effects.arrow'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'runs', 'feed-parquet', 'posts.parquet'))).toBe(true);
  });

  it('README.md: every command of the tour but serve, in order, as written', () => {
    const dir = runPage('README.md');
    expect(fs.existsSync(path.join(dir, 'runs', 'sir-beta', 'effects.arrow'))).toBe(true);
  });
});
