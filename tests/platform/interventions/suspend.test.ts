/** The suspend kind on a real run, and common random numbers: runs agree before the intervention. */
import { describe, expect, it } from 'vitest';
import { eventsFrom, INJECT, read, rows, run, runsDir } from './runs.ts';

const tmp = runsDir('suspend');

describe('suspend', () => {
  it('suspended accounts do nothing from that step on; runs agree before it', () => {
    const base = run(tmp, 'base', [INJECT]);
    const agents = Array.from({ length: 300 }, (_, i) => i * 20);
    const dir = run(tmp, 'suspend', [INJECT, { kind: 'suspend', step: 4, agents: { agents } }]);
    const set = new Set(agents);
    expect(eventsFrom(dir, 4).filter((e) => set.has(e.agent as number))).toEqual([]);
    expect(eventsFrom(base, 4).filter((e) => set.has(e.agent as number)).length).toBeGreaterThan(0);
    expect(rows(read(dir, 'interventions.arrow'))[1]).toMatchObject({ step: 4, kind: 'suspend', agents: 300 });
    // Common random numbers: everything before step 4 is the same as without the suspension (the
    // metrics of the steps 0-3 that events count from 0 are the rows of steps 1-4, the states after them).
    const before = (d: string) => rows(read(d, 'metrics.arrow')).filter((m) => (m.step as number) <= 4);
    expect(before(dir)).toEqual(before(base));
    expect(rows(read(dir, 'metrics.arrow'))[5]).not.toEqual(rows(read(base, 'metrics.arrow'))[5]);
  });
});
