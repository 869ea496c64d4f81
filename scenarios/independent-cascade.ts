/** Independent cascade from seed accounts (NDlib synchronous semantics). */
import { z } from 'zod';
import { independentCascade } from '../models/cascade.ts';
import { classicScenario } from './classic.ts';

export default classicScenario({
  name: 'independent-cascade',
  description: 'Independent cascade: each newly active account gets one chance per follower, with probability p',
  params: {
    p: z.number().min(0).max(1).default(0.1),
    seeds: z.enum(['hubs', 'leaves', 'random']).default('hubs'),
    seedCount: z.number().int().positive().default(10),
  },
  phases: (p) => [independentCascade(p)],
});
