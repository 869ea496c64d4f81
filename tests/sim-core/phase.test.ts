/**
 * Steps whose metrics arrive late (sim-core/phase.ts `StepContext.later`): queueStep resolves once
 * the phases have returned, its metrics once the late work is in; runStep waits for both; a late
 * failure surfaces where the metrics are awaited.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { queueStep, runStep, type Phase } from '../../sim-core/phase.ts';
import { makeWorld } from '../models/worlds.ts';

const exec = createExecutor(1);
afterAll(() => exec.close());

/** A phase reporting `now` at once and `late` when `release` is called. */
function latePhase(fail = false) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const phase: Phase = {
    name: 'late',
    reads: [],
    writes: [],
    metrics: { now: 'i32', late: 'i32' },
    run(_world, ctx) {
      ctx.metric('now', ctx.step);
      ctx.later(
        gate.then(() => {
          if (fail) throw new Error('the device was lost');
          ctx.metric('late', 10 * ctx.step);
        }),
      );
    },
  };
  return { phase, release: () => release() };
}

describe('late metrics', () => {
  it('queueStep returns before the late metrics, and its metrics promise holds them once they arrive', async () => {
    const world = await makeWorld(exec, 3, [[1, 0]]);
    const { phase, release } = latePhase();
    const queued = await queueStep(world, [phase], 4);
    let done = false;
    const metrics = queued.metrics.then((m) => ((done = true), m));
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    release();
    expect(Object.fromEntries(await metrics)).toEqual({ now: 4, late: 40 });
  });

  it('runStep waits for them', async () => {
    const world = await makeWorld(exec, 3, [[1, 0]]);
    const { phase, release } = latePhase();
    setTimeout(release, 20);
    expect(Object.fromEntries(await runStep(world, [phase], 2))).toEqual({ now: 2, late: 20 });
  });

  it('a late failure rejects the metrics, and is not an unhandled rejection meanwhile', async () => {
    const world = await makeWorld(exec, 3, [[1, 0]]);
    const { phase, release } = latePhase(true);
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    // The late work fails while a later phase of the same step is still running.
    const slow: Phase = { name: 'slow', reads: [], writes: [], run: () => new Promise((r) => setTimeout(r, 30)) };
    setTimeout(release, 5);
    try {
      const queued = await queueStep(world, [phase, slow], 1);
      // Several turns of the event loop pass before anyone waits for the metrics.
      for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 5));
      await expect(queued.metrics).rejects.toThrow('the device was lost');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });
});
