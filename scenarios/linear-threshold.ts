/** Linear threshold: an account adopts once the share of adopters among those it follows reaches its threshold. */
import { z } from 'zod';
import { linearThreshold } from '../models/cascade.ts';
import { classicScenario } from './classic.ts';

export default classicScenario({
  name: 'linear-threshold',
  description: 'Linear threshold model with uniform random thresholds and equal weights',
  params: {
    seeds: z.enum(['hubs', 'leaves', 'random']).default('random'),
    seedCount: z.number().int().positive().default(5000),
  },
  phases: (p) => [linearThreshold(p)],
});
