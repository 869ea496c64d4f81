/** Hegselmann-Krause bounded confidence over followed accounts. */
import { z } from 'zod';
import { hegselmannKrause, initialOpinionParam, opinionStats } from '../models/opinion.ts';
import { classicScenario } from './classic.ts';

export default classicScenario({
  name: 'hegselmann-krause',
  description: 'Hegselmann-Krause bounded-confidence opinion dynamics',
  params: { eps: z.number().min(0).max(2).default(0.2), initial: initialOpinionParam('uniform') },
  phases: (p) => [hegselmannKrause(p), opinionStats()],
});
