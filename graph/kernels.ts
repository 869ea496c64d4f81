/**
 * The Barabasi-Albert generator's attachment as a kernel (graph/generators.ts `barabasiAlbert`),
 * so its nodes can be drawn on several threads with the bytes of the one-thread loop.
 *
 * Node t's draws are keyed by (key, t, draw) and pick uniformly from the endpoint list of the
 * edges before it: position p is edge p >> 1's source (a known function of the edge index) or its
 * target (drawn by an earlier node). A thread that meets a target not yet drawn draws that earlier
 * node itself (the same draws give the same targets, so two threads that both draw it write the
 * same values). A node's targets are final once written; the last one is written with
 * Atomics.store and read with Atomics.load, so a thread that sees it sees the node's others.
 */
import { kernel, kernelList } from '../sim-core/kernel.ts';
import { uniform } from '../sim-core/rng.ts';

/** Unset targets in `dst` (the host fills them before the kernel runs). */
export const UNDRAWN = -1;

/** The node that drew edge k: node m drew edges 0..m-1, node t > m edges m + (t - m - 1) m ... */
const nodeOf = (k: number, m: number) => (k < m ? m : m + 1 + Math.floor((k - m) / m));

/** Draws node t's m targets into dst (and whatever earlier nodes they need), unless done. */
function drawNode(dst: Int32Array, key: number, m: number, t: number): void {
  const first = m + (t - m - 1) * m;
  if (Atomics.load(dst, first + m - 1) !== UNDRAWN) return;
  const start = 2 * m * (t - m);
  let chosen = 0;
  let draw = 0;
  while (chosen < m) {
    const p = Math.floor(uniform(key, t, draw++) * start);
    const k = Math.floor(p / 2);
    let v: number;
    if (p % 2 === 0) v = nodeOf(k, m);
    else if (k < m) v = k;
    else {
      v = dst[k];
      if (v === UNDRAWN) {
        drawNode(dst, key, m, nodeOf(k, m));
        v = dst[k];
      }
    }
    let seen = false;
    for (let j = 0; j < chosen && !seen; j++) seen = dst[first + j] === v;
    if (seen) continue;
    if (chosen === m - 1) Atomics.store(dst, first + chosen, v);
    else dst[first + chosen] = v;
    chosen++;
  }
}

/**
 * Nodes [start, end) of a BA graph with m edges per node: src[k] = the node of edge k, dst[k] its
 * target. Edges 0..m-1 (node m to 0..m-1) are set by the host, every other dst[k] = UNDRAWN.
 */
const attachBA = kernel({ reads: {}, writes: { src: 'i32', dst: 'i32' }, params: ['m', 'key'] }, (a, start, end): void => {
  const { src, dst, m, key } = a;
  for (let t = Math.max(start, m + 1); t < end; t++) {
    drawNode(dst, key, m, t);
    const first = m + (t - m - 1) * m;
    for (let j = 0; j < m; j++) src[first + j] = t;
  }
});

export const kernels = kernelList(import.meta.url, { attachBA });
