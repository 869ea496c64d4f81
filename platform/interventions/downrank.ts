/**
 * `downrank`: matching posts' ranking scores scaled down.
 */
import { z } from 'zod';
import { defineIntervention } from './kind.ts';
import { postSelector } from './selectors.ts';

export default defineIntervention({
  name: 'downrank',
  doc:
    "Matching posts' ranking scores are multiplied by `factor` from then on (a multiplier on the post's rank, which its later reposts and quotes inherit); " +
    'a demotion, not a removal: a user with fewer candidates than feed slots still sees them.',
  fields: { posts: postSelector.describe('The posts to downrank.'), factor: z.number().min(0).max(1).describe('Multiplier on their ranking scores (0 hides them from ranked feeds).') },
  selectors: { posts: 'posts' },
  apply(iv, ctx) {
    const rank = ctx.social.posts.cols.rank;
    return { posts: ctx.eachPost(ctx.matchPosts(iv.posts), (r) => (rank[r] *= iv.factor)), agents: 0 };
  },
});
