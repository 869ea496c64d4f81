/**
 * `recordStatics` (recsys/kernels.ts) in WGSL: the static fields of the feed's records for the
 * posts added since the last step, written on the device from the post columns and topics there
 * (the topics of apply's new posts stay on the device: platform/postBatch.wgsl.ts), so that the
 * records' new rows need not go up. recsys/kernels.ts attaches it to the declaration.
 *
 * The quantised topic (records.ts `quantise`: Math.round(127 x), x clamped to [-1, 1]) in integer
 * arithmetic, exactly: a float32 |x| < 1 is m 2^-s with m < 2^24 and s >= 24, so 127 |x| is
 * k 2^-s with k = 127 m < 2^31, and Math.round (halves up, towards +infinity) of +-k 2^-s is
 * floor((k + 2^(s-1)) / 2^s) for +, minus ceil((k - 2^(s-1)) / 2^s) for -. NaN gives 0, as the
 * CPU's Int8Array store of NaN does.
 */
import { ROW } from '../sim-core/gpu/kernels.wgsl.ts';
import { WORKGROUP } from '../sim-core/gpu/dispatch.ts';
import { wgslKernel } from '../sim-core/gpu/wgslKernel.ts';
import { TOPIC_SCALE } from './recommender.ts';

/** quantise_bits(x): records.ts quantise of the float32 with bits x, as an i8 in the low byte. */
export const QUANTISE_WGSL = /* wgsl */ `
fn quantise_bits(x: u32) -> u32 {
  let a = x & 0x7fffffffu;
  if (a > 0x7f800000u) { return 0u; }
  var q = 0u;
  if (a >= 0x3f800000u) {
    q = ${TOPIC_SCALE}u;
  } else {
    let e = a >> 23u;
    var m = a & 0x7fffffu;
    var s = 149u;
    if (e != 0u) {
      m = m | 0x800000u;
      s = 150u - e;
    }
    let k = ${TOPIC_SCALE}u * m;
    if (s < 32u) {
      let h = 1u << (s - 1u);
      if ((x & 0x80000000u) == 0u) {
        q = (k + h) >> s;
      } else if (k > h) {
        q = (k - h + (1u << s) - 1u) >> s;
      }
    }
  }
  if ((x & 0x80000000u) != 0u) { q = u32(-i32(q)); }
  return q & 0xffu;
}`;

export const recordStaticsGpu = wgslKernel({
  // The topics of the rows in use only, as writeTopics binds them (platform/postBatch.wgsl.ts);
  // recQ is a view of rec's buffer, whose bytes the shader writes through rec.
  bind: { topic: 'range', recQ: 'none' },
  body: () => /* wgsl */ `
${QUANTISE_WGSL}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
${ROW}
  let r = p.from_ + v;
  let at = r * p.stride_;
  rec[at + 1u] = step[r];
  rec[at + 2u] = author[r];
  rec[at + 3u] = prev_by_author[r];
  // The quantised topic as bytes from word at + 4 on; a last word's bytes past the topic keep
  // what they held, as the CPU's byte stores leave them.
  for (var w = 0u; w * 4u < p.dim; w++) {
    let bytes = min(4u, p.dim - w * 4u);
    var word = 0u;
    if (bytes < 4u) { word = u32(rec[at + 4u + w]) & (0xffffffffu << (bytes * 8u)); }
    for (var b = 0u; b < bytes; b++) { word = word | (quantise_bits(topic[r * p.dim + w * 4u + b]) << (b * 8u)); }
    rec[at + 4u + w] = i32(word);
  }
}`,
  build(a, rows) {
    const { step, author, prevByAuthor, topic, rec, from, dim, stride } = a;
    const end = from + rows;
    if ([step, author, prevByAuthor].some((c) => c.length < end) || topic.length < end * dim || rec.length < end * stride || stride < 4 + Math.ceil(dim / 4)) return undefined;
    return { gridRows: rows, bytes: { topic: end * dim * 4 }, wrote: { rec: [from * stride, end * stride] } };
  },
});
