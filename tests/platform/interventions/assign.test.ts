/** The assign kind on a real run: post-level random assignment and its per-step log rows. */
import { describe, expect, it } from 'vitest';
import { col, read, rows, run, runsDir } from './runs.ts';

const tmp = runsDir('assign');

describe('assign', () => {
  it('new originals join the groups at their shares, carry the vote, and the log counts them', () => {
    const dir = run(tmp, 'assign', [{ kind: 'assign', step: 2, groups: { up: { share: 0.25, vote: 1 }, down: { share: 0.25, vote: -1 }, control: { share: 0.5 } } }]);
    const p = read(dir, 'posts.arrow');
    const group = col(p, 'group');
    const vote = col(p, 'treat_vote');
    const kind = col(p, 'kind');
    const step = col(p, 'step') as number[];
    const counts: Record<string, number> = {};
    group.forEach((g, i) => {
      if (step[i] < 2 || kind[i] !== 'original') expect(g).toBe('');
      else counts[g as string] = (counts[g as string] ?? 0) + 1;
      expect(vote[i]).toBe(g === 'up' ? 1 : g === 'down' ? -1 : 0);
    });
    const n = Object.values(counts).reduce((a, b) => a + b, 0);
    expect(n).toBeGreaterThan(300);
    // Binomial shares within 5 standard errors.
    for (const [g, share] of [['up', 0.25], ['down', 0.25], ['control', 0.5]] as const) {
      expect(Math.abs(counts[g] / n - share)).toBeLessThan(5 * Math.sqrt((share * (1 - share)) / n));
    }
    const log = rows(read(dir, 'interventions.arrow'));
    expect(log.every((r) => r.kind === 'assign' && (r.step as number) >= 2)).toBe(true);
    expect(log.reduce((t, r) => t + (r.posts as number), 0)).toBe(n);
  });
});
