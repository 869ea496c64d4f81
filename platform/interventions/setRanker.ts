/**
 * `setRanker`: the feed ranker from then on.
 */
import { z } from 'zod';
import { defineIntervention } from './kind.ts';

export default defineIntervention({
  name: 'setRanker',
  doc:
    'The feed ranker (platform.ranker) from then on, e.g. a switch to the reverse-chronological feed of followed accounts ' +
    '(Guess et al., Science 2023: a chronological feed for three months on Facebook and Instagram).',
  fields: { ranker: z.string().min(1).describe('a ranker name, as platform.ranker takes') },
  rankerNamed: (iv) => ['ranker', iv.ranker],
  apply(iv, ctx) {
    ctx.social.cfg.ranker = iv.ranker;
    return { posts: 0, agents: 0 };
  },
});
