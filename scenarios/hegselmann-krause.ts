/** Hegselmann-Krause bounded confidence over followed accounts (synchronous; models/opinion.ts). */
import { z } from 'zod';
import { hegselmannKrause, opinionStats } from '../models/opinion.ts';
import { initialOpinionParam } from '../models/initialOpinions.ts';
import { classicScenario } from './classic.ts';

export default classicScenario({
  name: 'hegselmann-krause',
  description:
    'Hegselmann-Krause bounded-confidence opinion dynamics, synchronous (Hegselmann and Krause 2002): every agent takes the mean of the start-of-step opinions within eps of its own ' +
    'among its followees and itself (|x_j - x_i| <= eps). includeSelf=false strict=true give NDlib HKModel\'s rule (NDlib updates one agent at a time; socsim does not)',
  params: {
    eps: z.number().min(0).max(2).default(0.2).describe('confidence bound'),
    includeSelf: z.boolean().default(true).describe('count the agent\'s own opinion in its mean (the paper: true; NDlib: false)'),
    strict: z.boolean().default(false).describe('|x_j - x_i| < eps instead of <= eps (the paper: false; NDlib: true)'),
    initial: initialOpinionParam('uniform'),
  },
  phases: (p) => [hegselmannKrause(p), opinionStats()],
});
