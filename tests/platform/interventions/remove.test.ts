/** The remove kind on a real run. */
import { describe, expect, it } from 'vitest';
import { col, eventsFrom, INJECT, read, RESHARES, run, runsDir } from './runs.ts';

const tmp = runsDir('remove');

describe('remove', () => {
  it('removed posts get no action from that step on', () => {
    const base = run(tmp, 'base', [INJECT]);
    const dir = run(tmp, 'remove', [INJECT, { kind: 'remove', step: 2, posts: { tag: 'rumour' } }]);
    const posts = read(dir, 'posts.arrow');
    const removed = new Set((col(posts, 'id') as number[]).filter((_, i) => ((col(posts, 'flags')[i] as number) & 8) !== 0));
    expect(removed.size).toBeGreaterThan(0);
    expect(eventsFrom(dir, 2).filter((e) => removed.has(e.target as number) && e.action !== 'mute' && e.action !== 'unfollow' && e.action !== 'follow')).toEqual([]);
    expect(eventsFrom(base, 2).filter((e) => removed.has(e.target as number) && RESHARES.has(e.action as string)).length).toBeGreaterThan(0);
  });
});
