/**
 * The opinion statistics' sums on the device (sim-core/gpu/treeSums.wgsl.ts, with the software f64
 * addition of softf64.wgsl.ts) against the CPU, bit for bit: `d_add` against JavaScript's f64
 * addition on pairs chosen for every rounding path, then `treeSum` and `treeCentralSums` through
 * the webgpu executor against the CPU executor on columns with subnormal, huge, signed-zero and
 * cancelling values. Skips with one line when no adapter exists.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../../sim-core/cpuExecutor.ts';
import { hash } from '../../../sim-core/rng.ts';
import { sharedArray } from '../../../sim-core/table.ts';
import { GpuExecutor } from '../../../sim-core/gpu/executor.ts';
import { kernels as TK } from '../../../sim-core/treeSums.ts';
import { TREE_GROUP } from '../../../sim-core/treeShape.ts';
import { runPass } from '../../../sim-core/gpu/dispatch.ts';
import { RNG_WGSL } from '../../../sim-core/gpu/rng.wgsl.ts';
import { SOFTFLOAT_WGSL } from '../../../sim-core/gpu/softfloat.wgsl.ts';
import { SOFTF64_WGSL } from '../../../sim-core/gpu/softf64.wgsl.ts';
import { gpuOrSkip, rowShader } from '../../gpuHelpers.ts';

const gpu = await gpuOrSkip('the opinion statistics sums in WGSL against the CPU');
afterAll(() => gpu?.close());

/** Per row [a high, a low, b high, b low] (two f64): the words of d_add(a, b) (a and b normalised first). */
const ADD_SHADER = rowShader(
  `${RNG_WGSL}\n${SOFTFLOAT_WGSL}\n${SOFTF64_WGSL}`,
  `  let w = d_to_f64(d_add(d_from_f64(ab[4u * i], ab[4u * i + 1u]), d_from_f64(ab[4u * i + 2u], ab[4u * i + 3u])));
  out[2u * i] = w.x;
  out[2u * i + 1u] = w.y;`,
);

const f64 = new Float64Array(1);
const w64 = new Uint32Array(f64.buffer);
const words = (x: number) => ((f64[0] = x), [w64[1], w64[0]]);
const bits = (x: number) => words(x).join(':');

describe.skipIf(!gpu)(`opinion statistics sums on WebGPU (${gpu?.adapter})`, () => {
  it('d_add equals the f64 sum: every exponent gap, cancellation, carries, ties to even, signed zeros', async () => {
    const pairs: Array<[number, number]> = [];
    const sig = (i: number, k: number) => 1 + hash(71, i, k) / 2 ** 32 + (hash(72, i, k) >>> 11) / 2 ** 53;
    for (let i = 0; i < 12_000; i++) {
      // Gaps 0-70 (past the 56 bits the sum keeps), both signs, exponents around 2^-300 .. 2^300.
      const gap = i % 71;
      const e = (hash(73, i) % 600) - 300;
      const a = sig(i, 0) * 2 ** e * (hash(74, i) % 2 ? -1 : 1);
      const b = sig(i, 1) * 2 ** (e - gap) * (hash(75, i) % 3 ? -1 : 1);
      pairs.push(i % 2 ? [a, b] : [b, a]);
    }
    for (let i = 0; i < 2_000; i++) {
      const a = sig(i, 2) * 2 ** ((i % 40) - 20);
      // Near-cancellation: b = -(a with its last 1-20 bits changed); and exact cancellation.
      const ulp = 2 ** (Math.floor(Math.log2(Math.abs(a))) - 52);
      pairs.push([a, -(a + ((hash(76, i) % 2 ** 20) - 2 ** 19) * ulp)], [a, -a], [-a, a]);
      // Ties: a + half an ulp (even and odd a), and a + half an ulp + a bit far below (rounds up).
      pairs.push([a, ulp / 2], [a + ulp, ulp / 2], [a, ulp / 2 + ulp * 2 ** -40], [-a, -ulp / 2]);
      // Carries to the next binade.
      pairs.push([2 ** 20 * (2 - 2 ** -52), 2 ** 20 * 2 ** -52 * (1 + (i % 3))], [1.5 * 2 ** (i % 30), 1.5 * 2 ** (i % 30)]);
      // f32 values (what the sums add) against f64 partial sums.
      pairs.push([Math.fround(Math.sin(i)), sig(i, 3) * 1e3], [Math.fround(2 ** -140 * (i + 1)), Math.fround(2 ** -149 * i)]);
    }
    pairs.push([0, 0], [-0, 0], [0, -0], [-0, -0], [0, 3], [-0, -3], [5, 0], [5, -0], [-5, 0]);
    const input = Uint32Array.from(pairs.flatMap(([a, b]) => [...words(a), ...words(b)]));
    const out = new Uint32Array(await runPass(gpu!, ADD_SHADER, { rows: pairs.length, params: [], inputs: [input], outputBytes: pairs.length * 8 }));
    let ties = 0;
    let exactZeros = 0;
    pairs.forEach(([a, b], i) => {
      const got = `${out[2 * i]}:${out[2 * i + 1]}`;
      if (got !== bits(a + b)) throw new Error(`d_add(${a}, ${b}): ${got}, the CPU ${bits(a + b)} (${a + b})`);
      if (a + b === 0 && a !== 0) exactZeros++;
      const ulp = a !== 0 ? 2 ** (Math.floor(Math.log2(Math.abs(a))) - 52) : 0;
      if (Math.abs(b) === ulp / 2) ties++;
    });
    expect(ties).toBeGreaterThan(1000);
    expect(exactZeros).toBeGreaterThan(1000);
  });

  it('treeSum and treeCentralSums: the same bits on the device as on the CPU, only their words read back', async () => {
    const n = 5 * TREE_GROUP + 1234;
    const x = sharedArray('f32', n);
    for (let i = 0; i < n; i++) {
      const k = hash(77, i) % 10;
      // Mostly opinions in [-1, 1]; some subnormal, huge, signed-zero and repeated values.
      x[i] = k === 0 ? 2 ** -149 * (hash(78, i) % 1000) : k === 1 ? (i % 2 ? -0 : 0) : k === 2 ? 3e37 * (i % 3 === 0 ? -1 : 1) : k === 3 ? 0.7 : Math.sin(i) * 0.9;
    }
    const cpu = createExecutor(2);
    const inner = createExecutor(1);
    const exec = new GpuExecutor(gpu!, inner);
    try {
      const opts = { chunkRows: 16 * TREE_GROUP };
      const want = (await cpu.run(TK.treeSum, { x }, n, opts)).flat();
      const got = (await exec.run(TK.treeSum, { x }, n, opts)).flat();
      expect(got.map(bits)).toEqual(want.map(bits));
      for (const c of [want.filter((_, i) => i % 4 === 0).reduce((s, v) => s + v, 0) / n, 0.7, -1.5e-300, 0]) {
        const a = (await cpu.run(TK.treeCentralSums, { x, c }, n, opts)).flat();
        const b = (await exec.run(TK.treeCentralSums, { x, c }, n, opts)).flat();
        expect(b.map(bits), `centre ${c}`).toEqual(a.map(bits));
      }
      // A NaN and an infinity flag their groups on the device too.
      x[100] = NaN;
      x[3 * TREE_GROUP + 5] = Infinity;
      exec.hostWrote(x);
      const flags = (await exec.run(TK.treeSum, { x }, n, opts)).flat().filter((_, i) => i % 4 === 3);
      expect(flags).toEqual([1, 0, 0, 1, 0, 0]);
      expect(exec.counts.gpu.get('treeSum')).toBe(2);
      expect(exec.counts.gpu.get('treeCentralSums')).toBe(4);
      expect(exec.counts.cpu.size).toBe(0);
      // What came back: the groups' words, not the column.
      expect(exec.transfers.get('treeSum')?.down).toBe(2 * 6 * 5 * 4);
      expect(exec.transfers.get('treeCentralSums')?.down).toBe(4 * 6 * 8 * 4);
    } finally {
      await cpu.close();
      await inner.close();
    }
  });
});
