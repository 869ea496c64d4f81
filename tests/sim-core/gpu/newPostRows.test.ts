/**
 * What the device writes of the new posts' rows against the CPU, byte for byte: their topics
 * (writeTopics, platform/postBatch.wgsl.ts) and the records' static fields (recsys/recordStatics.wgsl.ts):
 * the quantised topic (rankers.ts quantise) over float32 values at and beside every rounding tie,
 * and both kernels over rows of random posts, with a topic width that leaves a partial last word
 * (its other bytes must stay as they were), and with a table whose capacity passes the binding
 * limit while its rows in use do not. Skips with one line when no adapter exists.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type Executor } from '../../../sim-core/exec.ts';
import { createExecutor } from '../../../sim-core/cpuExecutor.ts';
import { hash } from '../../../sim-core/rng.ts';
import { sharedArray } from '../../../sim-core/table.ts';
import { GpuExecutor } from '../../../sim-core/gpu/executor.ts';
import { runPass } from '../../../sim-core/gpu/dispatch.ts';
import { kernels as K } from '../../../recsys/kernels.ts';
import { kernels as PB } from '../../../platform/postBatch.ts';
import { quantise } from '../../../recsys/recommender.ts';
import { QUANTISE_WGSL } from '../../../recsys/recordStatics.wgsl.ts';
import { gpuOrSkip, rowShader } from '../../gpuHelpers.ts';

const gpu = await gpuOrSkip('the new posts’ topics and records in WGSL against the CPU');
afterAll(() => gpu?.close());

const f32 = (x: number) => Math.fround(x);
const bitsOf = (x: number) => new Uint32Array(Float32Array.of(x).buffer)[0];

/** A binding limit that holds `bytes` (a multiple of 256, the offset alignment). */
const limitFor = (bytes: number) => Math.ceil(bytes / 256) * 256;

/** `run` on one CPU thread (want) and on the device with that binding limit (got), and the device's executor. */
async function onBoth<T>(run: (exec: Executor) => Promise<T>, maxBindingBytes?: number): Promise<{ want: T; got: T; exec: GpuExecutor }> {
  const cpu = createExecutor(1);
  const inner = createExecutor(1);
  const exec = new GpuExecutor(gpu!, inner, { maxBindingBytes });
  try {
    return { want: await run(cpu), got: await run(exec), exec };
  } finally {
    await cpu.close();
    await inner.close();
  }
}

describe.skipIf(!gpu)(`new posts' rows on WebGPU (${gpu?.adapter})`, () => {
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

  it.each([
    { D: 16, roomy: false },
    { D: 6, roomy: false },
    { D: 16, roomy: true },
  ])('recordStatics writes the same records as the CPU (topic width $D, room past the binding limit: $roomy), only its rows', async ({ D, roomy }) => {
    const rows = 5_000;
    const S = 4 + Math.ceil(D / 4);
    const from = 700;
    const n = rows - from - 300;
    const col = (seed: number) => Int32Array.from({ length: rows }, (_, i) => hash(seed, i) & 0x7fffffff);
    const [step, author, prev] = [col(1), col(2), col(3)];
    const topic = Float32Array.from({ length: rows * D * (roomy ? 3 : 1) }, (_, i) => (hash(4, i) / 2 ** 32) * 2.4 - 1.2);
    const limit = roomy ? limitFor(rows * D * 4) : undefined;
    if (limit) expect(topic.byteLength).toBeGreaterThan(limit);
    const run = async (exec: Executor) => {
      const rec = sharedArray('i32', rows * S);
      for (let i = 0; i < rec.length; i++) rec[i] = hash(5, i) | 0;
      const args = { step, author, prevByAuthor: prev, topic, rec, recQ: new Int8Array(rec.buffer), from, dim: D, stride: S };
      await exec.run(K.recordStatics, args, n, { wroteRows: [{ array: rec, from: from * S, to: (from + n) * S }] });
      await exec.sync?.([rec]);
      return rec;
    };
    const { want, got, exec } = await onBoth(run, limit);
    expect(exec.counts.gpu.get('recordStatics')).toBe(1);
    expect(Buffer.from(got.buffer).equals(Buffer.from(want.buffer))).toBe(true);
  });

  it.each([false, true])('writeTopics copies the same topics as the CPU, from parents and from postContent (room past the binding limit: %s)', async (roomy) => {
    const [D, live, n, sources] = [16, 3_000, 1_500, 1_000];
    const base = 40_000;
    const newParent = Int32Array.from({ length: n }, (_, i) => (hash(11, i) % 3 === 0 ? -1 : base + (hash(12, i) % live)));
    const newSrc = Int32Array.from({ length: n }, (_, i) => hash(13, i) % sources);
    const srcTopic = Float32Array.from({ length: sources * D }, (_, i) => Math.sin(i));
    const limit = roomy ? limitFor((live + n) * D * 4) : undefined;
    const run = async (exec: Executor) => {
      const topic = sharedArray('f32', (live + n) * D * (roomy ? 3 : 1));
      for (let i = 0; i < live * D; i++) topic[i] = Math.cos(i);
      await exec.run(PB.writeTopics, { newParent, newSrc, srcTopic, topic, row0: live, base, dim: D }, n, { wroteRows: [{ array: topic, from: live * D, to: (live + n) * D }] });
      await exec.sync?.([topic]);
      return topic;
    };
    const { want, got, exec } = await onBoth(run, limit);
    if (limit) expect(got.byteLength).toBeGreaterThan(limit);
    expect(exec.counts.gpu.get('writeTopics')).toBe(1);
    expect(Buffer.from(got.buffer).equals(Buffer.from(want.buffer))).toBe(true);
  });
});
