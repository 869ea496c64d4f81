/**
 * One compute pass over `rows` rows: storage buffers in, one storage buffer out, read back. The
 * building block of the GPU kernels and of the parity tests. Workgroups of 64 rows; grids past the
 * adapter's per-dimension limit are laid out in two dimensions, and the shader recovers the row as
 * `gid.x + gid.y * stride` (the `stride` it is given, in rows), skipping rows >= `rows`.
 */
import type { Gpu } from './device.ts';

export const WORKGROUP = 64;

/** Workgroup grid for `rows` rows: [x, y] with x <= the per-dimension limit, and the row stride of one y. */
export function grid(rows: number, maxPerDim: number): { x: number; y: number; stride: number } {
  const groups = Math.max(1, Math.ceil(rows / WORKGROUP));
  const x = Math.min(groups, maxPerDim);
  return { x, y: Math.ceil(groups / x), stride: x * WORKGROUP };
}

/** Bytes of each queue write of writeArray: bounds the host copy a SharedArrayBuffer view needs. */
const WRITE_BYTES = 64 << 20;

/**
 * The copy writeArray hands to writeBuffer, kept between calls: writeBuffer copies its data before
 * it returns, and a new zero-filled array per part cost an allocation, a zeroing pass and a
 * collection per 64 MB uploaded (a 10M-agent social step uploads over a gigabyte).
 */
let scratch = new Uint8Array(0);

/**
 * Writes the bytes of `a` into `buffer` at `offset` (a multiple of 4), padded to a multiple of 4
 * as writeBuffer requires, in parts of WRITE_BYTES: Dawn's writeBuffer rejects views of a
 * SharedArrayBuffer (every column and CSR array of the engine), so each part is copied, and a
 * view of a whole array past 4 GiB could not be made at all.
 */
export function writeArray(queue: GPUQueue, buffer: GPUBuffer, offset: number, a: ArrayBufferView): void {
  for (let o = 0; o < a.byteLength; o += WRITE_BYTES) {
    const bytes = Math.min(WRITE_BYTES, a.byteLength - o);
    const padded = Math.ceil(bytes / 4) * 4;
    let part = new Uint8Array(a.buffer, a.byteOffset + o, bytes);
    if (!(a.buffer instanceof ArrayBuffer) || padded !== bytes) {
      if (scratch.length < padded) scratch = new Uint8Array(Math.min(WRITE_BYTES, Math.max(padded, 2 * scratch.length)));
      scratch.set(part);
      scratch.fill(0, bytes, padded);
      part = scratch.subarray(0, padded);
    }
    queue.writeBuffer(buffer, offset + o, part);
  }
}

/**
 * Runs `shader` (entry point `main`, bindings in group 0: binding 0 a uniform block of u32 words
 * `params`, then each input in order, then the output) and returns the output's bytes.
 */
export async function runPass(
  gpu: Gpu,
  shader: string,
  o: { rows: number; params: readonly number[]; inputs: readonly ArrayBufferView[]; outputBytes: number },
): Promise<ArrayBuffer> {
  const { device } = gpu;
  const g = grid(o.rows, gpu.limits.maxComputeWorkgroupsPerDimension);
  // Uniform blocks are 16-byte aligned; the shader's first two words are rows and stride.
  const words = [o.rows, g.stride, ...o.params];
  const uniform = new Uint32Array(Math.ceil(words.length / 4) * 4);
  uniform.set(words);
  const made: GPUBuffer[] = [];
  const buffer = (size: number, usage: number) => {
    const b = device.createBuffer({ size: Math.max(16, Math.ceil(size / 4) * 4), usage });
    made.push(b);
    return b;
  };
  const ub = buffer(uniform.byteLength, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
  device.queue.writeBuffer(ub, 0, uniform);
  const ins = o.inputs.map((a) => {
    const b = buffer(a.byteLength, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST);
    writeArray(device.queue, b, 0, a);
    return b;
  });
  const out = buffer(o.outputBytes, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
  const read = buffer(o.outputBytes, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
  const module = device.createShaderModule({ code: shader });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const enc = device.createCommandEncoder();
  recordPass(enc, pipeline, bindGroup(device, pipeline.getBindGroupLayout(0), [ub, ...ins, out]), g);
  enc.copyBufferToBuffer(out, 0, read, 0, read.size);
  device.queue.submit([enc.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const bytes = read.getMappedRange().slice(0, o.outputBytes);
  read.unmap();
  for (const b of made) b.destroy();
  return bytes;
}

/** Group 0 of a pipeline: buffers (or ranges) bound in order. */
export function bindGroup(device: GPUDevice, layout: GPUBindGroupLayout, buffers: ReadonlyArray<GPUBuffer | GPUBufferBinding>): GPUBindGroup {
  return device.createBindGroup({ layout, entries: buffers.map((b, i) => ({ binding: i, resource: 'buffer' in b ? b : { buffer: b } })) });
}

/**
 * Records one compute pass of `pipeline` over grid `g` with `bind` as group 0; with `timestamps`,
 * the device's clock at the pass's start and end goes to queries 0 and 1 of that set.
 */
export function recordPass(enc: GPUCommandEncoder, pipeline: GPUComputePipeline, bind: GPUBindGroup, g: { x: number; y: number }, timestamps?: GPUQuerySet): void {
  const pass = enc.beginComputePass(timestamps ? { timestampWrites: { querySet: timestamps, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } } : undefined);
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bind);
  pass.dispatchWorkgroups(g.x, g.y);
  pass.end();
}
