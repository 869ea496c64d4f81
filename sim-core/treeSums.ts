/**
 * The opinion statistics' sums (models/opinion.ts `opinionStats`), in a fixed summation tree so
 * that the webgpu backend computes them on the device with the CPU's bits (sim-core/gpu/
 * treeSums.wgsl.ts) and reads back a few words per group instead of the opinion column.
 */
import { kernel, kernelList } from './kernel.ts';
import { treeCentralSumsGpu, treeSumGpu } from './gpu/treeSums.wgsl.ts';
import { TREE_BLOCK, TREE_BLOCKS, TREE_GROUP } from './treeShape.ts';

function treeChunk(start: number, name: string): void {
  if (start % TREE_GROUP !== 0) throw new Error(`${name}: a chunk starts at row ${start}, not at a multiple of ${TREE_GROUP} (pass chunkRows as a multiple of TREE_GROUP)`);
}

/** Block sums b[0 .. TREE_BLOCKS) added pairwise into b[0] (treeShape.ts). */
function treeAdd(b: Float64Array): number {
  for (let w = TREE_BLOCKS / 2; w >= 1; w /= 2) for (let t = 0; t < w; t++) b[t] += b[t + w];
  return b[0];
}

/**
 * Per group of TREE_GROUP rows: [sum x (the tree), lowest x, highest x, 1 if the group holds a NaN
 * or an infinity (its sum and extremes are then meaningless) else 0].
 */
const treeSum = kernel({ reads: { x: 'num' }, writes: {}, params: [] }, (a, start, end): number[] => {
  treeChunk(start, 'treeSum');
  const X = a.x;
  const out: number[] = [];
  const blocks = new Float64Array(TREE_BLOCKS);
  for (let g = start; g < end; g += TREE_GROUP) {
    let lo = Infinity;
    let hi = -Infinity;
    let bad = 0;
    for (let t = 0; t < TREE_BLOCKS; t++) {
      const from = Math.min(g + t * TREE_BLOCK, end);
      const to = Math.min(from + TREE_BLOCK, end);
      let s = 0;
      for (let i = from; i < to; i++) {
        const v = X[i];
        s += v;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      // A block of finite f32 values cannot overflow an f64 sum: only a NaN or an infinity makes it non-finite.
      if (!Number.isFinite(s)) bad = 1;
      blocks[t] = s;
    }
    out.push(treeAdd(blocks), lo, hi, bad);
  }
  return out;
}, treeSumGpu);

/** Per group of TREE_GROUP rows: [sum d, sum d^2, sum d^3, sum d^4] with d = x - c, each the tree of its terms. */
const treeCentralSums = kernel({ reads: { x: 'num' }, writes: {}, params: ['c'] }, (a, start, end): number[] => {
  treeChunk(start, 'treeCentralSums');
  const { x: X, c } = a;
  const out: number[] = [];
  const b1 = new Float64Array(TREE_BLOCKS);
  const b2 = new Float64Array(TREE_BLOCKS);
  const b3 = new Float64Array(TREE_BLOCKS);
  const b4 = new Float64Array(TREE_BLOCKS);
  for (let g = start; g < end; g += TREE_GROUP) {
    for (let t = 0; t < TREE_BLOCKS; t++) {
      const from = Math.min(g + t * TREE_BLOCK, end);
      const to = Math.min(from + TREE_BLOCK, end);
      let d1 = 0;
      let d2 = 0;
      let d3 = 0;
      let d4 = 0;
      for (let i = from; i < to; i++) {
        const d = X[i] - c;
        const dd = d * d;
        d1 += d;
        d2 += dd;
        d3 += dd * d;
        d4 += dd * dd;
      }
      b1[t] = d1;
      b2[t] = d2;
      b3[t] = d3;
      b4[t] = d4;
    }
    out.push(treeAdd(b1), treeAdd(b2), treeAdd(b3), treeAdd(b4));
  }
  return out;
}, treeCentralSumsGpu);

export const kernels = kernelList(import.meta.url, { treeSum, treeCentralSums });
