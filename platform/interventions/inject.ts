/**
 * `inject`: a story posted by chosen accounts, followed in stories.arrow.
 */
import { z } from 'zod';
import { hash, keyOf, streamOf } from '../../sim-core/rng.ts';
import { KIND, VERACITY } from '../posts.ts';
import { addPost } from '../newPost.ts';
import { defineIntervention } from './kind.ts';
import { agentSelector } from './selectors.ts';

const topic = z.union([z.number().int().min(0).max(254), z.literal('random')]);

export default defineIntervention({
  name: 'inject',
  doc:
    '`count` accounts drawn at random among the matching ones each post one original post with the given stance, topic, veracity and novelty, ' +
    'tagged `tag` (post selectors name it; stories.arrow follows each post: reach, sharers, depth). ' +
    'Novelty models the gap Vosoughi, Roy & Aral measured (Science 2018: false rumours were more novel than true ones, and spread farther); ' +
    'the misinformation experiment injects the same stories as false or as true.',
  fields: {
    authors: agentSelector.default({}).describe('Who may post them (default: any account).'),
    count: z.number().int().min(1).describe('Posts to inject: one each by `count` accounts drawn at random among the matching ones.'),
    stance: z.number().min(-1).max(1).describe('The posts\' opinion stance in [-1, 1].'),
    topic: topic.default('random').describe('Topic cluster of the posts, or `random` (one drawn per post).'),
    veracity: z.enum(VERACITY).default('unrated').describe('Their rating: false, true or unrated (selectors and stories.arrow read it).'),
    novelty: z.number().min(-5).max(5).default(0).describe('Novelty in standard deviations above ordinary content (platform.noveltyWeight; organic posts 0).'),
    tag: z.string().min(1).describe('Name of the story (stories.arrow, selectors\' `tag`).'),
    // A matched design, e.g. each author posts one false and one true story.
    sample: z.string().min(1).optional().describe('Injects naming the same sample draw the same authors (given the same selector and count); topics stay drawn per inject.'),
  },
  selectors: { authors: 'agents' },
  definesTag: 'tag',
  checkWorld(iv, ctx) {
    if (typeof iv.topic === 'number' && iv.topic >= ctx.social.topics) ctx.fail('topic', `topic ${iv.topic} is not below the number of topic clusters (${ctx.social.topics})`);
  },
  apply(iv, ctx) {
    const { social: s, world, step, key } = ctx;
    const sampleKey = iv.sample !== undefined ? keyOf(world.seed, streamOf(`sample.${iv.sample}`), 0) : key;
    const match = ctx.matchAgents(iv.authors, sampleKey);
    const cand: number[] = [];
    for (let v = 0; v < world.agents.length; v++) if (s.moderation.suspended[v] === 0 && match(v)) cand.push(v);
    // A random sample of `count` of them: the smallest keyed hashes (ties: lower id).
    const chosen = cand
      .map((v) => [hash(sampleKey, v, 1), v] as const)
      .sort((x, y) => x[0] - y[0] || x[1] - y[1])
      .slice(0, iv.count)
      .map(([, v]) => v)
      .sort((x, y) => x - y);
    const D = s.posts.dim;
    const tag = s.posts.tags.indexOf(iv.tag);
    const veracity = VERACITY.indexOf(iv.veracity);
    chosen.forEach((u, j) => {
      const t = iv.topic === 'random' ? hash(key, j, 2) % s.topics : iv.topic;
      const id = addPost(s, { author: u, step, kind: KIND.original, parent: -1, stance: iv.stance, topic: s.prototypes, topicOffset: t * D, flags: 0, veracity, novelty: iv.novelty, tag });
      s.stories.register({ id, tag, veracity, author: u, step, novelty: iv.novelty, stance: iv.stance }, world.agents.length);
    });
    return { posts: chosen.length, agents: chosen.length };
  },
  finish({ social: s, world }) {
    if (!world.out) return;
    world.out.writeFile('stories.arrow', s.stories.columns(s.posts.tags, world.stepSeconds / 3600), s.stories.size);
  },
});
