/**
 * The cascade metrics say what they measure: `cascade_max_*_this_step` is the largest statistic
 * among the cascades that grew in the step, `cascade_max_*_so_far` the largest of the run up to
 * the step; both checked against cascades.arrow of a real run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { socsim, tempDir } from '../runner/cliHelpers.ts';

const tmp = tempDir('socsim-cm-');

describe('cascade metrics', () => {
  it('this_step and so_far agree with cascades.arrow', () => {
    const dir = path.join(tmp, 'run');
    const r = socsim(['run', 'social-feed', '--agents', '6000', '--steps', '12', '--seed', '2', '--quiet', '--out', dir]);
    expect(r.code, r.stderr).toBe(0);
    const read = (f: string) => tableFromIPC(fs.readFileSync(path.join(dir, f)));
    const m = read('metrics.arrow');
    const c = read('cascades.arrow');
    const cs = Array.from(c.getChild('step')!.toArray() as Int32Array);
    for (const [stat, col] of [['scale', 'scale'], ['depth', 'depth'], ['breadth', 'max_breadth']] as const) {
      const v = Array.from(c.getChild(col)!.toArray() as Int32Array);
      const thisStep = Array.from(m.getChild(`cascade_max_${stat}_this_step`)!.toArray() as Int32Array);
      const soFar = Array.from(m.getChild(`cascade_max_${stat}_so_far`)!.toArray() as Int32Array);
      thisStep.forEach((x, t) => {
        expect(x).toBe(Math.max(0, ...v.filter((_, i) => cs[i] === t)));
        expect(soFar[t]).toBe(Math.max(0, ...v.filter((_, i) => cs[i] <= t)));
      });
      // So far never decreases; this step does (the cascades that grow change).
      for (let t = 1; t < soFar.length; t++) expect(soFar[t]).toBeGreaterThanOrEqual(soFar[t - 1]);
    }
  });
});
