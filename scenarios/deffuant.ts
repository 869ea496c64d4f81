/** Deffuant bounded confidence: the classic pairwise scheme or socsim's synchronous one (models/opinion.ts). */
import { z } from 'zod';
import { DEFFUANT_SCHEMES, deffuant, opinionStats } from '../models/opinion.ts';
import { initialOpinionParam } from '../models/initialOpinions.ts';
import { classicScenario } from './classic.ts';

export default classicScenario({
  name: 'deffuant',
  description:
    'Deffuant bounded-confidence opinion dynamics. scheme "pairwise" (default; Deffuant, Neau, Amblard and Weisbuch 2000; NDlib AlgorithmicBias with gamma 0 and mu 0.5): ' +
    'a step is N sequential pair updates (N = agents): a uniform agent and a uniform account it follows both move by mu toward each other when |x_i - x_j| < eps; ' +
    'one thread whatever --threads says. scheme "synchronous": every agent moves toward one sampled followee at once, one-sided (the mean drifts)',
  params: {
    eps: z.number().min(0).max(2).default(0.3).describe('confidence bound: a pair interacts when |x_i - x_j| < eps (strict, as in the paper and NDlib)'),
    mu: z.number().min(0).max(1).default(0.5).describe('convergence parameter: each side moves by mu times the difference (the paper takes (0, 0.5]; NDlib fixes 0.5)'),
    scheme: z
      .enum(DEFFUANT_SCHEMES)
      .default('pairwise')
      .describe('pairwise: N sequential pair updates per step, both sides move (Deffuant et al. 2000, NDlib); synchronous: all agents at once, one-sided'),
    initial: initialOpinionParam('uniform'),
  },
  phases: (p) => [deffuant(p), opinionStats()],
});
