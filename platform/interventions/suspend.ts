/**
 * `suspend`: matching accounts suspended.
 */
import { FLAG } from '../posts.ts';
import { defineIntervention } from './kind.ts';
import { agentSelector } from './selectors.ts';

export default defineIntervention({
  name: 'suspend',
  doc:
    'Matching accounts are suspended: they are never active again, and their posts and the reshares of them leave every feed. ' +
    'Its row counts the accounts newly suspended and the posts removed with them.',
  fields: { agents: agentSelector.describe('The accounts to suspend.') },
  selectors: { agents: 'agents' },
  apply(iv, ctx) {
    const s = ctx.social;
    const match = ctx.matchAgents(iv.agents);
    let agents = 0;
    for (let v = 0; v < ctx.world.agents.length; v++) {
      if (s.moderation.suspended[v] === 0 && match(v)) {
        s.moderation.suspended[v] = 1;
        agents++;
      }
    }
    // The activate kernel may hold a device copy (sim-core/gpu/executor.ts).
    s.moderation.wrote(s.moderation.suspended);
    const c = s.posts.cols;
    const posts = ctx.eachPost((r) => s.moderation.suspended[c.author[r]] === 1 || s.moderation.suspended[c.root_author[r]] === 1, (r) => (c.flags[r] |= FLAG.removed));
    return { posts, agents };
  },
});
