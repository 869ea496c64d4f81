/**
 * The records' static fields in WGSL (recsys/recordStatics.wgsl.ts) against the CPU, byte for
 * byte: the quantised topic (records.ts quantise) over float32 values at and beside every rounding
 * tie, and the kernel over rows of random posts, with a topic width that leaves a partial last
 * word (its other bytes must stay as they were). Skips with one line when no adapter exists.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../../sim-core/exec.ts';
import { hash } from '../../../sim-core/rng.ts';
import { sharedArray } from '../../../sim-core/table.ts';
import { GpuExecutor } from '../../../sim-core/gpu/executor.ts';
import { runPass } from '../../../sim-core/gpu/dispatch.ts';
import { kernels as K } from '../../../recsys/kernels.ts';
import { quantise } from '../../../recsys/records.ts';
import { QUANTISE_WGSL } from '../../../recsys/recordStatics.wgsl.ts';
import { gpuOrSkip, rowShader } from '../../gpuHelpers.ts';

const gpu = await gpuOrSkip('the records’ static fields in WGSL against the CPU');
afterAll(() => gpu?.close());

const f32 = (x: number) => Math.fround(x);
const bitsOf = (x: number) => new Uint32Array(Float32Array.of(x).buffer)[0];

describe.skipIf(!gpu)(`records' static fields on WebGPU (${gpu?.adapter})`, () => {
  it('quantise_bits equals Math.round(127 x) of the clamped float32, at every half and beside it', async () => {
    const xs: number[] = [0, -0, 1, -1, 1.5, -1.5, Infinity, -Infinity, NaN, 1e-45, -1e-45, 1e-38, -1e-38, f32(0.5 / 127), f32(-0.5 / 127)];
    // Each tie (k + 1/2) / 127 and the float32 values next to it, both signs.
    for (let k = 0; k < 127; k++) {
      const t = f32((k + 0.5) / 127);
      const b = bitsOf(t);
      for (const c of [b - 1, b, b + 1]) {
        const v = new Float32Array(Uint32Array.of(c).buffer)[0];
        xs.push(v, -v);
      }
    }
    for (let i = 0; i < 4000; i++) xs.push(new Float32Array(Uint32Array.of(hash(7, i)).buffer)[0], ((hash(8, i) / 2 ** 32) * 2.2 - 1.1));
    const input = Uint32Array.from(xs, bitsOf);
    const shader = rowShader(QUANTISE_WGSL, '  out[i] = quantise_bits(ab[i]);');
    const out = new Uint32Array(await runPass(gpu!, shader, { rows: input.length, params: [], inputs: [input], outputBytes: input.length * 4 }));
    const want = Uint32Array.from(xs, (x) => Int8Array.of(quantise(f32(x)))[0] & 0xff);
    const bad = [...want.keys()].filter((i) => out[i] !== want[i]);
    expect(bad.slice(0, 5).map((i) => [xs[i], out[i], want[i]])).toEqual([]);
  });

  it.each([16, 6])('the kernel writes the same records as the CPU (topic width %i), only its rows', async (D) => {
    const rows = 5_000;
    const S = 4 + Math.ceil(D / 4);
    const from = 700;
    const n = rows - from - 300;
    const col = (seed: number) => Int32Array.from({ length: rows }, (_, i) => hash(seed, i) & 0x7fffffff);
    const [step, author, prev] = [col(1), col(2), col(3)];
    const topic = Float32Array.from({ length: rows * D }, (_, i) => (hash(4, i) / 2 ** 32) * 2.4 - 1.2);
    const run = async (exec: ReturnType<typeof createExecutor> | GpuExecutor) => {
      const rec = sharedArray('i32', rows * S);
      for (let i = 0; i < rec.length; i++) rec[i] = hash(5, i) | 0;
      const args = { step, author, prevByAuthor: prev, topic, rec, recQ: new Int8Array(rec.buffer), from, dim: D, stride: S };
      await exec.run(K.recordStatics, args, n, { wroteRows: [{ array: rec, from: from * S, to: (from + n) * S }] });
      await exec.sync?.([rec]);
      return rec;
    };
    const cpu = createExecutor(1);
    const inner = createExecutor(1);
    const exec = new GpuExecutor(gpu!, inner);
    try {
      const want = await run(cpu);
      const got = await run(exec);
      expect(exec.counts.gpu.get('recordStatics')).toBe(1);
      expect(Buffer.from(got.buffer).equals(Buffer.from(want.buffer))).toBe(true);
    } finally {
      await cpu.close();
      await inner.close();
    }
  });
});
