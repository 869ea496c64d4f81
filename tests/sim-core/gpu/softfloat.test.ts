/**
 * The software f32 of sim-core/gpu/softfloat.wgsl.ts against the CPU's Math.fround(a op b), bit for
 * bit: edge values (zeros, subnormals, the normal boundary, overflow), random bit patterns over the
 * whole finite range, and opinion-like values with heavy cancellation. Skips with one line when no
 * adapter exists.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { hash, keyOf, streamOf } from '../../../sim-core/rng.ts';
import { RNG_WGSL } from '../../../sim-core/gpu/rng.wgsl.ts';
import { SOFTFLOAT_WGSL } from '../../../sim-core/gpu/softfloat.wgsl.ts';
import { gpuOrSkip, opsShader, runOps } from '../../gpuHelpers.ts';

const gpu = await gpuOrSkip('software f32 against the CPU');
afterAll(() => gpu?.close());

const OPS = ['add', 'sub', 'mul', 'div', 'lt', 'le', 'from_u32'] as const;
type Op = (typeof OPS)[number];

const SHADER = opsShader(`${RNG_WGSL}\n${SOFTFLOAT_WGSL}`, [
  'f_add(a, b)', 'f_sub(a, b)', 'f_mul(a, b)', 'f_div(a, b)', 'select(0u, 1u, f_lt(a, b))', 'select(0u, 1u, f_le(a, b))', 'f_from_u32(a)',
]);
const buf = new DataView(new ArrayBuffer(4));
const toF = (bits: number) => (buf.setUint32(0, bits), buf.getFloat32(0));
const toBits = (v: number) => (buf.setFloat32(0, v), buf.getUint32(0));

/** What the CPU gives: the bits of Math.fround(a op b) (a boolean as 0/1; from_u32 reads a as an integer). */
function cpu(op: Op, a: number, b: number): number {
  const x = toF(a);
  const y = toF(b);
  switch (op) {
    case 'add': return toBits(Math.fround(x + y));
    case 'sub': return toBits(Math.fround(x - y));
    case 'mul': return toBits(Math.fround(x * y));
    case 'div': return toBits(Math.fround(x / y));
    case 'lt': return x < y ? 1 : 0;
    case 'le': return x <= y ? 1 : 0;
    case 'from_u32': return toBits(Math.fround(a));
  }
}

/** Rows [a, b, op] with finite a, b (b != 0 for div). */
async function compare(rows: Array<[number, number, Op]>): Promise<string[]> {
  const got = await runOps(gpu!, SHADER, rows.map(([a, b, op]) => [a, b, OPS.indexOf(op)] as const));
  const bad: string[] = [];
  rows.forEach(([a, b, op], i) => {
    const want = cpu(op, a >>> 0, b >>> 0);
    if (got[i] !== want && bad.length < 8) bad.push(`${op}(${toF(a)} [${(a >>> 0).toString(16)}], ${toF(b)} [${(b >>> 0).toString(16)}]): gpu ${got[i].toString(16)} cpu ${want.toString(16)}`);
  });
  return bad;
}

const finite = (bits: number) => ((bits >>> 23) & 0xff) !== 0xff;
const nonzero = (bits: number) => (bits & 0x7fffffff) !== 0;

describe.skipIf(!gpu)(`software f32 on WebGPU (${gpu?.adapter})`, () => {
  it('equals the CPU on edge values: zeros, subnormals, the normal boundary, one, overflow', async () => {
    const edge = [
      0, 0x80000000, 1, 0x80000001, 2, 3, 0x007fffff, 0x807fffff, 0x00400000, 0x00800000, 0x80800000, 0x00800001, 0x01000000,
      0x3f800000, 0xbf800000, 0x3f800001, 0x3f7fffff, 0x40000000, 0x3f000000, 0x34000000, 0x33800000, 0x7f7fffff, 0xff7fffff, 0x7f000000,
      0x3eaaaaab, 0x3dcccccd, 0x0d800000, 0x32800000, 0x4b800000, 0x4b7fffff,
    ];
    const rows: Array<[number, number, Op]> = [];
    for (const a of edge) for (const b of edge) for (const op of OPS) if (op !== 'from_u32' && (op !== 'div' || nonzero(b))) rows.push([a, b, op]);
    expect(await compare(rows)).toEqual([]);
  });

  it('equals the CPU on 400,000 random finite bit patterns', async () => {
    const key = keyOf(11, streamOf('softfloat'), 0);
    const rows: Array<[number, number, Op]> = [];
    for (let i = 0; rows.length < 400_000; i++) {
      const a = hash(key, i, 0);
      let b = hash(key, i, 1);
      // Half the pairs get exponents within 30 places of each other, where alignment and
      // cancellation happen; the rest span the whole range.
      if (i & 1) b = (b & 0x807fffff) | ((((a >>> 23) & 0xff) + (hash(key, i, 3) % 61) - 30) & 0xff) << 23;
      const op = (['add', 'sub', 'mul', 'div', 'lt', 'le'] as const)[hash(key, i, 2) % 6];
      if (finite(a) && finite(b) && (op !== 'div' || nonzero(b))) rows.push([a, b, op]);
    }
    expect(await compare(rows)).toEqual([]);
  });

  it('equals the CPU on opinion-like values near each other and on integers to f32', async () => {
    const key = keyOf(12, streamOf('softfloat'), 0);
    const rows: Array<[number, number, Op]> = [];
    for (let i = 0; i < 100_000; i++) {
      const x = toBits(Math.fround((hash(key, i, 0) / 2 ** 32) * 2 - 1));
      // y within a few ulps to a few percent of x: sums and differences cancel.
      const y = (x + ((hash(key, i, 1) % 2001) - 1000) * (i % 3 === 0 ? 1 : 997)) >>> 0;
      for (const op of ['add', 'sub', 'mul', 'div'] as const) if (finite(y) && (op !== 'div' || nonzero(y))) rows.push([x, y, op]);
      rows.push([hash(key, i, 2) >>> (i % 32), 0, 'from_u32']);
    }
    expect(await compare(rows)).toEqual([]);
  });
});
