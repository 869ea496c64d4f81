import { describe, expect, it } from 'vitest';
import { createPairSet, pairSetAdd, pairSetHas } from '../../sim-core/pairSet.ts';

describe('pair set (open addressing on shared arrays)', () => {
  it('adds and finds pairs as a Set of pairs does, across growth; every pair sits on its probe path', () => {
    const set = createPairSet(4);
    const ref = new Set<string>();
    let s = 11;
    const rnd = (n: number) => {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      return (s >>> 8) % n;
    };
    for (let i = 0; i < 20_000; i++) {
      // Few distinct values, so pairs repeat and probe chains collide.
      const a = rnd(300);
      const b = rnd(300);
      const key = `${a},${b}`;
      expect(pairSetAdd(set, a, b)).toBe(!ref.has(key));
      ref.add(key);
      if (i % 997 === 0) {
        for (let q = 0; q < 200; q++) {
          const x = rnd(300);
          const y = rnd(300);
          expect(pairSetHas(set.keysA, set.keysB, x, y)).toBe(ref.has(`${x},${y}`));
        }
      }
    }
    expect(set.size).toBe(ref.size);
    expect(set.keysA.length).toBeGreaterThanOrEqual(2 * set.size);
    let stored = 0;
    for (let slot = 0; slot < set.keysA.length; slot++) {
      if (set.keysA[slot] === -1) continue;
      stored++;
      expect(ref.has(`${set.keysA[slot]},${set.keysB[slot]}`)).toBe(true);
    }
    expect(stored).toBe(ref.size);
    for (const key of ref) {
      const [a, b] = key.split(',').map(Number);
      expect(pairSetHas(set.keysA, set.keysB, a, b)).toBe(true);
    }
  });
});
