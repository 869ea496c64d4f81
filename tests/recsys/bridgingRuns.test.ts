/**
 * Runs with the bridging ranker and the prosocial options through the CLI (dist/): the same bytes
 * on one thread, two and the webgpu backend (which computes bridging's base scores, and with a
 * prosocial feed term the feed kernel, on the CPU, saying so once).
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectSameFiles, runAndStop, socsim, tempDir } from '../runner/cliHelpers.ts';
import { gpuOrSkip } from '../gpuHelpers.ts';

const gpu = await gpuOrSkip('the bridging ranker on the webgpu backend');
afterAll(() => gpu?.close());
const tmp = tempDir('socsim-bridging-');
const RUN = ['run', 'social-feed', '--agents', '4000', '--steps', '12', '--seed', '5', '--quiet', '--events'];
const PROSOCIAL = ['--set', 'platform.counts=hidden', '--set', 'platform.outPartisan=3', '--set', 'platform.dominant.factor=0.5'];

function run(name: string, extra: string[]): { dir: string; stderr: string } {
  const dir = path.join(tmp, name);
  const r = socsim([...RUN, ...extra, '--out', dir]);
  expect(r.code, r.stderr).toBe(0);
  return { dir, stderr: r.stderr };
}

describe('bridging and the prosocial options in runs', () => {
  const bridging = run('bridging', ['--set', 'platform.ranker=bridging']);
  const prosocial = run('prosocial', PROSOCIAL);

  it('bridging orders feeds its own way, and says nothing on the CPU', () => {
    expect(bridging.stderr).toBe('');
    const plain = run('x-interest', []);
    expect(() => expectSameFiles(plain.dir, bridging.dir)).toThrow();
  });

  it('the same bytes on one thread, and stopped and resumed (the per-side counts are checkpointed)', async () => {
    expectSameFiles(bridging.dir, run('bridging-one', ['--set', 'platform.ranker=bridging', '--threads', '1']).dir);
    expectSameFiles(prosocial.dir, run('prosocial-one', [...PROSOCIAL, '--threads', '1']).dir);
    const stopped = path.join(tmp, 'stopped');
    await runAndStop([...RUN, '--set', 'platform.ranker=bridging', '--checkpoint-every', '1'], stopped, 6, 'SIGINT');
    const resumed = socsim(['run', '--resume', stopped, '--quiet']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expectSameFiles(bridging.dir, stopped);
  });

  it.skipIf(!gpu)('the same bytes on the webgpu backend; the prosocial feed terms say once that the feed kernel runs on the CPU', () => {
    expectSameFiles(bridging.dir, run('bridging-gpu', ['--set', 'platform.ranker=bridging', '--backend', 'webgpu']).dir);
    const g = run('prosocial-gpu', [...PROSOCIAL, '--backend', 'webgpu']);
    expectSameFiles(prosocial.dir, g.dir);
    const said = g.stderr.split('\n').filter((l) => l.includes('feed kernel runs on the CPU'));
    expect(said).toEqual([
      'socsim: platform.outPartisan is not 1: the feed kernel runs on the CPU (the prosocial terms have no WGSL); the other kernels stay on the device',
      'socsim: platform.dominant.factor is not 1: the feed kernel runs on the CPU (the prosocial terms have no WGSL); the other kernels stay on the device',
    ]);
  });
});
