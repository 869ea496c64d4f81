/**
 * `remove`: matching posts taken down.
 */
import { FLAG } from '../posts.ts';
import { defineIntervention } from './kind.ts';
import { postSelector } from './selectors.ts';

export default defineIntervention({
  name: 'remove',
  doc: 'Matching posts are taken down: they leave every feed and candidate list from then on (their counters and cascades stay in the outputs).',
  fields: { posts: postSelector.describe('The posts to take down.') },
  selectors: { posts: 'posts' },
  apply(iv, ctx) {
    const flags = ctx.social.posts.cols.flags;
    return { posts: ctx.eachPost(ctx.matchPosts(iv.posts), (r) => (flags[r] |= FLAG.removed)), agents: 0 };
  },
});
