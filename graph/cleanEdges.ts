/**
 * Cleaning of an edge list with dense ids, for directed and undirected graphs alike: self loops
 * are dropped; duplicate edges are dropped, keeping the first occurrence in file order (directed:
 * same src and dst; undirected: same pair in either orientation). Kept edges stay in file order
 * and orientation; for undirected graphs the caller symmetrises.
 */
import { sharedArray } from '../sim-core/table.ts';

/** An edge list with dense ids 0..nodes-1, cleaned. */
export interface DenseEdges {
  /** Number of distinct nodes after remapping, or the given agent count. */
  nodes: number;
  /** Edge k is src[k] -> dst[k], dense ids 0..nodes-1; on SharedArrayBuffer. */
  src: Int32Array;
  dst: Int32Array;
  /** externalIds[dense] = id in the file; null when ids were used as-is (`agents` given). */
  externalIds: Float64Array | string[] | null;
  directed: boolean;
  /** Edges removed while loading. */
  dropped: { selfLoops: number; duplicates: number };
}

function pairHash(x: number, y: number): number {
  let h = Math.imul(x, 0x9e3779b1) ^ y;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * Drops self loops and duplicates (first occurrence kept, file order preserved) and copies the
 * kept edges into exact-length shared arrays.
 *
 * Files sorted by (source, target) are recognised in one pass. Otherwise edges are partitioned by
 * the top bits of a hash of their (ordered, or for undirected sorted) endpoint pair into buckets of
 * about 16K edges, keeping file order inside each bucket, and each bucket is deduplicated with a
 * small open-addressing table that stays in cache: O(m), no per-node arrays, no sorting.
 */
export function cleanEdges(
  a: Int32Array,
  b: Int32Array,
  m: number,
  nodes: number,
  externalIds: Float64Array | string[] | null,
  directed: boolean,
): DenseEdges {
  let selfLoops = 0;
  let sorted = true;
  let px = -1;
  let py = -1;
  for (let k = 0; k < m; k++) {
    let x = a[k];
    let y = b[k];
    if (x === y) {
      selfLoops++;
      continue;
    }
    if (!directed && y < x) {
      const t = x;
      x = y;
      y = t;
    }
    if (x < px || (x === px && y <= py)) {
      sorted = false;
      break;
    }
    px = x;
    py = y;
  }
  let dups: Int32Array = new Int32Array(0);
  if (!sorted) {
    selfLoops = 0;
    let logB = 0;
    while (65536 * 2 ** logB < m && logB < 16) logB++;
    const buckets = 2 ** logB;
    const shift = 32 - logB;
    const start = new Int32Array(buckets + 1);
    for (let k = 0; k < m; k++) {
      let x = a[k];
      let y = b[k];
      if (x === y) {
        selfLoops++;
        continue;
      }
      if (!directed && y < x) {
        const t = x;
        x = y;
        y = t;
      }
      start[(logB === 0 ? 0 : pairHash(x, y) >>> shift) + 1]++;
    }
    let largest = 0;
    for (let i = 0; i < buckets; i++) {
      if (start[i + 1] > largest) largest = start[i + 1];
      start[i + 1] += start[i];
    }
    // entries[2p] = edge index, entries[2p+1] = pair hash, grouped by bucket, file order inside.
    const entries = new Int32Array(2 * (m - selfLoops));
    for (let k = 0; k < m; k++) {
      let x = a[k];
      let y = b[k];
      if (x === y) continue;
      if (!directed && y < x) {
        const t = x;
        x = y;
        y = t;
      }
      const h = pairHash(x, y);
      const p = 2 * start[logB === 0 ? 0 : h >>> shift]++;
      entries[p] = k;
      entries[p + 1] = h;
    }
    // start[i] is now the end of bucket i.
    let size = 2;
    while (size < 2 * largest) size *= 2;
    const slots = new Int32Array(size);
    let found = new Int32Array(1024);
    let nd = 0;
    for (let i = 0, g = 0; i < buckets; i++) {
      const end = start[i];
      let sz = 2;
      while (sz < 2 * (end - g)) sz *= 2;
      const mask = sz - 1;
      slots.fill(-1, 0, sz);
      for (; g < end; g++) {
        const h = entries[2 * g + 1];
        let idx = h & mask;
        for (;;) {
          const o = slots[idx];
          if (o < 0) {
            slots[idx] = g;
            break;
          }
          if (entries[2 * o + 1] === h) {
            const k1 = entries[2 * o];
            const k2 = entries[2 * g];
            const x1 = a[k1];
            const y1 = b[k1];
            const x2 = a[k2];
            const y2 = b[k2];
            if ((x1 === x2 && y1 === y2) || (!directed && x1 === y2 && y1 === x2)) {
              if (nd === found.length) {
                const f2 = new Int32Array(nd * 2);
                f2.set(found);
                found = f2;
              }
              found[nd++] = k2;
              break;
            }
          }
          idx = (idx + 1) & mask;
        }
      }
    }
    dups = found.subarray(0, nd).sort();
  }
  const duplicates = dups.length;
  const kept = m - selfLoops - duplicates;
  const src = sharedArray('i32', kept);
  const dst = sharedArray('i32', kept);
  if (kept === m) {
    src.set(a.subarray(0, m));
    dst.set(b.subarray(0, m));
  } else {
    let j = 0;
    let di = 0;
    let nextDup = duplicates > 0 ? dups[0] : -1;
    for (let k = 0; k < m; k++) {
      if (k === nextDup) {
        di++;
        nextDup = di < duplicates ? dups[di] : -1;
        continue;
      }
      const x = a[k];
      const y = b[k];
      if (x === y) continue;
      src[j] = x;
      dst[j] = y;
      j++;
    }
  }
  return { nodes, src, dst, externalIds, directed, dropped: { selfLoops, duplicates } };
}
