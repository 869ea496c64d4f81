/**
 * How much the infection probability beta changes an SIR epidemic on a Barabasi-Albert graph.
 * Small and fast (the example experiment of the tests): 3 arms x 4 seeds of 2,000 agents, 20 hours.
 *
 *   npx socsim experiment experiments/sir-beta.ts --out runs/sir-beta --jobs 2
 */
import { custom, defineExperiment, metric, rows } from 'socsim';

export default defineExperiment({
  name: 'sir-beta',
  description: 'SIR contagion at three infection probabilities: final size, peak and speed of the epidemic',
  scenario: 'sir',
  params: { gamma: 0.2, seedCount: 20 },
  arms: {
    base: { beta: 0.05 },
    low: { beta: 0.03 },
    high: { beta: 0.08 },
  },
  reference: 'base',
  seeds: 4,
  defaults: { agents: 2000, hours: 20 },
  outcomes: {
    final_recovered: metric('recovered').final(),
    peak_infectious: metric('infectious').peak(),
    hours_to_100_recovered: metric('recovered').timeTo(100),
    // Share of each political leaning ever infected, from the last agent snapshot.
    ever_infected: rows('agents/final', {
      groupBy: 'leaning',
      mean: (r) => (r.state === 'susceptible' ? 0 : 1),
      groups: ['left', 'center-left', 'center', 'center-right', 'right'],
    }),
    attack_rate: custom((run) => {
      const m = run.table('metrics.arrow');
      const last = m.numRows - 1;
      return Number(m.getChild('recovered')!.get(last)) / (run.manifest.agents ?? NaN);
    }),
  },
});
