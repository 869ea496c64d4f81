/**
 * Does it matter who starts a rumour? The same rumour (scenarios/rumour.ts) seeded at the ten
 * most-followed accounts or at ten random ones, over 10 seeds; common random numbers pair the
 * arms seed by seed, so the difference comes with a tight interval.
 *
 *   npx socsim experiment experiments/seeding.ts --jobs 2
 *   npx socsim serve runs/seeding
 */
import { defineExperiment, metric, rows } from 'socsim';

export default defineExperiment({
  name: 'seeding',
  description: 'A rumour seeded at hubs against the same rumour seeded at random accounts',
  scenario: '../scenarios/rumour.ts',
  arms: {
    hubs: { seeds: 'hubs' },
    random: { seeds: 'random' },
  },
  reference: 'random',
  seeds: 10,
  defaults: { agents: 20_000, steps: 20 },
  outcomes: {
    reached: metric('ic_active').final(),
    hours_to_1000: metric('ic_active').timeTo(1000),
    // Share of each political leaning that heard the rumour, from the last agent snapshot.
    reached_share: rows('agents/final', {
      groupBy: 'leaning',
      mean: (r) => (r.state === 'inactive' ? 0 : 1),
    }),
  },
});
