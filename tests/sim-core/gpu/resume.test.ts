/**
 * A social-feed run on the webgpu backend, killed (SIGKILL) and resumed on webgpu, ends with the
 * files of the same run uninterrupted on two CPU threads: the state its GPU kernels keep on the
 * device between steps (opinions, impression rings, session counts) reaches the checkpoints. So
 * does a run killed on one backend and resumed on the other.
 * Skips with one line when no adapter exists.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectSameFiles, runAndStop, socsim, steps, tempDir } from '../../runner/cliHelpers.ts';
import { gpuOrSkip } from '../../gpuHelpers.ts';

const gpu = await gpuOrSkip('a webgpu run killed and resumed');
afterAll(() => gpu?.close());
const tmp = tempDir('socsim-gpu-resume-');

const INTERVENTIONS = [
  { kind: 'inject', step: 2, count: 10, stance: 0.7, veracity: 'false', novelty: 1.2, tag: 'rumour' },
  { kind: 'suspend', step: 5, agents: { fraction: 0.02 } },
  { kind: 'setParam', step: 7, param: 'behaviour.repost', scale: 1.5 },
  { kind: 'setRanker', step: 9, ranker: 'random' },
];
const SOCIAL = ['run', 'social-feed', '--agents', '8000', '--steps', '10', '--seed', '4', '--snapshot-every', '3', '--events', '--checkpoint-every', '2', '--set', `interventions=${JSON.stringify(INTERVENTIONS)}`];
/** The uninterrupted run on two CPU threads, made once. */
const ref = path.join(tmp, 'ref');
function reference(): string {
  if (!fs.existsSync(path.join(ref, 'manifest.json'))) expect(socsim([...SOCIAL, '--threads', '2', '--out', ref, '--quiet']).code).toBe(0);
  return ref;
}

describe.skipIf(!gpu)(`socsim run --backend webgpu --resume (${gpu?.adapter})`, () => {
  it('killed after step 5 and resumed on webgpu: the files of the uninterrupted run on two CPU threads', async () => {
    const dir = path.join(tmp, 'killed');
    expect(await runAndStop([...SOCIAL, '--backend', 'webgpu'], dir, 5, 'SIGKILL')).toBe(null);
    expect(steps(dir)).toBeLessThan(10);
    const r = socsim(['run', '--resume', dir, '--backend', 'webgpu', '--quiet']);
    expect(r.code).toBe(0);
    expectSameFiles(reference(), dir);
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect(m.resumed).toHaveLength(1);
    for (const k of ['recommend', 'act', 'exposure']) expect(m.kernel_calls.webgpu[k], k).toBeGreaterThan(0);
  });

  // A checkpoint holds what each backend keeps (on webgpu the feed's base scores as a column of
  // their own, recsys/records.ts), and a run may resume on the other backend.
  it.each([
    ['webgpu', 'cpu'],
    ['cpu', 'webgpu'],
  ])('killed after step 5 on %s and resumed on %s: the files of the uninterrupted run', async (first, then) => {
    const dir = path.join(tmp, `${first}-${then}`);
    expect(await runAndStop([...SOCIAL, '--backend', first, '--threads', '2'], dir, 5, 'SIGKILL')).toBe(null);
    expect(steps(dir)).toBeLessThan(10);
    const r = socsim(['run', '--resume', dir, '--backend', then, '--threads', '2', '--quiet']);
    expect(r.code).toBe(0);
    expectSameFiles(reference(), dir);
  });
});
