/** SIR (or SIS with --set sis=true) epidemic over the follow graph. */
import { z } from 'zod';
import { sir } from '../models/cascade.ts';
import { seedSpec } from '../models/seeds.ts';
import { classicScenario } from './classic.ts';

const seeds = seedSpec('random', 100);

export default classicScenario({
  name: 'sir',
  description: 'SIR/SIS contagion: infectious accounts infect followers with probability beta, recover with gamma',
  params: {
    beta: z.number().min(0).max(1).default(0.05).describe('probability per step that an infectious account infects each susceptible follower'),
    gamma: z.number().min(0).max(1).default(0.2).describe('probability per step that an infectious account recovers'),
    sis: z.boolean().default(false).describe('SIS: recovered accounts become susceptible again, instead of immune'),
    ...seeds.params,
  },
  check: seeds.check,
  phases: (p) => [sir({ beta: p.beta, gamma: p.gamma, sis: p.sis, ...seeds.options(p) })],
});
