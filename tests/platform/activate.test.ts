import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../sim-core/exec.ts';
import { buildGraph } from '../../sim-core/csr.ts';
import { sharedArray } from '../../sim-core/table.ts';
import type { World } from '../../sim-core/phase.ts';
import { heuristicBehaviour } from '../../platform/behaviour.ts';
import { synthesizePopulation, HOURLY_PROFILES } from '../../population/synthesize.ts';
import { activatePhase } from '../../platform/phases.ts';
import { createSocialState, socialConfig } from '../../platform/state.ts';

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
        await phase.run(world, { step: hour, time: hour * 3600, key: () => 77 + hour, metric: (k, v) => void metrics.set(k, v) });
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
        expect(s.active.length).toBe(active);
        // Sessions are Poisson(lambda) per user: their total has mean and variance sum(lambda).
        const sessions = s.activeMask.reduce((a, b) => a + b, 0);
        expect(Math.abs(sessions - sessionsMean), `sessions ${sessions} vs ${sessionsMean.toFixed(1)}`).toBeLessThan(4 * Math.sqrt(sessionsMean));
      }
    }
  });
});
