/**
 * When a fact-check comes matters: a false story labelled at hour 1, 6, 12 or 24 after it appears,
 * or never. Fact-checks typically lag misinformation by 10-20 hours (Shao et al., "Hoaxy", WWW
 * 2016 companion: a characteristic lag of about 13 h; Zubiaga et al., PLoS ONE 2016: false rumours
 * took about 14 h to be debunked), so hours 12 and 24 are the observed range and hours 1 and 6
 * what fast or automated moderation could do. The label scales likes and reshares of the story's
 * posts (and of later reposts and quotes) by platform.labels (Martel and Rand 2024: sharing -24.7%,
 * belief -27.6%; platform/state.ts). Arms share seeds, so each is the same world as `none` until
 * its label hour (common random numbers) and the paired differences isolate the label.
 * Outcome: false_reach = mean unique users shown each of the 30 false stories by the end.
 *
 *   npx socsim experiment experiments/fact-check-timing.ts --out runs/fact-check-timing --jobs 2
 */
import { defineExperiment, rows } from 'socsim';

const inject = { kind: 'inject', hour: 0, count: 30, stance: 0, veracity: 'false', novelty: 1.2, tag: 'rumour' };
const labelAt = (hour: number) => ({ interventions: [inject, { kind: 'label', hour, posts: { tag: 'rumour' } }] });

export default defineExperiment({
  name: 'fact-check-timing',
  description: 'a false story labelled at hour 1, 6, 12 or 24, or never: how far it still spreads',
  scenario: 'social-feed',
  params: { story: { count: 0 }, interventions: [inject] },
  arms: {
    none: {},
    'label-h1': labelAt(1),
    'label-h6': labelAt(6),
    'label-h12': labelAt(12),
    'label-h24': labelAt(24),
  },
  reference: 'none',
  seeds: 10,
  defaults: { agents: 20000, hours: 48 },
  outcomes: {
    false_reach: rows('stories.arrow', { mean: (r) => r.reach as number }),
    false_sharers: rows('stories.arrow', { mean: (r) => r.sharers as number }),
  },
});
