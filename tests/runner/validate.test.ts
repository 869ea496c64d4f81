/**
 * `socsim validate` as a user runs it (small and short here): the runs, the table beside the
 * published figures, validate.md, and a re-run that reuses the completed runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { socsim, tempDir } from './cliHelpers.ts';
import { PUBLISHED, passes } from '../../runner/analysis/validate.ts';

const tmp = tempDir('socsim-validate-');

describe('socsim validate', () => {
  it('prints every pattern beside its published figure and writes validate.md; a re-run reuses the runs', () => {
    const out = path.join(tmp, 'v');
    const args = ['validate', '--agents', '4000', '--hours', '12', '--seeds', '2', '--out', out, '--quiet'];
    const r = socsim(args);
    expect(r.code, r.stderr).toBe(0);
    const table = fs.readFileSync(path.join(out, 'validate.md'), 'utf8');
    expect(r.stdout).toContain(table);
    expect(table).toContain('4000 agents, 12 hours in 48 steps of 15 minutes, seeds 1, 2');
    for (const f of PUBLISHED) expect(table).toContain(`| ${f.pattern} |`);
    // One column pair per arm, and one count per arm.
    expect(table).toContain('| default platform: mean [95% CI] | within 2x | chronological timeline of followed accounts: mean [95% CI] | within 2x |');
    expect(table).toMatch(/^default platform: \d+ of \d+ scored patterns within a factor of two/m);
    expect(table).toMatch(/^chronological timeline of followed accounts: \d+ of \d+ scored patterns within a factor of two/m);
    const row = table.split('\n').find((l) => l.startsWith('| original posts never reshared'));
    expect(row?.split('|').length, row).toBe(9);
    expect(fs.existsSync(path.join(out, 'effects.arrow'))).toBe(true);
    const again = socsim(args);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('0 ran, 4 already complete');
    expect(fs.readFileSync(path.join(out, 'validate.md'), 'utf8')).toBe(table);
  });

  it('a share passes when it and its complement are both within a factor of two', () => {
    const never = PUBLISHED.find((f) => f.outcome === 'never_reshared')!;
    // 93% never reshared is 7% reshared: 3.5% to 14% reshared pass.
    expect(passes(never, 0.6)).toBe(false);
    // 7% never reshared is 93% reshared: its complement is far off.
    expect(passes(never, 0.07)).toBe(false);
    expect(passes(never, 0.87)).toBe(true);
    expect(passes(never, 0.96)).toBe(true);
    expect(passes(never, 0.97)).toBe(false);
    expect(passes(never, NaN)).toBe(false);
    // 67% within the first hour: 34% to 83.5% pass; 32% is as far from 50% as 67% but fails.
    const hour = PUBLISHED.find((f) => f.outcome === 'within_1h')!;
    expect(passes(hour, 0.34)).toBe(true);
    expect(passes(hour, 0.32)).toBe(false);
    expect(passes(hour, 0.83)).toBe(true);
    expect(passes(hour, 0.84)).toBe(false);
    expect(passes(PUBLISHED.find((f) => f.outcome === 'tail_exponent')!, 2)).toBeUndefined();
  });
});
