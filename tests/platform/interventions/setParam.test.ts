/** The setParam kind on a real run: behaviour and platform parameters change at their step and not before. */
import { describe, expect, it } from 'vitest';
import { INJECT, read, rows, run, runsDir } from './runs.ts';

const tmp = runsDir('setParam');

describe('setParam', () => {
  it('takes effect at its step and not before', () => {
    const base = run(tmp, 'base', [INJECT]);
    const dir = run(tmp, 'set', [INJECT, { kind: 'setParam', step: 3, param: 'behaviour.post', value: 0 }, { kind: 'setParam', step: 5, param: 'platform.inNetwork', value: 0 }]);
    const m = rows(read(dir, 'metrics.arrow'));
    const b = rows(read(base, 'metrics.arrow'));
    expect(m.slice(0, 3).map((x) => x.actions_post)).toEqual(b.slice(0, 3).map((x) => x.actions_post));
    for (const x of m.slice(3)) expect(x.actions_post).toBe(0);
    for (const x of m.slice(5)) expect(x.in_network_share).toBe(0);
    expect(m[4].in_network_share as number).toBeGreaterThan(0);
    expect(rows(read(dir, 'interventions.arrow')).map((r) => [r.step, r.kind, r.agents])).toEqual([[0, 'inject', 12], [3, 'setParam', 6000], [5, 'setParam', 0]]);
  });
});
