/**
 * A set of integer pairs (a, b) in open-addressing arrays on SharedArrayBuffer, so kernels in any
 * thread can test membership (e.g. "user a muted author b"). Inserts happen in one thread between
 * kernel runs; growing replaces the arrays, so callers pass the current ones to each kernel run.
 */
import { mix32 } from './rng.ts';
import { sharedArray } from './table.ts';
import type { IndexList } from './indexList.ts';

export interface PairSet {
  /** Slot arrays; a slot is empty when keysA[slot] === -1. Length is a power of two. */
  keysA: Int32Array;
  keysB: Int32Array;
  size: number;
}

export function createPairSet(capacity = 1024): PairSet {
  let cap = 16;
  while (cap < capacity * 2) cap *= 2;
  const keysA = sharedArray('i32', cap).fill(-1);
  return { keysA, keysB: sharedArray('i32', cap), size: 0 };
}

function slotHash(a: number, b: number): number {
  return mix32((mix32(a >>> 0) ^ b) >>> 0);
}

/** Membership test usable inside kernels (pass the arrays as kernel arguments). */
export function pairSetHas(keysA: Int32Array, keysB: Int32Array, a: number, b: number): boolean {
  const mask = keysA.length - 1;
  let s = slotHash(a, b) & mask;
  for (;;) {
    const k = keysA[s];
    if (k === -1) return false;
    if (k === a && keysB[s] === b) return true;
    s = (s + 1) & mask;
  }
}

/**
 * Adds (a, b) (both >= 0); returns false when it was already present. `slots` gets the slot it
 * wrote (for a device executor's copies: hostWroteAt), unless the set grew into new arrays.
 */
export function pairSetAdd(set: PairSet, a: number, b: number, slots?: IndexList): boolean {
  if (pairSetHas(set.keysA, set.keysB, a, b)) return false;
  if ((set.size + 1) * 2 > set.keysA.length) {
    const old = set;
    const next = createPairSet(old.keysA.length);
    for (let s = 0; s < old.keysA.length; s++) if (old.keysA[s] !== -1) insert(next, old.keysA[s], old.keysB[s]);
    set.keysA = next.keysA;
    set.keysB = next.keysB;
    slots?.clear();
    slots = undefined;
  }
  const s = insert(set, a, b);
  slots?.push(s);
  set.size++;
  return true;
}

function insert(set: PairSet, a: number, b: number): number {
  const mask = set.keysA.length - 1;
  let s = slotHash(a, b) & mask;
  while (set.keysA[s] !== -1) s = (s + 1) & mask;
  set.keysA[s] = a;
  set.keysB[s] = b;
  return s;
}
