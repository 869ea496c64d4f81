/**
 * Opinion distribution over time: a heatmap of per-snapshot histograms (each column one snapshot,
 * shaded by the share of agents in each opinion bin), the polarization index per step from the
 * metrics (variance and Sarle's bimodality coefficient), and the histogram at the selected step.
 */
import { axisBottom, axisLeft, format, interpolateBlues, interpolateInferno, scaleLinear, select } from 'd3';
import { LineChart } from '../ui/chart.ts';
import { metricSeries } from './timeSeries.ts';
import { OPINION_BINS, OPINION_RANGE, opinionColor, snapshotFor, xDomain, type Panel, type RunState, type ViewState } from '../state.ts';

const M = { top: 8, right: 12, bottom: 30, left: 40 };

export function opinionPanel(el: HTMLElement): Panel {
  el.innerHTML = `<h2>Opinion distribution</h2>
    <figure class="chart heatmap"><figcaption>Share of agents per opinion bin, at each snapshot</figcaption><svg role="img" aria-label="opinion heatmap"></svg></figure>
    <div class="polar"></div>
    <figure class="chart histogram"><figcaption>Opinions at the selected step</figcaption><svg role="img" aria-label="opinion histogram at the selected step"></svg><p class="note hist-note"></p></figure>`;
  const heat = el.querySelector<HTMLElement>('.heatmap')!;
  const hist = el.querySelector<HTMLElement>('.histogram')!;
  const polar = new LineChart(el.querySelector<HTMLElement>('.polar')!, { title: 'Polarization index (metrics)', xLabel: 'step' });
  polar.root.dataset.chart = 'polarization';
  let last: [RunState, ViewState] | undefined;
  new ResizeObserver(() => last && drawAll(...last)).observe(heat);

  const drawHeatmap = (run: RunState, view: ViewState) => {
    const width = Math.max(240, heat.clientWidth || 480);
    const height = 190;
    const svg = select(heat).select('svg').attr('viewBox', `0 0 ${width} ${height}`);
    svg.selectAll('*').remove();
    const iw = width - M.left - M.right;
    const ih = height - M.top - M.bottom;
    const [d0, d1] = xDomain(run, view);
    const x = scaleLinear().domain([d0, d1]).range([0, iw]);
    const y = scaleLinear().domain(OPINION_RANGE).range([ih, 0]);
    const g = svg.append('g').attr('transform', `translate(${M.left},${M.top})`);
    const snaps = run.snapshots.filter((s) => run.hist.has(s.step));
    const dark = document.documentElement.dataset.themeResolved === 'dark';
    const shade = dark ? (t: number) => interpolateInferno(0.05 + 0.9 * t) : (t: number) => interpolateBlues(0.04 + 0.96 * t);
    // Log shading, so a few crowded bins (agents at the ends of the scale) leave the rest visible.
    const level = (share: number, max: number) => Math.log1p(200 * share) / Math.log1p(200 * max);
    const cells = g.append('g').attr('class', 'cells');
    const binH = ih / OPINION_BINS;
    snaps.forEach((s, k) => {
      const h = run.hist.get(s.step)!;
      const total = h.reduce((a, b) => a + b, 0) || 1;
      const max = Math.max(...h) / total || 1;
      // Each column covers the steps nearer to its snapshot than to its neighbours.
      const lo = k > 0 ? (snaps[k - 1]!.step + s.step) / 2 : s.step;
      const hi = k + 1 < snaps.length ? (s.step + snaps[k + 1]!.step) / 2 : Math.max(s.step, run.manifest.steps_completed);
      const x0 = Math.max(0, x(lo));
      const x1 = Math.min(iw, x(hi));
      if (x1 < x0) return;
      const w = Math.max(3, x1 - x0);
      const col = cells.append('g').attr('class', 'column').attr('data-step', s.step);
      for (let b = 0; b < OPINION_BINS; b++) {
        const share = h[b]! / total;
        col
          .append('rect')
          .attr('class', 'cell')
          .attr('x', Math.min(x0, iw - w))
          .attr('width', w)
          .attr('y', ih - (b + 1) * binH)
          .attr('height', binH + 0.5)
          .attr('fill', shade(level(share, max)))
          .append('title')
          .text(`after step ${s.step}: ${format('.1%')(share)} in [${(OPINION_RANGE[0] + (b * 2) / OPINION_BINS).toFixed(2)}, ${(OPINION_RANGE[0] + ((b + 1) * 2) / OPINION_BINS).toFixed(2)})`);
      }
    });
    const mx = x(view.step);
    if (mx >= 0 && mx <= iw) g.append('line').attr('class', 'marker').attr('x1', mx).attr('x2', mx).attr('y1', 0).attr('y2', ih);
    g.append('g').attr('class', 'axis x').attr('transform', `translate(0,${ih})`).call(axisBottom(x).ticks(Math.max(2, Math.floor(iw / 70))) as never);
    g.append('g').attr('class', 'axis y').call(axisLeft(y).ticks(5) as never);
    g.append('text').attr('class', 'axis-label').attr('x', iw).attr('y', ih + 26).attr('text-anchor', 'end').text('step');
    heat.dataset.columns = String(snaps.length);
    if (!run.snapshots.length) g.append('text').attr('class', 'note').attr('x', iw / 2).attr('y', ih / 2).attr('text-anchor', 'middle').text('no agent snapshots in this run');
  };

  const drawHistogram = (run: RunState, view: ViewState) => {
    const width = Math.max(240, hist.clientWidth || 480);
    const height = 150;
    const svg = select(hist).select('svg').attr('viewBox', `0 0 ${width} ${height}`);
    svg.selectAll('*').remove();
    const note = hist.querySelector<HTMLElement>('.hist-note')!;
    const snap = snapshotFor(run, view.step);
    const h = snap && run.hist.get(snap.step);
    if (!snap || !h) {
      note.textContent = snap ? 'loading…' : 'no agent snapshots in this run';
      hist.dataset.step = '';
      return;
    }
    const iw = width - M.left - M.right;
    const ih = height - M.top - M.bottom;
    const total = h.reduce((a, b) => a + b, 0) || 1;
    const x = scaleLinear().domain(OPINION_RANGE).range([0, iw]);
    const y = scaleLinear().domain([0, Math.max(...h) / total || 1]).nice().range([ih, 0]);
    const g = svg.append('g').attr('transform', `translate(${M.left},${M.top})`);
    const bw = iw / OPINION_BINS;
    g.append('g')
      .attr('class', 'bars')
      .selectAll('rect')
      .data(Array.from(h))
      .join('rect')
      .attr('class', 'bar')
      .attr('data-count', (c) => c)
      .attr('x', (_c, b) => b * bw + 0.5)
      .attr('width', Math.max(1, bw - 1))
      .attr('y', (c) => y(c / total))
      .attr('height', (c) => ih - y(c / total))
      .attr('fill', (_c, b) => opinionColor(OPINION_RANGE[0] + ((b + 0.5) * 2) / OPINION_BINS));
    g.append('g').attr('class', 'axis x').attr('transform', `translate(0,${ih})`).call(axisBottom(x).ticks(9) as never);
    g.append('g').attr('class', 'axis y').call(axisLeft(y).ticks(4, '.0%') as never);
    g.append('text').attr('class', 'axis-label').attr('x', iw).attr('y', ih + 26).attr('text-anchor', 'end').text('opinion (−1 left … +1 right)');
    hist.dataset.step = String(snap.step);
    let mean = 0;
    for (let b = 0; b < OPINION_BINS; b++) mean += h[b]! * (OPINION_RANGE[0] + ((b + 0.5) * 2) / OPINION_BINS);
    mean /= total;
    note.textContent = `snapshot after step ${snap.step}${snap.step !== view.step ? ` (the latest at or before step ${view.step})` : ''} · ${format(',')(total)} agents · mean ${mean.toFixed(3)}`;
  };

  const drawAll = (run: RunState, view: ViewState) => {
    drawHeatmap(run, view);
    const ps = metricSeries(run, ['opinion_bimodality', 'opinion_var'], (n) => (n === 'opinion_bimodality' ? 'bimodality (Sarle)' : 'variance'), 2);
    polar.render(ps, { xDomain: xDomain(run, view), marker: view.step, note: ps.length ? undefined : 'no opinion metrics in this run' });
    drawHistogram(run, view);
  };

  return {
    update(run, view) {
      last = [run, view];
      drawAll(run, view);
    },
  };
}
