/** Voter model: each agent copies the state of one followed account picked uniformly, every step. */
import { z } from 'zod';
import { voter } from '../models/opinion.ts';
import { classicScenario } from './classic.ts';

export default classicScenario({
  name: 'voter',
  description: 'Synchronous voter model over the follow graph',
  params: {
    states: z.number().int().min(2).max(255).default(2).describe('number of opinion states'),
    shares: z.array(z.number().nonnegative()).optional().describe('initial share of each state, one weight per state (default equal)'),
  },
  check(p, ctx) {
    if (!p.shares) return;
    if (p.shares.length !== p.states) ctx.addIssue({ code: 'custom', path: ['shares'], message: `needs ${p.states} weights, one per state` });
    else if (!(p.shares.reduce((a, b) => a + b, 0) > 0)) ctx.addIssue({ code: 'custom', path: ['shares'], message: 'must not all be zero' });
  },
  phases: (p) => [voter({ states: p.states, shares: p.shares })],
});
