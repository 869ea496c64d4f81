/**
 * Cascades: scale, depth or max breadth over time of the largest cascades (by final scale), and
 * the cascade size distribution at the selected step as a log-log CCDF.
 */
import { LineChart, type Series } from '../ui/chart.ts';
import { ccdf, latestByRoot, topCascades, type CascadeRows, type CascadeSeries } from '../data/reduce.ts';
import { PALETTE, xDomain, type Panel, type RunState, type ViewState } from '../state.ts';

const TOP = 5;
type Stat = 'scale' | 'depth' | 'max_breadth';

export function cascadesPanel(el: HTMLElement): Panel {
  el.innerHTML = `<h2>Cascades</h2>
    <div class="toggle" role="radiogroup" aria-label="cascade statistic">
      <label><input type="radio" name="cascade-stat" value="scale" checked> scale (users)</label>
      <label><input type="radio" name="cascade-stat" value="depth"> depth</label>
      <label><input type="radio" name="cascade-stat" value="max_breadth"> max breadth</label>
    </div><div class="charts"></div>`;
  const box = el.querySelector<HTMLElement>('.charts')!;
  const over = new LineChart(box, { title: `The ${TOP} largest cascades over time`, xLabel: 'step' });
  over.root.dataset.chart = 'cascade-top';
  const dist = new LineChart(box, { title: 'Cascade size distribution at the selected step (CCDF)', xLabel: 'size (posts)', yLabel: 'P(size ≥ x)', logX: true, logY: true, valueFormat: () => '' });
  dist.root.dataset.chart = 'cascade-ccdf';
  let stat: Stat = 'scale';
  let cache: { rows: number; top: CascadeSeries[] } | undefined;
  let last: [RunState, ViewState] | undefined;
  for (const r of el.querySelectorAll<HTMLInputElement>('input[name="cascade-stat"]')) {
    r.addEventListener('change', () => {
      stat = r.value as Stat;
      if (last) draw(...last);
    });
  }

  const draw = (run: RunState, view: ViewState) => {
    const c = run.cascades;
    if (!c || !c.num.root) {
      const note = 'no cascades.arrow in this run (social scenarios write it)';
      over.render([], { note });
      dist.render([], { note });
      el.dataset.cascades = '0';
      return;
    }
    const rows = c.num as unknown as CascadeRows;
    if (!cache || cache.rows !== c.rows) cache = { rows: c.rows, top: topCascades(rows, TOP) };
    // cascades.arrow's step is the 0-based step in which the cascade grew: after it, x = step + 1.
    const series: Series[] = cache.top.map((s, i) => ({
      name: `root-${s.root}`,
      label: `post #${s.root}`,
      x: s.steps.map((v) => v + 1),
      y: s[stat],
      color: PALETTE[i % PALETTE.length]!,
      step: true,
    }));
    over.render(series, { xDomain: xDomain(run, view), marker: view.step, note: series.length ? undefined : 'no cascade grew yet' });
    const sizes = latestByRoot(rows, rows.size, view.step - 1);
    const d = ccdf(sizes);
    dist.render(d.x.length ? [{ name: 'ccdf', label: `${sizes.length.toLocaleString('en')} cascades after step ${view.step}`, x: d.x, y: d.p, color: PALETTE[2]!, points: true }] : [], {
      note: d.x.length ? undefined : `no cascade grew by step ${view.step}`,
    });
    el.dataset.cascades = String(sizes.length);
  };

  return {
    update(run, view) {
      last = [run, view];
      draw(run, view);
    },
  };
}
