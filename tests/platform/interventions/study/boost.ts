/**
 * A study's own intervention kind, written only with socsim's public API: matching posts' ranking
 * scores multiplied by `factor` (at least 1), the mirror image of the bundled downrank. It keeps a
 * count of the boosts applied in the run as its state, to exercise the per-run state.
 */
import { defineIntervention, postSelector, z } from '../../../../index.ts';

export default defineIntervention({
  name: 'boost',
  doc: "Matching posts' ranking scores multiplied by `factor` (>= 1) from then on.",
  fields: { posts: postSelector, factor: z.number().min(1) },
  selectors: { posts: 'posts' },
  state: () => ({ applied: 0 }),
  apply(iv, ctx) {
    const rank = ctx.social.posts.cols.rank;
    ctx.state.applied++;
    return { posts: ctx.eachPost(ctx.matchPosts(iv.posts), (r) => (rank[r] *= iv.factor)), agents: ctx.state.applied };
  },
});
