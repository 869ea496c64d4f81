/** The programmatic API (`run`, `experiment` from 'socsim'): the CLI's checks and files, returned instead of printed. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { experiment, InputError, run } from 'socsim';
import { ROOT, tempDir } from './cliHelpers.ts';

const tmp = tempDir('socsim-api-');

describe('run()', () => {
  it('runs a bundled scenario with parameter overrides and returns its directory and manifest', async () => {
    const out = path.join(tmp, 'sir');
    const r = await run({ scenario: 'sir', agents: 800, steps: 3, params: { beta: 0.2, graph: { m: 3 } }, out });
    expect(r.dir).toBe(out);
    expect(r.manifest.status).toBe('completed');
    expect(r.manifest.steps_completed).toBe(3);
    expect(r.manifest.parameters).toMatchObject({ beta: 0.2, gamma: 0.2, graph: { kind: 'barabasi-albert', m: 3 } });
    expect(fs.existsSync(path.join(out, 'metrics.arrow'))).toBe(true);
  });

  it('refuses an unknown parameter as the CLI does, naming it, before writing anything', async () => {
    const out = path.join(tmp, 'typo');
    const err = await run({ scenario: 'sir', agents: 100, steps: 1, params: { beat: 0.2 }, out }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toMatch(/unknown parameter beat; did you mean beta\?/);
    expect(fs.existsSync(out)).toBe(false);
  });
});

describe('experiment()', () => {
  it('plans, runs and tabulates an experiment file, and a second call skips the finished runs', async () => {
    const out = path.join(tmp, 'exp');
    const file = path.join(ROOT, 'experiments', 'sir-beta.ts');
    const first = await experiment(file, { out, seeds: 2, agents: 600, steps: 4, arms: ['base', 'high'], jobs: 2 });
    expect(first.dir).toBe(out);
    expect(first.planned).toBe(4);
    expect(first.ran).toHaveLength(4);
    const high = first.effects!.find((e) => e.arm === 'high' && e.outcome === 'final_recovered' && e.group === '')!;
    expect(high.n).toBe(2);
    expect(Number.isFinite(high.diff)).toBe(true);
    const again = await experiment(file, { out, seeds: 2, agents: 600, steps: 4, arms: ['base', 'high'] });
    expect(again.ran).toEqual([]);
    expect(again.skipped).toHaveLength(4);
    expect(again.effects).toEqual(first.effects);
  });
});
