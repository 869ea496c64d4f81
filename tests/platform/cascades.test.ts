import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { CascadeTracker, Joins, cascadeStats } from '../../platform/cascades.ts';

const pool = createExecutor(3);
afterAll(() => pool.close());

describe('cascade statistics (OASIS definitions)', () => {
  it('a hand-built cascade: scale counts unique users, depth the deepest level, breadth the widest', () => {
    // Root by user 1; reposts by 2 and 3 (depth 1); 4 reposts 2's (depth 2); 2 comments again on 3's
    // repost (depth 2, user 2 already counted); 5 quotes 4's (depth 3).
    const depths = [0, 1, 1, 2, 2, 3];
    const authors = [1, 2, 3, 4, 2, 5];
    expect(cascadeStats(depths, authors)).toEqual({ scale: 5, depth: 3, maxBreadth: 2, size: 6 });
    // A star: root and 4 direct reposts.
    expect(cascadeStats([0, 1, 1, 1, 1], [9, 1, 2, 3, 4])).toEqual({ scale: 5, depth: 1, maxBreadth: 4, size: 5 });
    // A chain of 4 by two alternating users.
    expect(cascadeStats([0, 1, 2, 3], [1, 2, 1, 2])).toEqual({ scale: 2, depth: 3, maxBreadth: 1, size: 4 });
    expect(cascadeStats([0], [7])).toEqual({ scale: 1, depth: 0, maxBreadth: 1, size: 1 });
  });

  it('the incremental tracker agrees with the direct computation and reports changed roots', async () => {
    const t = new CascadeTracker();
    t.add(100, 1, 2, 1, 0);
    t.add(100, 1, 3, 1, 0);
    t.add(200, 7, 8, 1, 0);
    expect(t.drainChanged().map(([r]) => r)).toEqual([100, 200]);
    t.add(100, 1, 4, 2, 1);
    t.add(100, 1, 2, 2, 1);
    t.add(100, 1, 5, 3, 1);
    const changed = t.drainChanged();
    expect(changed.map(([r]) => r)).toEqual([100]);
    expect(changed[0][1]).toEqual(cascadeStats([0, 1, 1, 2, 2, 3], [1, 2, 3, 4, 2, 5]));
    await t.prune(1);
    expect(t.stats(200)).toBeUndefined();
    expect(t.stats(100)?.scale).toBe(5);
  });

  it('prune forgets exactly the cascades idle since before its step; reopened ones start afresh; joins on the threads as one by one', async () => {
    // Random joins over 60 steps and a prune per step against a plain record of each root's posts
    // (roots come back after being forgotten, some are touched many times a step, and enough roots
    // live at once that the arrays grow and freed records are reused). One tracker takes the joins
    // one by one, the other a step's at once on 3 threads (joinAll), and prunes there too.
    const one = new CascadeTracker();
    const batched = new CascadeTracker();
    const joins = new Joins();
    const posts = new Map<number, { depths: number[]; authors: number[]; last: number }>();
    let s = 1;
    const rnd = (n: number) => {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      return (s >>> 8) % n;
    };
    for (let step = 0; step < 60; step++) {
      for (let i = 0; i < 400; i++) {
        const root = rnd(3000);
        const user = rnd(50);
        const depth = 1 + rnd(12); // breadths in the record and, past depth 7, entries
        one.add(root, 1000 + root, user, depth, step);
        joins.push(root, 1000 + root, user, depth);
        const p = posts.get(root) ?? { depths: [0], authors: [1000 + root], last: step };
        p.depths.push(depth);
        p.authors.push(user);
        p.last = step;
        posts.set(root, p);
      }
      await batched.joinAll(pool, joins, step);
      const want = [...posts].filter(([, p]) => p.last === step).map(([r, p]) => [r, cascadeStats(p.depths, p.authors)]);
      want.sort((a, b) => (a[0] as number) - (b[0] as number));
      expect(one.drainChanged()).toEqual(want);
      expect(batched.drainChanged()).toEqual(want);
      const window = 1 + rnd(6);
      await one.prune(step + 1 - window);
      await batched.prune(step + 1 - window, pool);
      for (const [r, p] of [...posts]) if (p.last < step + 1 - window) posts.delete(r);
      expect([one.size, batched.size]).toEqual([posts.size, posts.size]);
      const wrong: string[] = [];
      for (const t of [one, batched]) {
        for (let r = 0; r < 3000; r++) {
          const p = posts.get(r);
          const want = p && cascadeStats(p.depths, p.authors);
          if (JSON.stringify(t.stats(r)) !== JSON.stringify(want)) wrong.push(`stats of ${r}`);
          const u = rnd(60);
          if (t.has(r, u) !== (p !== undefined && p.authors.includes(u))) wrong.push(`root ${r} user ${u}`);
        }
      }
      expect(wrong, `step ${step}`).toEqual([]);
    }
  });

  it('a viral cascade takes entry slots in its own shard only', async () => {
    // 20,000 users join root 7 (one shard) beside 63 small cascades: with one capacity for every
    // shard the entries would be sized by root 7's (64 x 131,072 slots).
    const t = new CascadeTracker();
    const joins = new Joins();
    for (let u = 0; u < 20000; u++) joins.push(7, 1, 100 + u, 1 + (u % 3));
    for (let r = 0; r < 63; r++) joins.push(1000 + r, 2, 3, 1);
    await t.joinAll(pool, joins, 0);
    expect(t.stats(7)).toEqual({ scale: 20001, depth: 3, maxBreadth: 6667, size: 20001 });
    expect(t.stats(1000)).toEqual(cascadeStats([0, 1], [2, 3]));
    expect(t.entries.length / 4).toBeLessThan(300000);
  });

  it('one cascade growing: membership and scale against the direct computation', () => {
    // A cascade grows from 1 to 60 users, with repeats, and every user's membership is checked at
    // every size.
    const t = new CascadeTracker();
    const depths = [0];
    const authors = [500];
    let s = 7;
    for (let i = 0; i < 200; i++) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      const user = (s >>> 8) % 60;
      const depth = 1 + (i % 4);
      t.add(9, 500, user, depth, 0);
      depths.push(depth);
      authors.push(user);
      expect(t.stats(9)).toEqual(cascadeStats(depths, authors));
      for (let u = 0; u < 60; u++) expect(t.has(9, u), `user ${u} after ${i + 1} adds`).toBe(authors.includes(u));
      expect(t.has(9, 500)).toBe(true);
    }
  });

  it('an aggregate without a root post (a story posted by several seeds)', async () => {
    const t = new CascadeTracker();
    for (const u of [10, 11, 12]) t.add(-1, -1, u, 0, 0);
    t.add(-1, -1, 13, 1, 1);
    t.add(-1, -1, 10, 1, 1);
    expect(t.stats(-1)).toEqual({ scale: 4, depth: 1, maxBreadth: 3, size: 5 });
    // Idle past the window, the story's totals stay (story_* metrics used to drop to 0 here);
    // ordinary cascades are forgotten (their rows in cascades.arrow are final).
    t.add(300, 5, 6, 1, 1);
    await t.prune(50);
    expect(t.stats(-1)).toEqual({ scale: 4, depth: 1, maxBreadth: 3, size: 5 });
    expect(t.stats(300)).toBeUndefined();
  });
});
