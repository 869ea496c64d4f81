/**
 * `writeTopics` (postBatch.ts) in WGSL: the new posts' topics copied on the device, from their
 * parents' rows or from postContent's output, so that neither comes back to the host for it nor
 * goes up again (platform/gpuKernels.ts imports this module). A copy of 32-bit words: the same
 * bytes as the CPU's. One invocation per word of the new rows.
 */
import { registerGpuKernel, typedArgs } from '../sim-core/gpu/gpuKernels.ts';
import { ROW } from '../sim-core/gpu/kernels.wgsl.ts';
import { WORKGROUP } from '../sim-core/gpu/dispatch.ts';
import { kernels as K } from './postBatch.ts';

export const WRITE_TOPICS_WGSL = /* wgsl */ `
struct Params { rows: u32, stride: u32, row0: u32, base: u32, dim: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> new_parent: array<i32>;
@group(0) @binding(2) var<storage, read> new_src: array<i32>;
@group(0) @binding(3) var<storage, read> src_topic: array<u32>;
@group(0) @binding(4) var<storage, read_write> topic: array<u32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  let i = v / p.dim;
  let d = v - i * p.dim;
  let pid = new_parent[i];
  // A parent is a live row older than row0: this pass never writes it.
  var w: u32;
  if (pid >= 0) { w = topic[(u32(pid) - p.base) * p.dim + d]; } else { w = src_topic[u32(new_src[i]) * p.dim + d]; }
  topic[(p.row0 + i) * p.dim + d] = w;
}`;

registerGpuKernel(K.writeTopics, (a, rows, plan) => {
  const types = { newParent: Int32Array, newSrc: Int32Array, srcTopic: Float32Array, topic: Float32Array };
  if (!typedArgs(a, types)) return undefined;
  const { newParent, newSrc, srcTopic, topic } = a as { newParent: Int32Array; newSrc: Int32Array; srcTopic: Float32Array; topic: Float32Array };
  const [row0, base, D] = [a.row0 as number, a.base as number, a.dim as number];
  if (newParent.length < rows || newSrc.length < rows || topic.length < (row0 + rows) * D || base > 0x7fffffff || D < 1) return undefined;
  return {
    shader: WRITE_TOPICS_WGSL,
    gridRows: rows * D,
    params: [row0, base, D],
    // The table's rows in use only: its capacity may pass the binding limit while they do not (at
    // 10M agents 2^25 rows of topics are 2 GiB, past NVIDIA's 2 GiB - 4).
    arrays: [newParent, newSrc, srcTopic, { split: topic, partBytes: plan.partBytes, parts: 1, bytes: (row0 + rows) * D * 4 }],
    writes: [{ array: topic, from: row0 * D, to: (row0 + rows) * D }],
  };
});
