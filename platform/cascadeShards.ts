/**
 * The cascade tracker's storage (cascades.ts) and the kernels that step it. Tracks are split by
 * root into SHARDS shards, each a part of the same typed arrays that no other shard touches, so the
 * step's joins run on the threads a shard at a time, with no locks and the same bytes whatever the
 * thread count (a shard takes its joins in walk order). A shard holds:
 * - records of REC words (a 64-byte cache line), one per tracked cascade: root, generation, scale,
 *   depth, size, last step, max breadth, the drain epoch it was last marked in, and the breadth at
 *   depths 0 .. INLINE - 1 (nearly every cascade is shallower); a freed record's last step is FREE;
 * - an open-addressing index root -> record + 1 (0: an empty slot), linear probing;
 * - entries of ENT words keyed by (record, key): key >= 0 a member (the user; the count is that
 *   user's posts in the tree), key < 0 the breadth at depth -1 - key >= INLINE. A freed record's
 *   generation moves, so its old entries stop counting without being searched for; a relayout
 *   drops them;
 * - a stack of freed records and the list of roots marked changed in the epoch;
 * - HEAD words: records handed out, records live, entry slots taken (stale ones included), freed
 *   records stacked, roots marked, and where the shard's entry slots start and how many it has.
 *
 * Every shard has capI index slots and capR records, but entry slots of its own number: a cascade's
 * members are all in its root's shard, so one viral cascade (or the story's aggregate, never
 * pruned) would otherwise size every shard's entries. The capacities are fixed for a kernel call:
 * the tracker reserves room for the joins before it runs them (cascades.ts reserve).
 */
import { kernel, kernelList } from '../sim-core/kernel.ts';
import { mix32 } from '../sim-core/rng.ts';

/** Shards: a power of two, fixed (not the thread count), so the layout does not depend on it. */
export const SHARDS = 64;
const SHARD_SHIFT = 32 - Math.log2(SHARDS);

const ROOT = 0;
const GEN = 1;
export const SCALE = 2;
export const DEPTH = 3;
export const SIZE = 4;
const LAST = 5;
export const MAX_BREADTH = 6;
const MARK = 7;
/** The breadth at depths 0 .. INLINE - 1, in the record (deeper ones are entries). */
const BREADTH = 8;
const INLINE = 8;
export const REC = BREADTH + INLINE;
export const ENT = 4;
/** A freed record's last step. */
const FREE = -0x80000000;

export const USED = 0;
export const LIVE = 1;
export const TAKEN = 2;
const FREED = 3;
export const MARKED = 4;
/** The shard's first entry slot in `entries`, and its number of slots (a power of two). */
export const E_BASE = 5;
export const E_CAP = 6;
export const HEAD = 8;

/** The tracker's arrays and capacities, as a kernel receives them. */
export interface Shards {
  index: Int32Array;
  recs: Int32Array;
  entries: Int32Array;
  head: Int32Array;
  free: Int32Array;
  marked: Int32Array;
  capI: number;
  capR: number;
}

/** What a lookup reads (any thread may look up while no kernel writes). */
export type TrackView = Pick<Shards, 'index' | 'recs' | 'entries' | 'head' | 'capI' | 'capR'>;

export const shardOf = (root: number) => mix32(root >>> 0) >>> SHARD_SHIFT;
export const rootSlot = (root: number, mask: number) => mix32(root >>> 0) & mask;
export const entrySlot = (record: number, key: number, mask: number) => mix32((mix32(record) ^ key) >>> 0) & mask;

/** Record of `root` in shard p (local index), or -1. */
export function findTrack(t: TrackView, p: number, root: number): number {
  const mask = t.capI - 1;
  const ib = p * t.capI;
  const rb = p * t.capR;
  for (let s = rootSlot(root, mask); ; s = (s + 1) & mask) {
    const v = t.index[ib + s];
    if (v === 0) return -1;
    if (t.recs[(rb + v - 1) * REC + ROOT] === root) return v - 1;
  }
}

/** Word offset in `entries` of entry (k, key) of shard p, or of the empty slot where it would go. */
function probe(t: TrackView, p: number, k: number, key: number): number {
  const E = t.entries;
  const mask = t.head[p * HEAD + E_CAP] - 1;
  const eb = t.head[p * HEAD + E_BASE];
  for (let s = entrySlot(k, key, mask); ; s = (s + 1) & mask) {
    const o = (eb + s) * ENT;
    if (E[o] === 0 || (E[o] === k + 1 && E[o + 1] === key)) return o;
  }
}

/** Count of entry (k, key) of shard p: 0 when absent or left by an earlier track of the record. */
export function entryCount(t: TrackView, p: number, k: number, key: number): number {
  const E = t.entries;
  const o = probe(t, p, k, key);
  return E[o] !== 0 && E[o + 2] === t.recs[(p * t.capR + k) * REC + GEN] ? E[o + 3] : 0;
}

/** Whether `user` is in the tracked cascade of `root`. */
export function trackHas(t: TrackView, root: number, user: number): boolean {
  const p = shardOf(root);
  const k = findTrack(t, p, root);
  return k >= 0 && entryCount(t, p, k, user) > 0;
}

/** Adds `by` to entry (k, key) of shard p, made (or taken back from an earlier track) at 0; its new count. */
function bump(t: Shards, p: number, k: number, key: number, by: number): number {
  const E = t.entries;
  const o = probe(t, p, k, key);
  const gen = t.recs[(p * t.capR + k) * REC + GEN];
  if (E[o] === 0) {
    E[o] = k + 1;
    E[o + 1] = key;
    t.head[p * HEAD + TAKEN]++;
  } else if (E[o + 2] === gen) return (E[o + 3] += by);
  E[o + 2] = gen;
  return (E[o + 3] = by);
}

/** A fresh record of shard p for `root` (not tracked), indexed. */
function openTrack(t: Shards, p: number, root: number, step: number): number {
  const H = p * HEAD;
  const k = t.head[H + FREED] > 0 ? t.free[p * t.capR + --t.head[H + FREED]] : t.head[H + USED]++;
  const o = (p * t.capR + k) * REC;
  t.recs.fill(0, o + SCALE, o + REC);
  t.recs[o + ROOT] = root;
  t.recs[o + LAST] = step;
  const mask = t.capI - 1;
  const ib = p * t.capI;
  let s = rootSlot(root, mask);
  while (t.index[ib + s] !== 0) s = (s + 1) & mask;
  t.index[ib + s] = k + 1;
  t.head[H + LIVE]++;
  return k;
}

/** Frees record k of shard p: out of the index (backward-shift deletion), its entries stale. */
function closeTrack(t: Shards, p: number, k: number): void {
  const I = t.index;
  const mask = t.capI - 1;
  const ib = p * t.capI;
  const rb = p * t.capR;
  let i = rootSlot(t.recs[(rb + k) * REC + ROOT], mask);
  while (I[ib + i] !== k + 1) i = (i + 1) & mask;
  // Slots after the hole move back into it unless their home lies cyclically in (hole, slot].
  for (let j = (i + 1) & mask; I[ib + j] !== 0; j = (j + 1) & mask) {
    const h = rootSlot(t.recs[(rb + I[ib + j] - 1) * REC + ROOT], mask);
    const stays = i <= j ? i < h && h <= j : i < h || h <= j;
    if (!stays) {
      I[ib + i] = I[ib + j];
      i = j;
    }
  }
  I[ib + i] = 0;
  const o = (rb + k) * REC;
  t.recs[o + GEN]++;
  t.recs[o + LAST] = FREE;
  t.free[rb + t.head[p * HEAD + FREED]++] = k;
  t.head[p * HEAD + LIVE]--;
}

/** A post by `user` at `depth` in record k's tree: member and breadth entries, depth and size. */
function countPost(t: Shards, p: number, k: number, user: number, depth: number, by = 1): void {
  const o = (p * t.capR + k) * REC;
  const R = t.recs;
  if (bump(t, p, k, user, by) === by) R[o + SCALE]++;
  const b = depth < INLINE ? (R[o + BREADTH + depth] += by) : bump(t, p, k, -1 - depth, by);
  if (b > R[o + MAX_BREADTH]) R[o + MAX_BREADTH] = b;
  if (depth > R[o + DEPTH]) R[o + DEPTH] = depth;
  R[o + SIZE] += by;
}

/** Marks record k of shard p changed in `epoch` (its root listed once). */
export function markTrack(t: Shards, p: number, k: number, epoch: number): void {
  const o = (p * t.capR + k) * REC;
  if (t.recs[o + MARK] === epoch) return;
  t.recs[o + MARK] = epoch;
  t.marked[p * t.capR + t.head[p * HEAD + MARKED]++] = t.recs[o + ROOT];
}

/**
 * Records a post at `depth` by `user` in the cascade of `root` (authored by rootAuthor), in shard
 * p = shardOf(root), which has room for it. A new cascade starts with its root's author at depth 0;
 * a negative rootAuthor opens an aggregate without a root post (e.g. a story posted by several
 * seeds, each added at depth 0).
 */
export function joinTrack(t: Shards, p: number, root: number, rootAuthor: number, user: number, depth: number, step: number, epoch: number): void {
  let k = findTrack(t, p, root);
  if (k < 0) {
    k = openTrack(t, p, root, step);
    if (rootAuthor >= 0) countPost(t, p, k, rootAuthor, 0);
  }
  countPost(t, p, k, user, depth);
  t.recs[(p * t.capR + k) * REC + LAST] = step;
  markTrack(t, p, k, epoch);
}

/** Frees the records of shard p idle since before `step`, aggregates (negative roots) apart. */
export function pruneShard(t: Shards, p: number, step: number): void {
  const rb = p * t.capR;
  const used = t.head[p * HEAD + USED];
  for (let k = 0; k < used; k++) {
    const o = (rb + k) * REC;
    const last = t.recs[o + LAST];
    if (last !== FREE && last < step && t.recs[o + ROOT] >= 0) closeTrack(t, p, k);
  }
}

/** Entries of shard p that still count (a relayout keeps only those). */
export function liveEntries(t: Shards, p: number): number {
  const { entries: E, recs: R, capR } = t;
  const eb = t.head[p * HEAD + E_BASE];
  let n = 0;
  for (let s = 0; s < t.head[p * HEAD + E_CAP]; s++) {
    const o = (eb + s) * ENT;
    if (E[o] !== 0 && E[o + 2] === R[(p * capR + E[o] - 1) * REC + GEN]) n++;
  }
  return n;
}

/**
 * Shard p of `from` into `to` (larger or equal capacities, zeroed; its own head): the records (at
 * the same local indices), the freed and marked lists, the index rebuilt and the live entries
 * rehashed.
 */
export function moveShard(from: Shards, to: Shards, p: number): void {
  const H = p * HEAD;
  const used = from.head[H + USED];
  const { capR: fromR, recs: fromRecs, entries: E } = from;
  const { capI, capR, recs, index: I, entries: F } = to;
  const fromBase = from.head[H + E_BASE];
  const fromE = from.head[H + E_CAP];
  const base = to.head[H + E_BASE];
  const capE = to.head[H + E_CAP];
  recs.set(fromRecs.subarray(p * fromR * REC, (p * fromR + used) * REC), p * capR * REC);
  to.free.set(from.free.subarray(p * fromR, p * fromR + from.head[H + FREED]), p * capR);
  to.marked.set(from.marked.subarray(p * fromR, p * fromR + from.head[H + MARKED]), p * capR);
  const maskI = capI - 1;
  for (let k = 0; k < used; k++) {
    const o = (p * capR + k) * REC;
    if (recs[o + LAST] === FREE) continue;
    let s = rootSlot(recs[o + ROOT], maskI);
    while (I[p * capI + s] !== 0) s = (s + 1) & maskI;
    I[p * capI + s] = k + 1;
  }
  const maskE = capE - 1;
  let taken = 0;
  for (let s = 0; s < fromE; s++) {
    const o = (fromBase + s) * ENT;
    const k = E[o] - 1;
    if (k < 0 || E[o + 2] !== fromRecs[(p * fromR + k) * REC + GEN]) continue;
    let t = entrySlot(k, E[o + 1], maskE);
    while (F[(base + t) * ENT] !== 0) t = (t + 1) & maskE;
    const q = (base + t) * ENT;
    F[q] = E[o];
    F[q + 1] = E[o + 1];
    F[q + 2] = E[o + 2];
    F[q + 3] = E[o + 3];
    taken++;
  }
  to.head[H + TAKEN] = taken;
}

const SHARD_ARRAYS = { index: 'i32', recs: 'i32', entries: 'i32', head: 'i32', free: 'i32', marked: 'i32' } as const;

/**
 * Rows are shards: shard p takes joins [start[p], start[p + 1]) (the step's reshares and comments,
 * bucketed by shard in walk order) and writes only its own part of the tracker's arrays.
 */
const joinTracks = kernel(
  {
    reads: { start: 'i32', root: 'i32', rootAuthor: 'i32', user: 'i32', depth: 'i32' },
    writes: SHARD_ARRAYS,
    params: ['capI', 'capR', 'step', 'epoch'],
  },
  (a, from, to): void => {
    const { start, root, rootAuthor, user, depth, step, epoch } = a;
    for (let p = from; p < to; p++) {
      for (let j = start[p]; j < start[p + 1]; j++) joinTrack(a, p, root[j], rootAuthor[j], user[j], depth[j], step, epoch);
    }
  },
);

/** Rows are shards: frees each shard's records idle since before `step`. */
const pruneTracks = kernel({ reads: {}, writes: SHARD_ARRAYS, params: ['capI', 'capR', 'step'] }, (a, from, to): void => {
  for (let p = from; p < to; p++) pruneShard(a, p, a.step);
});

/** Rows are shards: each shard's live entries (one partial per shard). */
const countLiveEntries = kernel({ reads: { recs: 'i32', entries: 'i32', head: 'i32' }, writes: {}, params: ['capR'] }, (a, from, to): number[] => {
  const out: number[] = [];
  for (let p = from; p < to; p++) out.push(liveEntries(a as unknown as Shards, p));
  return out;
});

/** Rows are shards: moves each shard from the `old*` arrays into the new ones (moveShard; the new head has the new entry slots). */
const moveShards = kernel(
  {
    reads: { oldRecs: 'i32', oldEntries: 'i32', oldHead: 'i32', oldFree: 'i32', oldMarked: 'i32' },
    writes: SHARD_ARRAYS,
    params: ['capI', 'capR', 'oldCapR'],
  },
  (a, from, to): void => {
    const old = { index: a.index, recs: a.oldRecs, entries: a.oldEntries, head: a.oldHead, free: a.oldFree, marked: a.oldMarked, capI: 0, capR: a.oldCapR };
    for (let p = from; p < to; p++) moveShard(old, a, p);
  },
);

export const kernels = kernelList(import.meta.url, { joinTracks, pruneTracks, countLiveEntries, moveShards });
