/** SIR (or SIS with --set sis=true) epidemic over the follow graph. */
import { z } from 'zod';
import { sir } from '../models/cascade.ts';
import { classicScenario } from './classic.ts';

export default classicScenario({
  name: 'sir',
  description: 'SIR/SIS contagion: infectious accounts infect followers with probability beta, recover with gamma',
  params: {
    beta: z.number().min(0).max(1).default(0.05),
    gamma: z.number().min(0).max(1).default(0.2),
    sis: z.boolean().default(false),
    seeds: z.enum(['hubs', 'leaves', 'random']).default('random'),
    seedCount: z.number().int().positive().default(100),
  },
  phases: (p) => [sir(p)],
});
