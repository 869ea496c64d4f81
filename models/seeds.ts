/**
 * Seed selection for cascades and stories: the accounts a story or contagion starts from.
 * `hubs` are the accounts with the most followers, `leaves` those with the fewest (at least one),
 * `random` a uniform sample; ties break by a keyed hash of the row, so the choice is reproducible.
 */
import type { Csr } from '../sim-core/csr.ts';
import { hash } from '../sim-core/rng.ts';

export type SeedStrategy = 'hubs' | 'leaves' | 'random';

/**
 * Picks `count` distinct rows of `followers` (one row per account). Returns them in selection order
 * (best first for hubs/leaves). O(n log count) with a bounded heap.
 */
export function selectSeeds(followers: Csr, nodes: number, strategy: SeedStrategy, count: number, key: number): Int32Array {
  const k = Math.max(0, Math.min(count, nodes));
  // Score: larger is better. Pack (primary, hash tiebreak) into one float: primary first.
  const Off = followers.offsets;
  const score = (v: number): number => {
    const deg = Off[v + 1] - Off[v];
    const tie = hash(key, v) / 4294967296;
    if (strategy === 'hubs') return deg + tie;
    if (strategy === 'leaves') return deg === 0 ? -Infinity : -deg + tie;
    return tie;
  };
  // Min-heap of the k best (heap[0] is the worst kept).
  const heapV = new Int32Array(k);
  const heapS = new Float64Array(k);
  let size = 0;
  const siftDown = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < size && heapS[l] < heapS[m]) m = l;
      if (r < size && heapS[r] < heapS[m]) m = r;
      if (m === i) return;
      [heapS[i], heapS[m]] = [heapS[m], heapS[i]];
      [heapV[i], heapV[m]] = [heapV[m], heapV[i]];
      i = m;
    }
  };
  for (let v = 0; v < nodes && k > 0; v++) {
    const s = score(v);
    if (s === -Infinity) continue;
    if (size < k) {
      let i = size++;
      heapS[i] = s;
      heapV[i] = v;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (heapS[p] <= heapS[i]) break;
        [heapS[i], heapS[p]] = [heapS[p], heapS[i]];
        [heapV[i], heapV[p]] = [heapV[p], heapV[i]];
        i = p;
      }
    } else if (s > heapS[0]) {
      heapS[0] = s;
      heapV[0] = v;
      siftDown(0);
    }
  }
  const order = Array.from({ length: size }, (_, i) => i).sort((a, b) => heapS[b] - heapS[a]);
  return Int32Array.from(order, (i) => heapV[i]);
}
