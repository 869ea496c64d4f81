/** Recommender: echo-chamber index, feed diversity and in-network share of the feeds over time. */
import { LineChart } from '../ui/chart.ts';
import { metricSeries } from './timeSeries.ts';
import { xDomain, type Panel } from '../state.ts';

const LABELS: Record<string, string> = {
  echo_chamber_index: 'echo-chamber index',
  feed_diversity: 'feed diversity',
  in_network_share: 'in-network share',
  feed_stance_distance: 'stance distance user–feed',
};

export function recommenderPanel(el: HTMLElement): Panel {
  el.innerHTML = `<h2>Recommender</h2><p class="ranker note"></p><div class="charts"></div>`;
  const chart = new LineChart(el.querySelector<HTMLElement>('.charts')!, { title: 'Feed metrics per step', xLabel: 'step' });
  chart.root.dataset.chart = 'recommender';
  return {
    update(run, view) {
      const platform = (run.manifest.parameters.platform ?? {}) as Record<string, unknown>;
      el.querySelector('.ranker')!.textContent = platform.ranker
        ? `ranker ${String(platform.ranker)} · feed ${String(platform.feedSize ?? '?')} items, up to ${String(platform.inNetwork ?? '?')} in-network`
        : 'no recommender in this scenario';
      const s = metricSeries(run, Object.keys(LABELS), (n) => LABELS[n]!);
      chart.render(s, { xDomain: xDomain(run, view), marker: view.step, note: s.length ? undefined : 'no feed metrics in this run' });
    },
  };
}
