/** Linear threshold: an account adopts once the share of adopters among those it follows reaches its threshold. */
import { z } from 'zod';
import { linearThreshold } from '../models/cascade.ts';
import { seedSpec } from '../models/seeds.ts';
import { classicScenario } from './classic.ts';

const seeds = seedSpec('random', 5000);

export default classicScenario({
  name: 'linear-threshold',
  description: 'Linear threshold model with equal weights and uniform random (or one fixed) thresholds',
  params: {
    threshold: z
      .union([z.literal('uniform'), z.number().min(0).max(1)], { error: 'must be "uniform" or a number in [0, 1]' })
      .default('uniform')
      .describe('"uniform": each node its own threshold from U[0, 1) (Kempe et al. 2003); a number: every node that threshold (NDlib ThresholdModel)'),
    ...seeds.params,
  },
  check: seeds.check,
  phases: (p) => [linearThreshold({ threshold: p.threshold, ...seeds.options(p) })],
});
