/** The setRanker kind on a real run: the feeds change from its step, and not before. */
import { describe, expect, it } from 'vitest';
import { INJECT, read, rows, run, runsDir } from './runs.ts';

const tmp = runsDir('setRanker');

describe('setRanker', () => {
  it('takes effect at its step and not before', () => {
    const base = run(tmp, 'base', [INJECT]);
    const dir = run(tmp, 'set', [INJECT, { kind: 'setRanker', step: 5, ranker: 'random' }]);
    const m = rows(read(dir, 'metrics.arrow'));
    const b = rows(read(base, 'metrics.arrow'));
    expect(m.slice(0, 5)).toEqual(b.slice(0, 5));
    expect(m.slice(5).map((x) => x.feed_diversity)).not.toEqual(b.slice(5).map((x) => x.feed_diversity));
    expect(rows(read(dir, 'interventions.arrow')).map((r) => [r.step, r.kind])).toEqual([[0, 'inject'], [5, 'setRanker']]);
  });
});
