/** Independent cascade from seed accounts (NDlib synchronous semantics). */
import { z } from 'zod';
import { independentCascade } from '../models/cascade.ts';
import { seedSpec } from '../models/seeds.ts';
import { classicScenario } from './classic.ts';

const seeds = seedSpec('hubs', 10);

export default classicScenario({
  name: 'independent-cascade',
  description: 'Independent cascade: each newly active account gets one chance per follower, with probability p',
  params: {
    p: z.number().min(0).max(1).default(0.1).describe('probability that a newly active account activates each inactive follower (one chance)'),
    ...seeds.params,
  },
  check: seeds.check,
  phases: (p) => [independentCascade({ p: p.p, ...seeds.options(p) })],
});
