import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { sharedArray } from '../../sim-core/table.ts';
import { kernels as K } from '../../platform/kernels.ts';

const pool = createExecutor(2);
afterAll(() => pool.close());

describe('impressions kernel', () => {
  it('counts every feed item in the live rows once per showing, on two threads, whatever the chunks', async () => {
    const rows = 20_000;
    const F = 10;
    const base = 5_000;
    const count = 3_000;
    // Rows below first (retired, awaiting compaction) are not counted.
    const first = 100;
    const feed = sharedArray('i32', rows * F).fill(-1);
    const feedLen = sharedArray('u8', rows);
    const want = new Int32Array(count);
    let x = 12345;
    const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
    for (let k = 0; k < rows; k++) {
      const len = next() % (F + 1);
      feedLen[k] = len;
      for (let i = 0; i < len; i++) {
        // A few popular posts shown on every thread at once, and ids outside the table (skipped).
        const id = next() % 4 === 0 ? base + first + (next() % 8) : base - 10 + (next() % (count + 20));
        feed[k * F + i] = id;
        if (id >= base + first && id < base + count) want[id - base]++;
      }
    }
    for (const chunkRows of [64, 1024, rows]) {
      const impressions = sharedArray('i32', count + 4).fill(7);
      await pool.run(K.impressions, { active: sharedArray('i32', rows), feed, feedFlags: sharedArray('u8', rows * F), feedLen, feedSize: F, base, first, count, impressions }, rows, { chunkRows });
      expect(Array.from(impressions.subarray(0, count), (v) => v - 7)).toEqual(Array.from(want));
      expect(Array.from(impressions.subarray(count))).toEqual([7, 7, 7, 7]);
    }
  });
});
