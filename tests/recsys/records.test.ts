import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { KIND, PostTable } from '../../platform/posts.ts';
import { PostRecords, baseScore } from '../../recsys/records.ts';
import { quantise } from '../../recsys/recommender.ts';
import { RANKER } from './rankerCodes.ts';

const exec = createExecutor(1);
afterAll(() => exec.close());

describe('post records', () => {
  it('follow the post table through retires and growth', async () => {
    const D = 16;
    const posts = new PostTable(D, 64).bind(exec);
    const records = new PostRecords(D).bind(exec);
    const followers = new Int32Array(100).map((_, i) => i * 3);
    const S = records.stride;
    const buffers = new Set<ArrayBufferLike>();
    let withRetired = 0;
    for (let step = 0; step < 200; step++) {
      const add = 50 + (step % 11);
      for (let i = 0; i < add; i++) {
        const id = posts.nextId;
        const topic = Array.from({ length: D }, (_, d) => Math.sin(id * 0.37 + d));
        posts.add({ author: id % 100, step, kind: KIND.original, parent: -1, root: -1, rootAuthor: id % 100, depth: 0, stance: 0, cluster: 0, flags: 0, prevByAuthor: id - 3 }, topic);
        posts.cols.likes[posts.count - 1] = id % 13;
      }
      // From step 20 on, the oldest rows leave (a window of 300 rows then; retired rows are moved
      // out every other step).
      if (step >= 20) posts.retire(Math.max(0, posts.count - 300), () => {});
      if (posts.first > 0) withRetired++;
      const o = { ranker: RANKER.xInterest, step, stepSeconds: 3600, tauHours: 6, recency: 0, followers };
      await records.update(posts, o);
      buffers.add(records.rec.buffer);
      for (let r = posts.first; r < posts.count; r++) {
        const at = r * S;
        const ok =
          records.rec[at + 1] === posts.cols.step[r] &&
          records.rec[at + 2] === posts.cols.author[r] &&
          records.rec[at + 3] === posts.cols.prev_by_author[r] &&
          records.recF[at] === Math.fround(baseScore(posts, r, { ...o, recencyMemo: { step: NaN, value: 0 } })) &&
          Array.from({ length: D }, (_, d) => records.recQ[(at + 4) * 4 + d]).every((q, d) => q === quantise(posts.topic[r * D + d]));
        if (!ok) throw new Error(`step ${step}: the record of row ${r} (post ${posts.base + r}) is not that post's`);
      }
    }
    expect(posts.base).toBeGreaterThan(10000);
    expect(withRetired).toBeGreaterThan(50);
    // The records' buffer grew.
    expect(buffers.size).toBeGreaterThan(1);
  });
});
