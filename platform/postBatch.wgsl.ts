/**
 * `writeTopics` (postBatch.ts, which attaches this version to it) in WGSL: the new posts' topics
 * copied on the device, from their parents' rows or from postContent's output, so that neither
 * comes back to the host for it nor goes up again. A copy of 32-bit words: the same bytes as the
 * CPU's. One invocation per word of the new rows.
 */
import { ROW } from '../sim-core/gpu/kernels.wgsl.ts';
import { WORKGROUP } from '../sim-core/gpu/dispatch.ts';
import { wgslKernel } from '../sim-core/gpu/wgslKernel.ts';

export const writeTopicsGpu = wgslKernel({
  // The table's rows in use only: its capacity may pass the binding limit while they do not (at
  // 10M agents 2^25 rows of topics are 2 GiB, past NVIDIA's 2 GiB - 4).
  bind: { topic: 'range' },
  body: () => /* wgsl */ `
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
}`,
  build(a, rows) {
    const { newParent, newSrc, topic, row0, base, dim } = a;
    if (newParent.length < rows || newSrc.length < rows || topic.length < (row0 + rows) * dim || base > 0x7fffffff || dim < 1) return undefined;
    return { gridRows: rows * dim, bytes: { topic: (row0 + rows) * dim * 4 }, wrote: { topic: [row0 * dim, (row0 + rows) * dim] } };
  },
});
