/**
 * Time series of metrics: active users (with a brush that picks the step range for every time
 * panel), actions by type, posts by kind, LLM calls and failures, Community Notes (runs with
 * notes), and any other metric column;
 * in a calibration's best run (target.arrow beside the metrics), each matched column with its target.
 */
import { LineChart, type Series } from '../ui/chart.ts';
import { PALETTE, xDomain, type Actions, type Panel, type RunState, type ViewState } from '../state.ts';

const ACTIONS = ['like', 'dislike', 'repost', 'quote', 'comment', 'post', 'follow', 'unfollow', 'mute', 'report'];
const POSTS = ['posts_original', 'posts_repost', 'posts_quote', 'posts_comment'];
const LLM = ['llm_calls', 'llm_failures', 'llm_cache_hits'];
const NOTES = ['notes_written', 'note_ratings', 'notes_shown', 'posts_noted'];

/** Series for the named metric columns that exist. */
export function metricSeries(run: RunState, names: string[], labels: (n: string) => string = (n) => n, offset = 0): Series[] {
  const m = run.metrics;
  if (!m || !run.metricX) return [];
  return names
    .filter((n) => m.num[n])
    .map((n, i) => ({ name: n, label: labels(n), x: run.metricX!, y: m.num[n]!, color: PALETTE[(i + offset) % PALETTE.length]! }));
}

/** Each matched column of a calibration's target.arrow as the run's metric (a line) and the target (points). */
export function targetSeries(run: RunState): Series[] {
  const t = run.target;
  if (!t || !t.num.step) return [];
  const x = Float64Array.from(t.num.step, Number); // as metricX: the step
  return t.names
    .filter((n) => n !== 'step' && t.num[n])
    .flatMap((n, i) => [
      ...metricSeries(run, [n], (c) => `fit ${c}`, 2 * i),
      { name: `target ${n}`, label: `target ${n}`, x, y: t.num[n]!, color: PALETTE[(2 * i + 1) % PALETTE.length]!, points: true },
    ]);
}

export function timeSeriesPanel(el: HTMLElement, actions: Actions): Panel {
  el.innerHTML = `<h2 id="ts-title">Metrics over time</h2><div class="charts"></div>
    <label class="other">other metric <select aria-label="other metric"></select></label>`;
  const box = el.querySelector<HTMLElement>('.charts')!;
  const active = new LineChart(box, { title: 'Active users (drag to pick a step range)', xLabel: 'step', onBrush: (r) => actions.setRange(r) });
  active.root.dataset.chart = 'active';
  const acts = new LineChart(box, { title: 'Actions by type', xLabel: 'step' });
  acts.root.dataset.chart = 'actions';
  const posts = new LineChart(box, { title: 'Posts by kind', xLabel: 'step' });
  posts.root.dataset.chart = 'posts';
  const llm = new LineChart(box, { title: 'LLM calls and failures', xLabel: 'step' });
  llm.root.dataset.chart = 'llm';
  const notes = new LineChart(box, { title: 'Community Notes: written, ratings, shown, posts noted', xLabel: 'step' });
  notes.root.dataset.chart = 'notes';
  const other = new LineChart(box, { title: 'Other metric', xLabel: 'step' });
  other.root.dataset.chart = 'other';
  const fit = new LineChart(box, { title: 'Calibration: fit and target (points)', xLabel: 'step' });
  fit.root.dataset.chart = 'fit';
  const select = el.querySelector('select')!;
  let lastRun: RunState | undefined;
  let lastView: ViewState | undefined;
  select.addEventListener('change', () => lastRun && lastView && draw(lastRun, lastView));

  const draw = (run: RunState, view: ViewState) => {
    const domain = xDomain(run, view);
    const full: [number, number] = [0, Math.max(1, run.manifest.steps_completed)];
    const marker = view.step;
    const activeSeries = metricSeries(run, ['active_users']);
    active.render(activeSeries, { xDomain: full, marker, brush: view.range, note: activeSeries.length ? undefined : 'no active_users metric in this run' });
    const a = metricSeries(run, ACTIONS.map((x) => `actions_${x}`), (n) => n.replace('actions_', ''));
    acts.render(a, { xDomain: domain, marker, note: a.length ? undefined : 'no action metrics in this run' });
    const p = metricSeries(run, POSTS, (n) => n.replace('posts_', ''));
    posts.render(p, { xDomain: domain, marker, note: p.length ? undefined : 'no post metrics in this run' });
    const l = metricSeries(run, LLM, (n) => n.replace('llm_', ''), 2);
    llm.render(l, { xDomain: domain, marker, note: l.length ? undefined : `no LLM provider in this run (behaviour: ${run.manifest.llm.provider})` });
    const n = metricSeries(run, NOTES, (c) => c.replace('_', ' '), 4);
    notes.root.hidden = n.length === 0;
    if (n.length > 0) notes.render(n, { xDomain: domain, marker });
    fit.root.hidden = !run.target;
    if (run.target) fit.render(targetSeries(run), { xDomain: domain, marker });
    const chosen = select.value;
    other.render(chosen ? metricSeries(run, [chosen], undefined, 6) : [], { xDomain: domain, marker });
  };

  return {
    update(run, view) {
      lastRun = run;
      lastView = view;
      const m = run.metrics;
      if (m) {
        const names = m.names.filter((n) => n !== 'step' && n !== 'time' && m.num[n]);
        if (select.options.length !== names.length) {
          const keep = select.value;
          select.replaceChildren(...names.map((n) => new Option(n, n)));
          const fallback = names.find((n) => n.startsWith('opinion_')) ?? names[0] ?? '';
          select.value = names.includes(keep) ? keep : fallback;
        }
      }
      draw(run, view);
    },
  };
}
