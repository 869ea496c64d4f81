/**
 * The counter RNG on WebGPU gives the u32 outputs of rng.ts, bit for bit: the foundation of
 * byte-identical CPU and GPU runs. Runs on any adapter (lavapipe in CI); skips with one line when
 * there is none.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { hash, keyOf, streamOf } from '../../../sim-core/rng.ts';
import { RNG_WGSL, keyWords } from '../../../sim-core/gpu/rng.wgsl.ts';
import { grid, runPass, WORKGROUP } from '../../../sim-core/gpu/dispatch.ts';
import { gpuOrSkip } from '../../gpuHelpers.ts';

const gpu = await gpuOrSkip('counter RNG parity on WebGPU');
afterAll(() => gpu?.close());

const SHADER = /* wgsl */ `
${RNG_WGSL}
struct Params { rows: u32, stride: u32, key_lo: u32, key_hi: u32, draw: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> row_of: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x + gid.y * p.stride;
  if (i >= p.rows) { return; }
  out[i] = rng_hash(p.key_lo, p.key_hi, row_of[i], p.draw);
}`;

async function gpuHashes(key: number, rows: Uint32Array, draw: number): Promise<Uint32Array> {
  const bytes = await runPass(gpu!, SHADER, { rows: rows.length, params: [...keyWords(key), draw], inputs: [rows], outputBytes: rows.byteLength });
  return new Uint32Array(bytes);
}

/** Indices where the GPU and CPU disagree (at most 5), so a failure shows where. */
function mismatches(key: number, rows: Uint32Array, draw: number, got: Uint32Array): string[] {
  const bad: string[] = [];
  for (let i = 0; i < rows.length && bad.length < 5; i++) {
    const want = hash(key, rows[i], draw);
    if (got[i] !== want) bad.push(`row ${rows[i]}: gpu ${got[i]} cpu ${want}`);
  }
  return bad;
}

describe.skipIf(!gpu)(`counter RNG on WebGPU (${gpu?.adapter})`, () => {
  it('equals rng.ts for 2^20 consecutive rows and the extreme rows, over keys of every width and several draws', async () => {
    const keys = [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1, keyOf(1, streamOf('act'), 5), keyOf(2 ** 40 + 3, streamOf('activate'), 2 ** 33)];
    const consecutive = Uint32Array.from({ length: 1 << 20 }, (_, i) => i);
    const extremes = Uint32Array.from([2 ** 31 - 1, 2 ** 31, 2 ** 32 - 2, 2 ** 32 - 1, 0x7feb352d, 0x9e3779b9]);
    for (const key of keys) {
      for (const draw of [0, 1, 7, 2 ** 20]) {
        const rows = key === keys[5] && draw === 0 ? consecutive : extremes;
        expect(mismatches(key, rows, draw, await gpuHashes(key, rows, draw)), `key ${key} draw ${draw}`).toEqual([]);
      }
    }
  });

  it('covers grids past the 65,535-workgroup dimension limit (2-D dispatch), every row once', async () => {
    const g = grid(gpu!.limits.maxComputeWorkgroupsPerDimension * WORKGROUP + 100, gpu!.limits.maxComputeWorkgroupsPerDimension);
    expect(g.y).toBe(2);
    const n = gpu!.limits.maxComputeWorkgroupsPerDimension * WORKGROUP + 100;
    const rows = Uint32Array.from({ length: n }, (_, i) => i);
    const key = keyOf(7, streamOf('grid'), 0);
    const got = await gpuHashes(key, rows, 3);
    expect(mismatches(key, rows, 3, got)).toEqual([]);
  });

  it('opens the device with the adapter limits, not the WebGPU defaults', () => {
    expect(gpu!.adapter.length).toBeGreaterThan(0);
    expect(gpu!.device.limits.maxStorageBufferBindingSize).toBe(gpu!.limits.maxStorageBufferBindingSize);
    expect(gpu!.device.limits.maxBufferSize).toBe(gpu!.limits.maxBufferSize);
  });
});

describe('workgroup grid', () => {
  it('lays rows out in one dimension while it fits, then in two', () => {
    expect(grid(1, 65535)).toEqual({ x: 1, y: 1, stride: 64 });
    expect(grid(65535 * 64, 65535)).toEqual({ x: 65535, y: 1, stride: 65535 * 64 });
    expect(grid(65535 * 64 + 1, 65535)).toEqual({ x: 65535, y: 2, stride: 65535 * 64 });
    expect(grid(1000, 4)).toEqual({ x: 4, y: 4, stride: 256 });
  });
});
