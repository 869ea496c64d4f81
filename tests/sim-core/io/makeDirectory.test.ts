/** Output folders are created level by level and fail fast on impossible targets (sim-core/io/makeDirectory.ts). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDirectory } from '../../../sim-core/io/makeDirectory.ts';

describe('makeDirectory', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-mkdir-'));

  it('creates the missing levels, and is a no-op on an existing folder', () => {
    const d = path.join(tmp, 'a', 'b', 'c');
    makeDirectory(d);
    expect(fs.statSync(d).isDirectory()).toBe(true);
    makeDirectory(d);
  });

  it('names a file in the way', () => {
    fs.writeFileSync(path.join(tmp, 'f'), '');
    expect(() => makeDirectory(path.join(tmp, 'f', 'x'), 'runs/x')).toThrow(/^cannot create runs\/x: .*\/f is a file, not a folder/);
  });

  it('fails at once under /proc, where a recursive mkdir never returns', () => {
    const t0 = performance.now();
    expect(() => makeDirectory('/proc/nope/deeper', '/proc/nope/deeper')).toThrow(/^cannot create \/proc\/nope\/deeper: \/proc does not accept new folders \(ENOENT at \/proc\/nope\)/);
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it.skipIf(process.getuid?.() === 0)('says permission denied for a folder it may not write', () => {
    const ro = path.join(tmp, 'ro');
    fs.mkdirSync(ro, { mode: 0o555 });
    expect(() => makeDirectory(path.join(ro, 'x'))).toThrow(/permission denied \(EACCES/);
  });
});
