/**
 * What `--help` shows: `socsim experiment --help` lists the options of `experiment run` (which
 * `socsim experiment FILE` runs), and a command's required options say "(required)" (calibrate's
 * --fit and --out), while optional ones do not.
 */
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../runner/cli/cli.ts';

/** The help text as `socsim NAMES... --help` prints it (addHelpText included). */
async function printedHelp(...names: string[]): Promise<string> {
  const program = await buildProgram(names[0]);
  let out = '';
  program.exitOverride().configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (out += s) });
  for (const c of program.commands) c.exitOverride().configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (out += s) });
  await program.parseAsync(['node', 'socsim', ...names, '--help']).catch((err: { code?: string }) => {
    if (err.code !== 'commander.helpDisplayed') throw err;
  });
  return out;
}

/** The help line block of option `flag` (its first line and the wrapped ones after it). */
function optionText(text: string, flag: string): string {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => l.trimStart().startsWith(`${flag} `));
  expect(i, flag).toBeGreaterThanOrEqual(0);
  let j = i + 1;
  while (j < lines.length && /^ {6,}\S/.test(lines[j])) j++; // option lines are indented 2
  return lines.slice(i, j).join(' ').replace(/\s+/g, ' ');
}

describe('--help', () => {
  it('socsim experiment --help shows the options of experiment run', async () => {
    const text = await printedHelp('experiment');
    for (const flag of ['--seeds', '--arms', '--jobs', '--agents', '--hours', '--shard', '--force', '--llm']) expect(text).toMatch(new RegExp(`^ +${flag}\\b`, 'm'));
    expect(text).toMatch(/socsim experiment FILE \[options\] is socsim experiment run FILE \[options\]/);
  });

  it('calibrate --help marks the required options, and only those', async () => {
    const text = await printedHelp('calibrate');
    for (const flag of ['--fit', '--out']) expect(optionText(text, flag), flag).toMatch(/\(required\)$/);
    // A series (--target, --match) or moments (--moments) or both: none of them alone is required.
    for (const flag of ['--target', '--match', '--moments', '--seeds', '--budget', '--set']) expect(optionText(text, flag), flag).not.toMatch(/required/);
  });
});
