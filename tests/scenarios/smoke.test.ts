import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundledScenarios, loadScenario } from '../../runner/run/loadScenario.ts';
import { runScenario } from '../../runner/run/runScenario.ts';
import { readArrowFile } from '../../sim-core/io/arrowFile.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-smoke-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('every bundled scenario runs a few steps at small N', () => {
  const names = bundledScenarios();
  it('finds the scenarios', () => {
    expect(names).toEqual(expect.arrayContaining(['opinion-cascade', 'voter', 'independent-cascade', 'linear-threshold', 'sir', 'degroot', 'deffuant', 'hegselmann-krause']));
  });
  for (const name of names) {
    it(name, async () => {
      const { scenario } = await loadScenario(name);
      const out = path.join(tmp, name);
      const { manifest } = await runScenario(scenario, { agents: 2000, steps: 3, seed: 3, out });
      expect(manifest.status).toBe('completed');
      const metrics = readArrowFile(path.join(out, 'metrics.arrow'));
      // One row per step, numbered by the steps completed; the classic models add a first row, step 0, with the initial state.
      const steps = Array.from(metrics.getChild('step')!.toArray() as Int32Array);
      expect(steps).toEqual(name === 'social-feed' ? [1, 2, 3] : [0, 1, 2, 3]);
      // Every metric is a finite number in every row.
      for (const f of metrics.schema.fields) {
        const col = metrics.getChild(f.name)!;
        for (let i = 0; i < metrics.numRows; i++) expect(Number.isFinite(Number(col.get(i))), `${name}.${f.name}`).toBe(true);
      }
      expect(fs.existsSync(path.join(out, 'agents/step-000003.arrow'))).toBe(true);
    });
  }
});
