/**
 * A rumour spreading through a follow graph by independent cascade: each account that has just
 * heard it passes it to each of its followers once, with probability p. The graph is generated
 * (Barabasi-Albert, m = 5) unless the run is given a real one with --graph FILE.
 *
 *   npx socsim run scenarios/rumour.ts --agents 20000 --set p=0.08
 *   npx socsim describe scenarios/rumour.ts
 */
import { classicScenario, independentCascade, seedSpec, z } from 'socsim';

const seeds = seedSpec('hubs', 10);

export default classicScenario({
  name: 'rumour',
  description: 'A rumour spread by independent cascade from a few seed accounts',
  params: {
    p: z.number().min(0).max(1).default(0.06).describe('chance that an account passes the rumour to each follower, once'),
    ...seeds.params,
  },
  steps: 20,
  check: seeds.check,
  phases: (p) => [independentCascade({ p: p.p, ...seeds.options(p) })],
});
