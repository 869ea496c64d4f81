/** Deffuant bounded confidence (synchronous, one-sided; see models/opinion.ts). */
import { z } from 'zod';
import { deffuant, initialOpinionParam, opinionStats } from '../models/opinion.ts';
import { classicScenario } from './classic.ts';

export default classicScenario({
  name: 'deffuant',
  description: 'Deffuant bounded-confidence opinion dynamics',
  params: {
    eps: z.number().min(0).max(2).default(0.3),
    mu: z.number().min(0).max(1).default(0.5),
    initial: initialOpinionParam('uniform'),
  },
  phases: (p) => [deffuant(p), opinionStats()],
});
