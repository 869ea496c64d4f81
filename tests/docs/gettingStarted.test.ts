/**
 * The tour of docs/getting-started.md runs as written: each line of its block marked
 * `<!-- docs-test: run -->`, through bash, in a temporary folder where `npx socsim` is this
 * checkout's built CLI (dist/; `npm test` builds it first) and experiments/ is the repository's.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, testedCommands } from './markdown.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-getting-started-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A folder with an `npx` that runs `socsim ...` as this checkout's bin and refuses anything else. */
function npxShim(): string {
  const bin = path.join(dir, '.bin');
  fs.mkdirSync(bin);
  const script = `#!/bin/sh\nif [ "$1" != socsim ]; then echo "the docs test runs only npx socsim, not npx $1" >&2; exit 127; fi\nshift\nexec "${process.execPath}" "${path.join(ROOT, 'bin', 'socsim.mjs')}" "$@"\n`;
  fs.writeFileSync(path.join(bin, 'npx'), script, { mode: 0o755 });
  return bin;
}

describe('getting started', () => {
  const commands = testedCommands(fs.readFileSync(path.join(ROOT, 'docs', 'getting-started.md'), 'utf8'));

  it('has a tested block of socsim commands', () => {
    expect(commands.length).toBeGreaterThan(3);
    expect(commands.every((c) => c.startsWith('npx socsim '))).toBe(true);
  });

  it('runs every command of the tour, in order, as written', () => {
    fs.symlinkSync(path.join(ROOT, 'experiments'), path.join(dir, 'experiments'));
    const env = { ...process.env, PATH: `${npxShim()}${path.delimiter}${process.env.PATH}` };
    for (const command of commands) {
      const r = spawnSync('bash', ['-c', command], { cwd: dir, env, encoding: 'utf8', timeout: 300_000 });
      expect(r.status, `${command}\nexited ${r.status}:\n${(r.stderr || r.stdout).slice(-2000)}`).toBe(0);
    }
    expect(fs.existsSync(path.join(dir, 'runs', 'sir-beta', 'effects.arrow'))).toBe(true);
  });
});
