/** The inject kind on a real run: one post per chosen author, with the given content, followed in stories.arrow. */
import { describe, expect, it } from 'vitest';
import { col, INJECT, read, rows, run, runsDir } from './runs.ts';

const tmp = runsDir('inject');

describe('inject', () => {
  it('one post per chosen author, with the given content, followed in stories.arrow', () => {
    const base = run(tmp, 'base', [INJECT]);
    const stories = rows(read(base, 'stories.arrow'));
    expect(stories).toHaveLength(12);
    const posts = read(base, 'posts.arrow');
    const ids = col(posts, 'id') as number[];
    for (const s of stories) {
      const r = ids.indexOf(s.id as number);
      expect(col(posts, 'tag')[r]).toBe('rumour');
      expect(col(posts, 'veracity')[r]).toBe('false');
      expect(col(posts, 'novelty')[r]).toBeCloseTo(1.2, 6);
      expect(col(posts, 'stance')[r]).toBeCloseTo(0.6, 6);
      expect(col(posts, 'step')[r]).toBe(0);
      expect(col(posts, 'kind')[r]).toBe('original');
      expect(s.reach as number).toBeGreaterThan(0);
      expect(s.sharers as number).toBeGreaterThanOrEqual(1);
    }
    // Authors are among the 100 most-followed accounts of the starting graph.
    const g = read(base, 'graph.arrow');
    const followers = new Map<number, number>();
    for (const t of col(g, 'target') as number[]) followers.set(t, (followers.get(t) ?? 0) + 1);
    const top = [...followers].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 100).map(([v]) => v);
    for (const s of stories) expect(top).toContain(s.author);
    // Reposts and quotes of a tagged post carry the tag and veracity.
    const kinds = col(posts, 'kind');
    const tags = col(posts, 'tag');
    const reshared = kinds.map((k, i) => [k, i] as const).filter(([k, i]) => (k === 'repost' || k === 'quote') && tags[i] === 'rumour');
    expect(reshared.length).toBeGreaterThan(0);
    for (const [, i] of reshared) expect(col(posts, 'veracity')[i]).toBe('false');
    expect(rows(read(base, 'interventions.arrow'))).toEqual([{ step: 0, index: 0, name: 'inject-0', kind: 'inject', posts: 12, agents: 12 }]);
  });
});
