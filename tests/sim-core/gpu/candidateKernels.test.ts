/**
 * The candidate index's kernels in WGSL (recsys/candidateKernels.wgsl.ts) against their CPU
 * declarations (recsys/candidateKernels.ts candidateTops and mergeTops), byte for byte through the webgpu
 * executor: the slices' entries (ids, f64 list keys, ties) and the merged lists, under every
 * ranker. Skips with one line when no adapter exists.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../../sim-core/cpuExecutor.ts';
import { GpuExecutor } from '../../../sim-core/gpu/executor.ts';
import { RANKER } from '../../recsys/rankerCodes.ts';
import { candidateLists, candidateWorld } from '../../recsys/candidateWorld.ts';
import { gpuOrSkip } from '../../gpuHelpers.ts';

const gpu = await gpuOrSkip('the candidate lists in WGSL against the CPU');
afterAll(() => gpu?.close());

const same = (a: ArrayBufferView, b: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

describe.skipIf(!gpu)(`the candidate lists on WebGPU (${gpu?.adapter})`, () => {
  it.each([
    { ranker: 'chronological', code: RANKER.chronological },
    { ranker: 'random', code: RANKER.random },
    { ranker: 'reddit-hot', code: RANKER.redditHot },
    { ranker: 'x-interest', code: RANKER.xInterest },
    { ranker: 'bridging', code: RANKER.bridging },
  ])('$ranker: the same entries and lists', async ({ code }) => {
    const w = candidateWorld(30_011);
    const cpu = createExecutor(2);
    const inner = createExecutor(1);
    try {
      const exec = new GpuExecutor(gpu!, inner);
      for (const [sliceRows, perCluster, trending] of [[4096, 16, 20], [1000, 3, 64], [2500, 0, 7]]) {
        const o = { ranker: code, base: 2 ** 31 - 40_000, firstRow: 321, sliceRows, perCluster, trending, key: 2 ** 44 + 99 };
        const want = await candidateLists(cpu, w, o);
        const got = await candidateLists(exec, w, o);
        const at = `slices of ${sliceRows}`;
        expect(same(got.part, want.part), `${at}: part`).toBe(true);
        expect(same(got.clusterPosts, want.clusterPosts), `${at}: clusterPosts`).toBe(true);
        expect(same(got.trending, want.trending), `${at}: trending`).toBe(true);
        expect(want.trending.every((id) => id >= o.base + o.firstRow)).toBe(true);
      }
      expect(exec.counts.gpu.get('candidateTops')).toBe(3);
      expect(exec.counts.gpu.get('mergeTops')).toBe(3);
      // Lists longer than an invocation keeps stay on the CPU.
      const long = { ranker: code, base: 0, firstRow: 0, sliceRows: 8192, perCluster: 65, trending: 20, key: 5 };
      const want = await candidateLists(cpu, w, long);
      const got = await candidateLists(exec, w, long);
      expect(same(got.clusterPosts, want.clusterPosts) && same(got.trending, want.trending)).toBe(true);
      expect(exec.counts.cpu.get('candidateTops')).toBe(1);
    } finally {
      await cpu.close();
      await inner.close();
    }
  });
});
