/** DeGroot averaging: opinions become the mean of one's own and followed accounts' opinions. */
import { z } from 'zod';
import { degroot, initialOpinionParam, opinionStats } from '../models/opinion.ts';
import { classicScenario } from './classic.ts';

export default classicScenario({
  name: 'degroot',
  description: 'DeGroot opinion averaging over followed accounts',
  params: { selfWeight: z.number().min(0).default(1), initial: initialOpinionParam('uniform') },
  phases: (p) => [degroot(p), opinionStats()],
});
