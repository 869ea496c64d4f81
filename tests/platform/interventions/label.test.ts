/** The label kind on a real run. */
import { describe, expect, it } from 'vitest';
import { col, eventsFrom, INJECT, read, RESHARES, rows, run, runsDir, taggedIds } from './runs.ts';

const tmp = runsDir('label');

describe('label', () => {
  it('with multipliers 0: nobody likes or reshares the story from that step on, but did before', () => {
    const dir = run(tmp, 'label', [INJECT, { kind: 'label', step: 3, posts: { tag: 'rumour' }, like: 0, reshare: 0 }]);
    const tagged = taggedIds(dir, 'rumour');
    const hits = (from: number, to: number) => eventsFrom(dir, from).filter((e) => (e.step as number) < to && RESHARES.has(e.action as string) && tagged.has(e.target as number)).length;
    expect(hits(0, 3)).toBeGreaterThan(0);
    expect(hits(3, 99)).toBe(0);
    // Every tagged post existing at step 3 has the fact-check flag (2), as have later reshares.
    const posts = read(dir, 'posts.arrow');
    const flags = col(posts, 'flags') as number[];
    (col(posts, 'id') as number[]).forEach((id, i) => {
      if (tagged.has(id) && col(posts, 'kind')[i] !== 'comment') expect(flags[i] & 2).toBe(2);
    });
    expect(rows(read(dir, 'interventions.arrow'))[1]).toMatchObject({ step: 3, kind: 'label', posts: tagged.size });
  });
});
