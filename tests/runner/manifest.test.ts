/**
 * The manifest during a run (runner/run/runScenario.ts): rewritten by the checkpoints' cost rule, not
 * at every step (its per-step arrays grow with the run, so rewriting it every step made a long run
 * quadratic), and complete at the end.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadScenario } from '../../runner/run/loadScenario.ts';
import { runScenario } from '../../runner/run/runScenario.ts';
import { readArrowFile } from '../../sim-core/io/arrowFile.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-manifest-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('the manifest of a long run', () => {
  it('is rewritten far less often than the run steps, and ends with every step', async () => {
    const { scenario } = await loadScenario('voter');
    const out = path.join(tmp, 'voter');
    const steps = 4000;
    const rename = vi.spyOn(fs, 'renameSync');
    let rewrites: number;
    try {
      const { manifest } = await runScenario(scenario, { agents: 300, steps, seed: 2, out, snapshotEvery: 0 });
      rewrites = rename.mock.calls.filter(([, to]) => path.basename(String(to)) === 'manifest.json').length;
      expect(manifest.status).toBe('completed');
    } finally {
      rename.mockRestore();
    }
    expect(rewrites).toBeGreaterThan(2);
    expect(rewrites).toBeLessThan(steps / 10);
    const m = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
    expect(m.steps_completed).toBe(steps);
    expect(m.step_wall_ms).toHaveLength(steps);
    expect(m.phase_wall_ms.voter).toHaveLength(steps);
    expect(readArrowFile(path.join(out, 'metrics.arrow')).numRows).toBe(steps + 1);
  });
});
