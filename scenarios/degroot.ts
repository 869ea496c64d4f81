/** DeGroot averaging: opinions become the mean of one's own and followed accounts' opinions. */
import { z } from 'zod';
import { degroot, opinionStats } from '../models/opinion.ts';
import { classicScenario } from './classic.ts';

export default classicScenario({
  name: 'degroot',
  description: 'DeGroot opinion averaging over followed accounts',
  params: { selfWeight: z.number().min(0).default(1) },
  phases: (p) => [degroot(p), opinionStats()],
});
