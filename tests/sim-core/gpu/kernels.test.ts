/**
 * The WGSL kernels (sim-core/gpu/kernels.wgsl.ts) against their CPU declarations, byte for byte,
 * on real graphs. Skips with one line when no adapter exists.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../../sim-core/cpuExecutor.ts';
import { buildGraph } from '../../../sim-core/csr.ts';
import { kernels as K } from '../../../sim-core/kernels.ts';
import { hash, keyOf, streamOf } from '../../../sim-core/rng.ts';
import { sharedArray } from '../../../sim-core/table.ts';
import { barabasiAlbert, erdosRenyi } from '../../../graph/generators.ts';
import { RNG_WGSL, keyWords } from '../../../sim-core/gpu/rng.wgsl.ts';
import { shaderOf } from '../../../sim-core/gpu/gpuKernels.ts';
import { createTable } from '../../../sim-core/table.ts';
import { runStep, type World } from '../../../sim-core/phase.ts';
import { voter } from '../../../models/opinion.ts';
import { runPass } from '../../../sim-core/gpu/dispatch.ts';
import { GpuExecutor } from '../../../sim-core/gpu/executor.ts';
import { gpuOrSkip, rowShader } from '../../gpuHelpers.ts';

const gpu = await gpuOrSkip('WGSL kernels against the CPU kernels');
// Targets in one part: every split binding gets the whole array (the executor's splitting is
// tested in executor.test.ts).
const WHOLE = 2 ** 31;
const PARTS = 4;
const unsplit = (t: Int32Array) => Array.from({ length: PARTS }, () => t);
const exec = createExecutor(1);
afterAll(() => {
  gpu?.close();
  exec.close();
});

const MULHI = rowShader(RNG_WGSL, '  out[i] = mulhi(ab[2u * i], ab[2u * i + 1u]);');

describe.skipIf(!gpu)(`WGSL kernels on WebGPU (${gpu?.adapter})`, () => {
  it('mulhi is the high word of the exact 64-bit product', async () => {
    const edge = [0, 1, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff];
    const pairs: number[] = [];
    for (const a of edge) for (const b of edge) pairs.push(a, b);
    const key = keyOf(3, streamOf('mulhi'), 0);
    for (let i = 0; i < 100_000; i++) pairs.push(hash(key, i, 0), hash(key, i, 1));
    const ab = Uint32Array.from(pairs);
    const rows = ab.length / 2;
    const got = new Uint32Array(await runPass(gpu!, MULHI, { rows, params: [], inputs: [ab], outputBytes: rows * 4 }));
    const bad: string[] = [];
    for (let i = 0; i < rows && bad.length < 5; i++) {
      const want = Number((BigInt(ab[2 * i]) * BigInt(ab[2 * i + 1])) >> 32n);
      if (got[i] !== want) bad.push(`${ab[2 * i]} x ${ab[2 * i + 1]}: gpu ${got[i]} exact ${want}`);
    }
    expect(bad).toEqual([]);
  });

  it('sampleNeighbor and gatherNeighbor (u8) equal the CPU kernels on a BA graph, a sparse graph with isolated rows and a 300k-leaf star', async () => {
    const graphs = [
      ['BA n=200k m=5', barabasiAlbert(200_000, 5, 1)],
      ['ER n=50k p=2e-5 (isolated rows)', erdosRenyi(50_000, 2e-5, 2)],
    ] as const;
    const star = { nodes: 300_001, src: sharedArray('i32', 300_000), dst: sharedArray('i32', 300_000), directed: false };
    for (let i = 0; i < 300_000; i++) [star.src[i], star.dst[i]] = [0, i + 1];
    for (const [name, e] of [...graphs, ['star, hub degree 300k', star] as const]) {
      const g = await buildGraph(exec, e.nodes, e.src, e.dst, e.directed);
      const { offsets, targets } = g.followers;
      expect(offsets).toBeInstanceOf(Int32Array);
      const n = e.nodes;
      for (const step of [0, 1, 2 ** 40]) {
        const key = keyOf(9, streamOf('voter'), step);
        const cpu = sharedArray('i32', n);
        await exec.run(K.sampleNeighbor, { offsets, targets, out: cpu, key }, n);
        const got = new Int32Array(await runPass(gpu!, shaderOf(K.sampleNeighbor, '', PARTS), { rows: n, params: [WHOLE, ...keyWords(key)], inputs: [offsets as Int32Array, ...unsplit(targets)], outputBytes: n * 4 }));
        let first = -1;
        for (let v = 0; v < n && first < 0; v++) if (got[v] !== cpu[v]) first = v;
        expect(first, `${name}, step ${step}: first differing row ${first} (gpu ${got[first]}, cpu ${cpu[first]})`).toBe(-1);
        // gatherNeighbor over bytes that differ from row to row, rows packed four to a word (the
        // star's 300,001 rows end in a partial word, whose spare bytes are written 0).
        const values = sharedArray('u8', n);
        for (let v = 0; v < n; v++) values[v] = hash(key, v, 7) & 0xff;
        const cpuBytes = sharedArray('u8', n);
        await exec.run(K.gatherNeighbor, { offsets, targets, src: values, out: cpuBytes, key }, n);
        const words = Math.ceil(n / 4);
        const gotBytes = new Uint8Array(await runPass(gpu!, shaderOf(K.gatherNeighbor, '', PARTS), { rows: words, params: [WHOLE, n, ...keyWords(key)], inputs: [offsets as Int32Array, ...unsplit(targets), values], outputBytes: words * 4 }));
        expect(Buffer.from(gotBytes.subarray(0, n)).equals(Buffer.from(cpuBytes)), `${name}, step ${step}: gatherNeighbor`).toBe(true);
        expect(Array.from(gotBytes.subarray(n))).toEqual(Array.from({ length: words * 4 - n }, () => 0));
      }
      if (name.startsWith('ER')) expect(Array.from(g.followers.offsets).some((o, i, a) => i > 0 && o === a[i - 1])).toBe(true);
    }
  });

  it('gather of a u8 column (four rows to a word) equals the CPU kernel, negative indices and a partial last word included', async () => {
    const n = 100_003;
    const key = keyOf(5, streamOf('gather'), 0);
    const src = sharedArray('u8', n);
    const index = sharedArray('i32', n);
    for (let i = 0; i < n; i++) {
      src[i] = hash(key, i, 0) & 0xff;
      index[i] = i % 97 === 0 ? -1 : hash(key, i, 1) % n;
    }
    const cpu = sharedArray('u8', n);
    await exec.run(K.gather, { out: cpu, src, index }, n);
    const words = Math.ceil(n / 4);
    const got = new Uint8Array(await runPass(gpu!, shaderOf(K.gather, 'u8'), { rows: words, params: [n], inputs: [src, index], outputBytes: words * 4 }));
    expect(Buffer.from(got.subarray(0, n)).equals(Buffer.from(cpu))).toBe(true);
    expect(Array.from(got.subarray(n))).toEqual([0]);
  });

  it('gather of 32-bit columns on the device (apply\'s active users\' opinions): the CPU kernel\'s bits, negative indices included, rows past the call kept', async () => {
    const n = 50_001;
    const inner = createExecutor(1);
    const gx = new GpuExecutor(gpu!, inner);
    try {
      for (const type of ['f32', 'i32'] as const) {
        const src = sharedArray(type, n);
        const index = sharedArray('i32', n);
        for (let i = 0; i < n; i++) {
          src[i] = type === 'f32' ? Math.fround(Math.sin(i) * 1e-30 ** (i % 3)) : hash(9, i, 0) | 0;
          index[i] = i % 89 === 0 ? -1 : hash(9, i, 1) % n;
        }
        const want = sharedArray(type, n + 10).fill(7);
        const got = sharedArray(type, n + 10).fill(7);
        await exec.run(K.gather, { out: want, src, index }, n);
        await gx.run(K.gather, { out: got, src, index }, n);
        await gx.sync([got]);
        expect(Buffer.from(got.buffer).equals(Buffer.from(want.buffer)), type).toBe(true);
      }
      expect(gx.counts.gpu.get('gather')).toBe(2);
      expect(gx.counts.cpu.size).toBe(0);
    } finally {
      await inner.close();
    }
  });

  it('ten voter steps on the GPU (gatherNeighbor; and sampleNeighbor, then gather) give the votes of the voter phase, step by step', async () => {
    const n = 100_000;
    const e = barabasiAlbert(n, 5, 4);
    const graph = await buildGraph(exec, n, e.src, e.dst, e.directed);
    const world: World = { agents: createTable({}, n), graph, exec, seed: 11, stepSeconds: 3600 };
    const phases = [voter({ states: 3 })];
    for (const ph of phases) await ph.init?.(world);
    const initial = new Uint8Array(world.agents.columns.vote as Uint8Array);
    let votes = initial;
    const { offsets, targets } = graph.following;
    const words = Math.ceil(n / 4);
    for (let step = 0; step < 10; step++) {
      const key = keyOf(world.seed, streamOf('voter'), step);
      const partner = new Int32Array(await runPass(gpu!, shaderOf(K.sampleNeighbor, '', PARTS), { rows: n, params: [WHOLE, ...keyWords(key)], inputs: [offsets as Int32Array, ...unsplit(targets)], outputBytes: n * 4 }));
      const twoPass = new Uint8Array(await runPass(gpu!, shaderOf(K.gather, 'u8'), { rows: words, params: [n], inputs: [votes, partner], outputBytes: words * 4 })).slice(0, n);
      votes = new Uint8Array(await runPass(gpu!, shaderOf(K.gatherNeighbor, '', PARTS), { rows: words, params: [WHOLE, n, ...keyWords(key)], inputs: [offsets as Int32Array, ...unsplit(targets), votes], outputBytes: words * 4 })).slice(0, n);
      await runStep(world, phases, step);
      const cpu = world.agents.columns.vote as Uint8Array;
      expect(Buffer.from(votes).equals(Buffer.from(cpu)), `step ${step}`).toBe(true);
      expect(Buffer.from(twoPass).equals(Buffer.from(cpu)), `step ${step}, two passes`).toBe(true);
    }
    // The votes moved: a run that changed nothing would prove nothing.
    expect(votes.filter((x, i) => x !== initial[i]).length).toBeGreaterThan(n / 10);
  });
});
