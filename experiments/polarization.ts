/**
 * Recommenders and polarization: the same population and follow graph under three feed rankers
 * (random: uniform candidates from the window, as OASIS's random recommender; chronological;
 * x-interest: recency x follower factor x interest cosine). Opinions move by bounded confidence
 * with backfire from what users read (platform/kernels.ts `exposure`), so a ranker changes
 * opinions only through what it shows. Outcomes at the end of the run: polarization = the
 * bimodality coefficient of opinions (Pfister et al., Frontiers in Psychology 2013: (skew^2 + 1) /
 * (excess kurtosis + 3(n-1)^2/((n-2)(n-3))); above 5/9 suggests two modes), opinion variance, and
 * over the run exposure_diversity = mean distinct topic clusters per feed item (feed_diversity) and
 * the echo-chamber index (1 - mean |stance - opinion| / 2 of what users were shown).
 *
 *   npx socsim experiment experiments/polarization.ts --out runs/polarization --jobs 2
 */
import { defineExperiment, metric } from 'socsim';

export default defineExperiment({
  name: 'polarization',
  description: 'random vs chronological vs x-interest feeds on the same population: polarization and exposure diversity',
  scenario: 'social-feed',
  params: {},
  arms: {
    random: { platform: { ranker: 'random' } },
    chronological: { platform: { ranker: 'chronological' } },
    'x-interest': { platform: { ranker: 'x-interest' } },
  },
  reference: 'random',
  seeds: 10,
  defaults: { agents: 20000, hours: 72 },
  outcomes: {
    polarization: metric('opinion_bimodality').final(),
    opinion_var: metric('opinion_var').final(),
    exposure_diversity: metric('feed_diversity').mean(),
    echo_chamber_index: metric('echo_chamber_index').mean(),
  },
});
