/**
 * False news spreads farther, deeper and faster: Vosoughi, Roy and Aral, "The spread of true and
 * false news online" (Science 2018, 359:1146-1151): on Twitter 2006-2017, false rumours reached
 * more people, deeper and faster than true ones (truth took about six times as long to reach 1,500
 * people), and false news was more novel than true news.
 *
 * Here the same 30 stories (same authors, topics, stance 0, hour 0) are injected as false in one
 * arm and as true in the other; the arms share seeds, so everything else is the same world
 * (common random numbers) and the paired difference isolates veracity. What differs is what
 * Vosoughi et al. measured in the content: false stories are 1.2 standard deviations more novel
 * (their three novelty measures separate false from true with Kolmogorov-Smirnov distances
 * 0.42-0.46, which two unit normals 1.2 SD apart give), and novelty raises reshare probability
 * through platform.noveltyWeight (Berger and Milkman 2012; platform/state.ts). Nothing else in
 * the platform reads veracity. The `false-no-novelty` arm keeps the label `false` but switches the
 * novelty mechanism off: it should not differ from `true`.
 *
 * Outcomes: per story from stories.arrow, averaged over the 30: reach (unique users shown it),
 * depth, max_breadth, hours_to_reach_100 and _1000 (over the stories that reached 100 or 1,000
 * users) and reached_1000 (the share that did).
 * (The paper's groups are here arms, so that the two share random numbers; one run holding both
 * kinds of story works too, with groupBy 'veracity', but its comparison is far noisier.)
 *
 *   npx socsim experiment experiments/misinformation.ts --out runs/misinformation --jobs 2
 */
import { defineExperiment, rows } from 'socsim';

const stories = (veracity: 'true' | 'false', novelty: number) => ({
  interventions: [{ kind: 'inject', hour: 0, count: 30, stance: 0, veracity, novelty, tag: 'stories' }],
});
const mean = (k: string) => rows('stories.arrow', { mean: (r) => r[k] as number });

export default defineExperiment({
  name: 'misinformation',
  description: 'Vosoughi et al. 2018: the same stories injected as false (more novel) or as true',
  scenario: 'social-feed',
  params: { story: { count: 0 } },
  arms: {
    true: stories('true', 0),
    false: stories('false', 1.2),
    'false-no-novelty': { ...stories('false', 1.2), platform: { noveltyWeight: 0 } },
  },
  reference: 'true',
  seeds: 20,
  defaults: { agents: 20000, hours: 48 },
  outcomes: {
    reach: mean('reach'),
    depth: mean('depth'),
    max_breadth: mean('max_breadth'),
    hours_to_reach_100: rows('stories.arrow', { where: (r) => Number.isFinite(r.hours_to_reach_100), mean: (r) => r.hours_to_reach_100 as number }),
    // 100 users is 0.5% of the default 20,000; 1,000 is closer to Vosoughi et al.'s 1,500 of millions.
    hours_to_reach_1000: rows('stories.arrow', { where: (r) => Number.isFinite(r.hours_to_reach_1000), mean: (r) => r.hours_to_reach_1000 as number }),
    reached_1000: rows('stories.arrow', { mean: (r) => (Number.isFinite(r.hours_to_reach_1000) ? 1 : 0) }),
  },
});
