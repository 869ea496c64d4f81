/**
 * The calibration target file's messages quote its content with control characters escaped: a
 * header or cell holding a terminal escape sequence reaches the terminal as text (`\x1b[31m`), not
 * as a colour change, both from readTarget and from the CLI's one line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError, escapeControls } from '../../sim-core/errors.ts';
import { parseMatch, readTarget } from '../../runner/calibrate/calibrationTarget.ts';
import { socsim, tempDir } from './cliHelpers.ts';

const tmp = tempDir('socsim-target-');
const write = (name: string, text: string) => {
  const f = path.join(tmp, name);
  fs.writeFileSync(f, text);
  return f;
};
const ESC = '\x1b';

describe('escapeControls', () => {
  it('writes C0, DEL and C1 controls as \\xHH and keeps other text', () => {
    expect(escapeControls(`a${ESC}[31mb\n\t\x00\x7f\x9b é ✓`)).toBe('a\\x1b[31mb\\x0a\\x09\\x00\\x7f\\x9b é ✓');
  });
});

describe('readTarget messages', () => {
  it('escape a terminal escape sequence in a header or a cell', () => {
    const m = [parseMatch('infectious')];
    for (const [f, what] of [
      [write('header.csv', `step,${ESC}[31minfectious\n0,1\n1,2\n`), 'column \\x1b[31minfectious is not matched'],
      [write('cell.csv', `step,infectious\n0,1\n1,${ESC}[31m2\n`), 'column infectious is "\\x1b[31m2", not a finite number'],
    ] as const) {
      const err = (() => {
        try {
          readTarget(f, m);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(InputError);
      expect((err as Error).message).toContain(what);
      expect((err as Error).message).not.toContain(ESC);
    }
  });

  it('reach the terminal of socsim calibrate as one line without a raw ESC', () => {
    const r = socsim(['calibrate', 'sir', '--target', write('cli.csv', `step,${ESC}[31minfectious\n0,1\n1,2\n`), '--fit', 'beta=0.01..0.1', '--match', 'infectious', '--out', path.join(tmp, 'out')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringContaining('socsim: ')]);
    expect(r.stderr).toContain('column \\x1b[31minfectious is not matched');
    expect(r.stderr).not.toContain(ESC);
  });
});
