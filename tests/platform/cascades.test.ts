import { describe, expect, it } from 'vitest';
import { CascadeTracker, cascadeStats } from '../../platform/cascades.ts';

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

  it('the incremental tracker agrees with the direct computation and reports changed roots', () => {
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
    t.prune(1);
    expect(t.stats(200)).toBeUndefined();
    expect(t.stats(100)?.scale).toBe(5);
  });

  it('prune forgets exactly the cascades idle since before its step', () => {
    // Random adds over 60 steps and a prune per step against a plain record of each root's last
    // step (roots come back after being forgotten, and some are touched many times a step).
    const t = new CascadeTracker();
    const last = new Map<number, number>();
    let s = 1;
    const rnd = (n: number) => {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      return s % n;
    };
    for (let step = 0; step < 60; step++) {
      for (let i = 0; i < 40; i++) {
        const root = rnd(30);
        t.add(root, 1000 + root, rnd(50), 1 + rnd(3), step);
        last.set(root, step);
      }
      const window = 1 + rnd(6);
      t.prune(step + 1 - window);
      for (const [r, l] of [...last]) if (l < step + 1 - window) last.delete(r);
      for (let r = 0; r < 30; r++) expect(t.stats(r) !== undefined).toBe(last.has(r));
    }
  });

  it('small and large cascades alike: membership and scale against the direct computation, also for a track restored with a Set', () => {
    // Users kept in an array while few, in a Set once many (SMALL_USERS): a cascade grows from 1 to
    // 60 users, with repeats, and every user's membership is checked at every size.
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
    // A checkpoint written before the arrays held each track's users as a Set.
    const old = new CascadeTracker();
    old.add(4, 1, 2, 1, 0);
    const track = (old as unknown as { tracks: Map<number, { users: unknown }> }).tracks.get(4)!;
    track.users = new Set([1, 2]);
    expect([old.has(4, 2), old.has(4, 3)]).toEqual([true, false]);
    old.add(4, 1, 3, 2, 1);
    old.add(4, 1, 2, 2, 1);
    expect(old.stats(4)).toEqual(cascadeStats([0, 1, 2, 2], [1, 2, 3, 2]));
  });

  it('an aggregate without a root post (a story posted by several seeds)', () => {
    const t = new CascadeTracker();
    for (const u of [10, 11, 12]) t.add(-1, -1, u, 0, 0);
    t.add(-1, -1, 13, 1, 1);
    t.add(-1, -1, 10, 1, 1);
    expect(t.stats(-1)).toEqual({ scale: 4, depth: 1, maxBreadth: 3, size: 5 });
    // Idle past the window, the story's totals stay (story_* metrics used to drop to 0 here);
    // ordinary cascades are forgotten (their rows in cascades.arrow are final).
    t.add(300, 5, 6, 1, 1);
    t.prune(50);
    expect(t.stats(-1)).toEqual({ scale: 4, depth: 1, maxBreadth: 3, size: 5 });
    expect(t.stats(300)).toBeUndefined();
  });
});
