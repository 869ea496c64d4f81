/**
 * `label`: a fact-check label on the matching posts.
 */
import { z } from 'zod';
import { FLAG } from '../posts.ts';
import { defineIntervention } from './kind.ts';
import { postSelector } from './selectors.ts';

export default defineIntervention({
  name: 'label',
  doc:
    'Matching posts get a fact-check label: from then on likes and reshares of labelled posts are scaled by platform.labels.like and .reshare ' +
    '(the intervention may set those multipliers), and reposts and quotes of a labelled post carry the label. ' +
    "The default multipliers are Martel & Rand's (Nature Human Behaviour 2024, 21 experiments: warning labels cut sharing of false headlines by 24.7%).",
  fields: {
    posts: postSelector.describe('The posts to label.'),
    reshare: z.number().min(0).optional().describe('Set platform.labels.reshare from then on (default: keep the platform\'s).'),
    like: z.number().min(0).optional().describe('Set platform.labels.like from then on (default: keep the platform\'s).'),
  },
  selectors: { posts: 'posts' },
  apply(iv, ctx) {
    const cfg = ctx.social.cfg;
    if (iv.reshare !== undefined) cfg.labels.reshare = iv.reshare;
    if (iv.like !== undefined) cfg.labels.like = iv.like;
    const flags = ctx.social.posts.cols.flags;
    return { posts: ctx.eachPost(ctx.matchPosts(iv.posts), (r) => (flags[r] |= FLAG.factCheck)), agents: 0 };
  },
});
