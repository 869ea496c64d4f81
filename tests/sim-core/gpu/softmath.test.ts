/**
 * The WGSL float32 exp2, exp, log2 and pow (sim-core/gpu/softmath.wgsl.ts) against their CPU
 * definitions (sim-core/f32math.ts), bit for bit. Skips with one line when no adapter exists.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { hash } from '../../../sim-core/rng.ts';
import { bitsOf32, exp2f32, expf32, fromBits32, log2f32, normalPairFromHashes32, powf32, sinCosTurns32, sqrtf32 } from '../../../sim-core/f32math.ts';
import { RNG_WGSL } from '../../../sim-core/gpu/rng.wgsl.ts';
import { SOFTFLOAT_WGSL } from '../../../sim-core/gpu/softfloat.wgsl.ts';
import { SOFTMATH_WGSL } from '../../../sim-core/gpu/softmath.wgsl.ts';
import { gpuOrSkip, opsShader, runOps } from '../../gpuHelpers.ts';

const gpu = await gpuOrSkip('float32 math on the GPU against the CPU');
afterAll(() => gpu?.close());

const SHADER = opsShader(`${RNG_WGSL}\n${SOFTFLOAT_WGSL}\n${SOFTMATH_WGSL}`, ['f_exp2(a)', 'f_exp(a)', 'f_log2(a)', 'f_pow(a, b)']);
const CPU = [(a: number) => exp2f32(a), (a: number) => expf32(a), (a: number) => log2f32(a), (a: number, b: number) => powf32(a, b)];
const NAMES = ['exp2', 'exp', 'log2', 'pow'];

describe.skipIf(!gpu)(`float32 math on WebGPU (${gpu?.adapter})`, () => {
  it('exp2, exp, log2 and pow give the CPU bits on edge values and 200,000 random arguments', async () => {
    const rows: Array<[number, number, number]> = [];
    const edge = [0, -0, 0.5, -0.5, 1.5, -1.5, 1, -1, 2, 127, 127.99, 128, -126, -126.01, -125.5, 88.7, -87.3, 1e-30, 2 ** -149, 2 ** -126, 3.4e38, Math.SQRT2, Math.SQRT1_2];
    for (const a of edge) {
      rows.push([bitsOf32(a), 0, 0], [bitsOf32(a), 0, 1]);
      if (a > 0) for (const b of [0, 0.3, 1, 1.3, -2]) rows.push([bitsOf32(a), bitsOf32(b), 3]);
      if (a >= 0) rows.push([bitsOf32(a), 0, 2]);
    }
    for (let i = 0; i < 200_000; i++) {
      const u = hash(21, i) / 2 ** 32;
      const op = i % 4;
      // exp2 over (-130, 130), exp over (-90, 90), log2 and pow over positive bit patterns.
      if (op === 0) rows.push([bitsOf32(u * 260 - 130), 0, 0]);
      else if (op === 1) rows.push([bitsOf32(u * 180 - 90), 0, 1]);
      else if (op === 2) rows.push([hash(22, i) % 0x7f800000, 0, 2]);
      else rows.push([bitsOf32(u * 50), bitsOf32((hash(23, i) / 2 ** 32) * 4 - 1), 3]);
    }
    const got = await runOps(gpu!, SHADER, rows);
    const bad: string[] = [];
    rows.forEach(([a, b, op], i) => {
      const want = bitsOf32(CPU[op](fromBits32(a), fromBits32(b)));
      if (got[i] !== want && bad.length < 8) bad.push(`${NAMES[op]}(${fromBits32(a)}, ${fromBits32(b)}): gpu ${fromBits32(got[i])} cpu ${fromBits32(want)}`);
    });
    expect(bad).toEqual([]);
  });

  it('sqrt, sin and cos of a turn and the normal pair give the CPU bits', async () => {
    const shader = opsShader(`${RNG_WGSL}\n${SOFTFLOAT_WGSL}\n${SOFTMATH_WGSL}`, ['f_sqrt(a)', 'f_sin_cos_turns(a).x', 'f_sin_cos_turns(a).y', 'f_normal_pair(a, b).x', 'f_normal_pair(a, b).y']);
    const two = new Float32Array(2);
    const pair = (fn: () => void, j: number) => {
      fn();
      return bitsOf32(two[j]);
    };
    const cpu = [
      (a: number) => bitsOf32(sqrtf32(fromBits32(a))),
      (a: number) => pair(() => sinCosTurns32(a, two, 0), 0),
      (a: number) => pair(() => sinCosTurns32(a, two, 0), 1),
      (a: number, b: number) => pair(() => normalPairFromHashes32(a, b, two, 0), 0),
      (a: number, b: number) => pair(() => normalPairFromHashes32(a, b, two, 0), 1),
    ];
    const rows: Array<[number, number, number]> = [];
    for (const x of [0, 0x80000000, 1, 0x7fffff, 0x800000, 0x3f800000, 0x40800000, 0x7f7fffff, 0x7f800000, 0x7fc00000, 0xbf800000]) rows.push([x, 0, 0]);
    for (const h of [0, 1, 2 ** 29, 2 ** 29 + 1, 2 ** 30, 2 ** 31, 3 * 2 ** 30, 2 ** 32 - 1]) for (const op of [1, 2, 3, 4]) rows.push([h, h ^ 0x55555555, op], [0, h, op]);
    for (let i = 0; i < 150_000; i++) rows.push([i % 5 === 0 ? hash(24, i) % 0x7f800000 : hash(24, i), hash(25, i), i % 5]);
    const got = await runOps(gpu!, shader, rows);
    const bad: string[] = [];
    rows.forEach(([a, b, op], i) => {
      const want = cpu[op](a, b);
      if (got[i] !== want && bad.length < 8) bad.push(`${['sqrt', 'cos', 'sin', 'normal.0', 'normal.1'][op]}(${a}, ${b}): gpu ${fromBits32(got[i])} cpu ${fromBits32(want)}`);
    });
    expect(bad).toEqual([]);
  });
});
