import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { buildGraph } from '../../sim-core/csr.ts';
import { sharedArray } from '../../sim-core/table.ts';
import type { World } from '../../sim-core/phase.ts';
import { heuristicBehaviour } from '../../platform/behaviour.ts';
import { synthesizePopulation, HOURLY_PROFILES } from '../../population/synthesize.ts';
import { activatePhase } from '../../platform/phases.ts';
import { createSocialState, socialConfig } from '../../platform/state.ts';
import { poissonCount32 } from '../../platform/kernels.ts';
import { expf32 } from '../../sim-core/f32math.ts';
import { hash } from '../../sim-core/rng.ts';

const exec = createExecutor(1);
afterAll(() => exec.close());

describe('activity clock', () => {
  it('active counts match the 24-hour profiles for 1-hour and 3-minute steps (within 4 SD)', async () => {
    const n = 50_000;
    const pop = synthesizePopulation(n, 3);
    const graph = await buildGraph(exec, n, sharedArray('i32', 0), sharedArray('i32', 0), true);
    const behaviour = heuristicBehaviour({ ageBands: 6, leaningCentres: [-1, -0.5, 0, 0.5, 1], tiers: 3 });
    const act = pop.agents.columns.activity as Float32Array;
    const chr = pop.agents.columns.chronotype as Uint8Array;
    const means = HOURLY_PROFILES.map((p) => p.reduce((a, b) => a + b, 0) / 24);
    for (const stepSeconds of [3600, 180]) {
      const world: World = { agents: pop.agents, graph, exec, seed: 3, stepSeconds };
      const s = createSocialState(world, socialConfig.parse({}), behaviour, pop.prototypes, 64);
      const phase = activatePhase(s);
      for (const hour of [4, 13, 21]) {
        let active = 0;
        const metrics = new Map<string, number>();
        await phase.run(world, { step: hour, time: hour * 3600, key: () => 77 + hour, metric: (k, v) => void metrics.set(k, v), later: () => { throw new Error('activate reports no metric late'); } });
        active = metrics.get('active_users')!;
        let mean = 0;
        let variance = 0;
        let sessionsMean = 0;
        for (let i = 0; i < n; i++) {
          const lambda = act[i] * (HOURLY_PROFILES[chr[i]][hour] / means[chr[i]]) * (stepSeconds / 3600);
          const p = 1 - Math.exp(-lambda);
          mean += p;
          variance += p * (1 - p);
          sessionsMean += lambda;
        }
        expect(Math.abs(active - mean), `step ${stepSeconds} s, hour ${hour}: ${active} vs ${mean.toFixed(1)}`).toBeLessThan(4 * Math.sqrt(variance));
        expect(s.feeds.active.length).toBe(active);
        // Sessions are Poisson(lambda) per user: their total has mean and variance sum(lambda).
        const sessions = s.feeds.mask.reduce((a, b) => a + b, 0);
        expect(Math.abs(sessions - sessionsMean), `sessions ${sessions} vs ${sessionsMean.toFixed(1)}`).toBeLessThan(4 * Math.sqrt(sessionsMean));
      }
    }
  });
});

/** poissonCount32 without its shortcuts: the float32 CDF walked from 0. */
function walked(lambda: number, h: number): number {
  const f = Math.fround;
  if (!(lambda > 0)) return 0;
  const u = h / 2 ** 32;
  let p = expf32(-lambda);
  let cdf = p;
  let n = 0;
  while (u >= cdf && n < 255) {
    n++;
    p = f(p * f(lambda / n));
    cdf = f(cdf + p);
  }
  return n;
}

describe('session counts in float32', () => {
  it("poissonCount32's shortcuts (no exp below 1 - lambda - 1e-6; 255 from lambda = 88) change no count", () => {
    const lambdas: number[] = [0, -1, NaN, 2 ** -149, 1e-9, 87.3, 87.4, 87.99, 88, 1000];
    for (let i = 0; i < 3000; i++) lambdas.push(Math.fround(10 ** (-8 + (9 * hash(5, i)) / 2 ** 32)));
    let checked = 0;
    for (const [j, lambda] of lambdas.entries()) {
      // Draws at the shortcut's bar, at the first CDF value and at random.
      const bar = Math.floor((1 - lambda - 1e-6) * 2 ** 32);
      const first = Math.ceil(expf32(-lambda) * 2 ** 32);
      const hs = [0, 2 ** 32 - 1, bar - 1, bar, bar + 1, first - 1, first, first + 1];
      for (let d = 0; d < 30; d++) hs.push(hash(6, j, d));
      for (const h of hs) {
        if (!(h >= 0 && h < 2 ** 32)) continue;
        const want = lambda >= 88 ? 255 : walked(lambda, h);
        expect(poissonCount32(lambda, h), `lambda ${lambda}, hash ${h}`).toBe(want);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100_000);
    // Past 87.34 expf32 is 0, so the walk itself reaches 255: the shortcut only saves the loop.
    expect(walked(87.99, 0)).toBe(255);
  });
});
