/** DeGroot averaging: opinions become the mean of one's own and followed accounts' opinions. */
import { z } from 'zod';
import { degroot, opinionStats } from '../models/opinion.ts';
import { initialOpinionParam } from '../models/initialOpinions.ts';
import { classicScenario } from './classic.ts';

export default classicScenario({
  name: 'degroot',
  description: 'DeGroot opinion averaging over followed accounts, synchronous (DeGroot 1974): every agent takes the weighted mean of its own and its followees\' start-of-step opinions',
  params: { selfWeight: z.number().min(0).default(1).describe('weight of the agent\'s own opinion; each followee weighs 1'), initial: initialOpinionParam('uniform') },
  phases: (p) => [degroot(p), opinionStats()],
});
