/** Voter model: each agent copies the state of one followed account picked uniformly, every step. */
import { z } from 'zod';
import { voter } from '../models/opinion.ts';
import { classicScenario } from './classic.ts';

export default classicScenario({
  name: 'voter',
  description: 'Synchronous voter model over the follow graph',
  params: { states: z.number().int().min(2).max(255).default(2) },
  phases: (p) => [voter({ states: p.states })],
});
