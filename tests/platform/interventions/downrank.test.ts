/** The downrank kind on a real run. */
import { describe, expect, it } from 'vitest';
import { col, INJECT, read, run, runsDir } from './runs.ts';

const tmp = runsDir('downrank');

describe('downrank', () => {
  it('to 0 under chronological ranking: the story (reshares included) gets fewer impressions, but is not removed', () => {
    // Injected at step 3, when the platform has other content: at step 0 the story is all there is
    // to show, whatever its rank. The downrank applies from the same step (list order).
    const extra = ['--set', 'platform.ranker=chronological'];
    const inject = { ...INJECT, step: 3 };
    const plain = run(tmp, 'chrono', [inject], extra);
    const down = run(tmp, 'downrank', [inject, { kind: 'downrank', step: 3, posts: { tag: 'rumour' }, factor: 0 }], extra);
    const impressions = (d: string) => {
      const p = read(d, 'posts.arrow');
      return (col(p, 'impressions') as number[]).reduce((t, x, i) => t + (col(p, 'tag')[i] === 'rumour' ? x : 0), 0);
    };
    // A score multiplier, not a removal: users with fewer candidates than feed slots still see it.
    expect(impressions(down)).toBeLessThan(impressions(plain) * 0.9);
    expect(impressions(down)).toBeGreaterThan(0);
    const p = read(down, 'posts.arrow');
    const rank = col(p, 'rank') as number[];
    col(p, 'tag').forEach((t, i) => {
      if (t === 'rumour' && col(p, 'kind')[i] !== 'comment') expect(rank[i]).toBe(0);
      if (t !== 'rumour') expect(rank[i]).toBe(1);
    });
  });
});
