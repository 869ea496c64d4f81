/**
 * Herding on votes: Muchnik, Aral and Taylor, "Social influence bias: a randomized experiment"
 * (Science 2013, 341:647-651). On a news-aggregation site they gave new comments one up-vote, one
 * down-vote or nothing at creation; up-treated comments ended with final ratings 25% higher and
 * were 32% more likely to get a positive first vote, while down-treated ones were corrected back to
 * the control's level.
 *
 * Here new original posts are assigned at random (assign intervention): 20% get an artificial
 * up-vote, 20% a down-vote, 60% nothing; the vote shows in the post's score and ranking (a
 * reddit-hot, vote-ranked platform), never in its likes/dislikes. Outcomes per group:
 * final_score = likes - dislikes given by others (the treatment excluded), positive_share =
 * likes / (likes + dislikes). Mechanisms: platform.votes.herding and .correction (sources in
 * platform/state.ts); the `no-herding` arm switches both off, so any group difference left there
 * comes from elsewhere (ranking of the treatment vote alone).
 *
 *   npx socsim experiment experiments/herding.ts --out runs/herding --jobs 2
 */
import { defineExperiment, rows } from 'socsim';

const original = (r: Record<string, unknown>) => r.kind === 'original' && r.group !== '';

export default defineExperiment({
  name: 'herding',
  description: 'Muchnik et al. 2013: one random up- or down-vote at creation, and the score others then give',
  scenario: 'social-feed',
  params: {
    story: { count: 0 },
    platform: { ranker: 'reddit-hot' },
    interventions: [{ kind: 'assign', hour: 0, groups: { up: { share: 0.2, vote: 1 }, down: { share: 0.2, vote: -1 }, control: { share: 0.6, vote: 0 } } }],
  },
  arms: {
    herding: {},
    'no-herding': { platform: { votes: { herding: 0, correction: 0 } } },
  },
  reference: 'herding',
  referenceGroup: 'control',
  seeds: 20,
  defaults: { agents: 20000, hours: 48 },
  outcomes: {
    final_score: rows('posts.arrow', { where: original, groupBy: 'group', mean: (r) => (r.likes as number) - (r.dislikes as number), groups: ['up', 'down', 'control'] }),
    positive_share: rows('posts.arrow', { where: original, groupBy: 'group', ratio: [(r) => r.likes as number, (r) => (r.likes as number) + (r.dislikes as number)], groups: ['up', 'down', 'control'] }),
  },
});
