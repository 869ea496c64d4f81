/**
 * The experiment view (an experiment directory, docs/run-directory.md): the plan in a header,
 * the arms side by side over time (series.arrow: one line per arm, the mean across seeds, over its
 * 95% band, with a metric picker and a grid-point picker), the effects table (effects.arrow,
 * sortable), and the runs, each a link to its own dashboard. A table not written yet is shown as
 * "not computed yet" and read again on the next `refresh()` (the server's `experiment` event).
 */
import { fetchJson, fetchTable, HttpError, type Columns, type RunManifest } from '../data/run.ts';
import {
  armSeries,
  effectRows,
  excludesZero,
  fmtInterval,
  fmtStat,
  gridLabel,
  gridPoints,
  rowGridKeys,
  seriesMetrics,
  sortEffects,
  type EffectRow,
  type EffectSort,
  type ExperimentPlan,
} from '../data/experiment.ts';
import { LineChart } from '../ui/chart.ts';
import { PALETTE } from '../state.ts';

export interface ExperimentHooks {
  /** Called once, when every section has drawn what exists (tables or their pending state). */
  onReady(): void;
  onError(e: unknown): void;
}

export interface ExperimentView {
  /** Reads the tables (and the runs' states) again and redraws. */
  refresh(): Promise<void>;
}

interface Table {
  cols: Columns;
  /** Grid key of every row. */
  keys: string[];
}

/** The page link of a run inside the experiment: the single-run view under its directory. */
export function runLink(dir: string): string {
  return `?run=${encodeURIComponent(dir)}`;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Columns of the effects table: label, the sort it offers (if any), and the class of its cells. */
const EFFECT_COLUMNS: Array<{ label: string; sort?: EffectSort; cls: string; title?: string }> = [
  { label: 'outcome', sort: 'outcome', cls: 'outcome' },
  { label: 'group', sort: 'group', cls: 'group' },
  { label: 'arm', sort: 'arm', cls: 'arm' },
  { label: 'n', sort: 'n', cls: 'num n', title: 'seeds with a finite value' },
  { label: 'mean [95% CI]', sort: 'mean', cls: 'num mean', title: 'mean across seeds, 95% t interval' },
  { label: 'diff vs reference [paired 95% CI]', sort: 'diff', cls: 'num diff', title: 'minus the reference arm (or, with referenceGroup, the reference group of the same arm), paired by seed (common random numbers)' },
  { label: 'unpaired 95% CI', cls: 'num unpaired', title: 'Welch interval of the same difference, not paired by seed' },
];

export function experimentView(el: HTMLElement, base: string, plan: ExperimentPlan, hooks: ExperimentHooks): ExperimentView {
  const gridKeys = Object.keys(plan.grid ?? {});
  const points = gridPoints(plan);
  const armColor = (arm: string) => PALETTE[(plan.arms.indexOf(arm) + PALETTE.length) % PALETTE.length]!;
  const armLabel = (arm: string) => (arm === plan.reference ? `${arm} (reference)` : arm);

  el.innerHTML = `
    <header id="exp-header" class="panel">
      <div class="title"><h1 id="exp-title"></h1><p class="description"></p></div>
      <dl class="facts">
        <div><dt>scenario</dt><dd data-field="scenario"></dd></div>
        <div><dt>arms</dt><dd data-field="arms"></dd></div>
        <div><dt>reference</dt><dd data-field="reference"></dd></div>
        <div><dt>seeds</dt><dd data-field="seeds"></dd></div>
        <div><dt>grid</dt><dd data-field="grid"></dd></div>
        <div><dt>outcomes</dt><dd data-field="outcomes"></dd></div>
        <div><dt>runs</dt><dd data-field="runs"></dd></div>
      </dl>
      <label class="grid-pick" hidden>grid point <select id="exp-grid" aria-label="grid point"></select></label>
    </header>
    <section id="exp-series" class="panel" aria-label="arms over time">
      <h2>Arms over time <span class="note">mean across seeds, shaded: 95% interval</span></h2>
      <label class="metric-pick">metric <select id="exp-metric" aria-label="metric"></select></label>
      <p class="pending note" hidden></p>
      <div class="charts"></div>
    </section>
    <section id="exp-effects" class="panel" aria-label="effects">
      <h2>Effects <span class="note grid-note"></span></h2>
      <p class="pending note" hidden></p>
      <div class="table-wrap"><table><thead><tr></tr></thead><tbody></tbody></table></div>
    </section>
    <section id="exp-runs" class="panel" aria-label="runs">
      <h2>Runs <span class="note">each opens its own dashboard</span></h2>
      <div class="table-wrap"><table><thead><tr><th>run</th><th>arm</th>${gridKeys.map((k) => `<th>${esc(k)}</th>`).join('')}<th class="num">seed</th><th>status</th></tr></thead><tbody></tbody></table></div>
    </section>`;
  const $ = <T extends HTMLElement>(sel: string) => el.querySelector<T>(sel)!;
  const field = (name: string) => $(`[data-field="${name}"]`);

  // ---- header -----------------------------------------------------------------------------------
  $('#exp-title').textContent = plan.name;
  $('#exp-header .description').textContent = plan.description ?? '';
  field('scenario').textContent = plan.scenario;
  field('arms').innerHTML = plan.arms.map((a) => `<span class="arm-name${a === plan.reference ? ' reference' : ''}" style="--arm:${armColor(a)}">${esc(armLabel(a))}</span>`).join(' ');
  field('reference').textContent = plan.reference;
  field('seeds').textContent = plan.seeds.join(', ');
  field('grid').textContent = gridKeys.length ? gridKeys.map((k) => `${k} ∈ {${plan.grid[k]!.join(', ')}}`).join(' × ') : 'none';
  field('outcomes').textContent = plan.outcomes.join(', ');
  field('runs').textContent = String(plan.runs.length);

  const gridSelect = $<HTMLSelectElement>('#exp-grid');
  gridSelect.replaceChildren(...points.map((p) => new Option(p.label, p.key)));
  $('.grid-pick').hidden = gridKeys.length === 0;
  const metricSelect = $<HTMLSelectElement>('#exp-metric');
  const chart = new LineChart($('#exp-series .charts'), { title: '', xLabel: 'step', height: 260 });
  chart.root.dataset.chart = 'arms';

  let series: Table | undefined;
  let effects: Table | undefined;
  let sort: { by: EffectSort; desc: boolean } = { by: 'outcome', desc: false };

  const pending = (section: string, file: string, table: Table | undefined) => {
    const sec = $(section);
    sec.dataset.state = table ? 'ready' : 'pending';
    const p = sec.querySelector<HTMLElement>('.pending')!;
    p.hidden = !!table;
    p.textContent = table ? '' : `${file} is not computed yet: the experiment writes it after its runs; this page reads it when it appears.`;
  };

  // ---- arms over time ---------------------------------------------------------------------------
  const drawSeries = () => {
    pending('#exp-series', 'series.arrow', series);
    const metrics = series ? seriesMetrics(series.cols) : [];
    if (metricSelect.options.length !== metrics.length || metrics.some((m, i) => metricSelect.options[i]!.value !== m)) {
      const keep = metricSelect.value;
      metricSelect.replaceChildren(...metrics.map((m) => new Option(m, m)));
      metricSelect.value = metrics.includes(keep) ? keep : (metrics[0] ?? '');
    }
    metricSelect.disabled = !series;
    chart.root.hidden = !series;
    if (!series) return;
    const metric = metricSelect.value;
    const arms = armSeries(series.cols, series.keys, plan, metric, gridSelect.value);
    chart.root.querySelector('figcaption')!.textContent = `${metric}${gridKeys.length ? ` at ${gridSelect.selectedOptions[0]?.text ?? ''}` : ''}`;
    const last = Math.max(0, ...arms.map((a) => a.x[a.x.length - 1] ?? 0));
    chart.render(
      arms.map((a) => ({ name: a.arm, label: armLabel(a.arm), x: a.x, y: a.mean, band: { lo: a.lo, hi: a.hi }, color: armColor(a.arm) })),
      { marker: last, note: arms.length ? `legend: mean after step ${last}` : `no rows for ${metric} at this grid point` },
    );
    chart.root.dataset.metric = metric;
  };

  // ---- effects ----------------------------------------------------------------------------------
  const effectsHead = $('#exp-effects thead tr');
  const effectsBody = $('#exp-effects tbody');
  const drawEffects = () => {
    pending('#exp-effects', 'effects.arrow', effects);
    $('#exp-effects .table-wrap').hidden = !effects;
    $('#exp-effects .grid-note').textContent = gridKeys.length ? `at ${gridLabel(gridKeys, points.find((p) => p.key === gridSelect.value)?.values ?? {})}` : '';
    if (!effects) return;
    const rows = sortEffects(effectRows(effects.cols, effects.keys, plan, gridSelect.value), plan, sort.by, sort.desc);
    const grouped = rows.some((r) => r.group !== '');
    const cols = EFFECT_COLUMNS.filter((c) => grouped || c.sort !== 'group');
    effectsHead.replaceChildren(
      ...cols.map((c) => {
        const th = document.createElement('th');
        th.className = c.cls;
        if (c.title) th.title = c.title;
        if (!c.sort) {
          th.textContent = c.label;
          return th;
        }
        th.setAttribute('aria-sort', sort.by === c.sort ? (sort.desc ? 'descending' : 'ascending') : 'none');
        const b = document.createElement('button');
        b.type = 'button';
        b.className = 'sort';
        b.dataset.sort = c.sort;
        b.textContent = c.label + (sort.by === c.sort ? (sort.desc ? ' ▼' : ' ▲') : '');
        b.addEventListener('click', () => {
          sort = { by: c.sort!, desc: sort.by === c.sort ? !sort.desc : false };
          drawEffects();
        });
        th.append(b);
        return th;
      }),
    );
    effectsBody.replaceChildren(...rows.map((r) => effectRow(r, grouped)));
  };
  const effectRow = (r: EffectRow, grouped: boolean) => {
    const tr = document.createElement('tr');
    tr.dataset.arm = r.arm;
    tr.dataset.outcome = r.outcome;
    tr.dataset.group = r.group;
    if (r.reference) tr.className = 'reference';
    const byGroup = r.versus.startsWith('group ');
    const sig = excludesZero(r.diff_ci_low, r.diff_ci_high);
    const cells: Array<[string, string]> = [
      ['outcome', esc(r.outcome)],
      ...(grouped ? ([['group', `${esc(r.group || '(all)')}${r.reference && byGroup ? ' <span class="ref">reference</span>' : ''}`]] as Array<[string, string]>) : []),
      ['arm', `<span class="swatch" style="background:${armColor(r.arm)}"></span>${esc(r.arm)}${r.reference && !byGroup ? ' <span class="ref">reference</span>' : ''}`],
      ['num n', String(r.n)],
      ['num mean', `${fmtStat(r.mean)} <span class="ci">${fmtInterval(r.ci_low, r.ci_high)}</span>`],
      ['num diff', r.reference ? '<span class="ci">—</span>' : `${fmtStat(r.diff, true)} <span class="ci">${fmtInterval(r.diff_ci_low, r.diff_ci_high)}${r.versus.startsWith('group ') ? ` vs ${esc(r.versus.slice(6))}` : ''}</span>`],
      ['num unpaired', r.reference ? '<span class="ci">—</span>' : `<span class="ci">${fmtInterval(r.unpaired_ci_low, r.unpaired_ci_high)}</span>`],
    ];
    tr.innerHTML = cells.map(([cls, html]) => `<td class="${cls}">${html}</td>`).join('');
    if (sig && !r.reference) {
      const td = tr.querySelector<HTMLElement>('td.diff')!;
      td.classList.add('sig');
      td.title = 'the paired 95% interval excludes 0';
    }
    return tr;
  };

  // ---- runs -------------------------------------------------------------------------------------
  /** The status cell of each run, by id. */
  const statusCells = new Map<string, HTMLElement>();
  $('#exp-runs tbody').replaceChildren(
    ...plan.runs.map((r) => {
      const tr = document.createElement('tr');
      tr.dataset.run = r.id;
      tr.innerHTML = `<td><a href="${esc(runLink(r.dir))}">${esc(r.id)}</a></td><td>${esc(r.arm)}</td>${gridKeys.map((k) => `<td>${esc(String(r.grid?.[k] ?? ''))}</td>`).join('')}<td class="num">${esc(String(r.seed))}</td><td class="status">…</td>`;
      statusCells.set(r.id, tr.querySelector<HTMLElement>('td.status')!);
      return tr;
    }),
  );
  /** Runs whose manifest said completed (not read again). */
  const done = new Set<string>();
  const RUN_PARALLEL = 4;
  const loadStatuses = async () => {
    const todo = plan.runs.filter((r) => !done.has(r.id));
    const one = async (r: (typeof todo)[number]) => {
      const cell = statusCells.get(r.id)!;
      try {
        const m = await fetchJson<RunManifest>(`${base}${r.dir.split('/').map(encodeURIComponent).join('/')}/`, 'manifest.json');
        cell.textContent = m.status === 'completed' ? 'completed' : `${m.status} · ${m.steps_completed} / ${m.steps_requested}`;
        cell.dataset.status = m.status;
        if (m.status === 'completed') done.add(r.id);
      } catch (e) {
        if (!(e instanceof HttpError && e.status === 404)) throw e;
        cell.textContent = 'not started';
        cell.dataset.status = 'pending';
      }
    };
    const queue = [...todo];
    await Promise.all(Array.from({ length: RUN_PARALLEL }, async () => {
      for (let r = queue.shift(); r; r = queue.shift()) await one(r);
    }));
  };

  // ---- loading ----------------------------------------------------------------------------------
  const read = async (name: string): Promise<Table | undefined> => {
    const cols = await fetchTable(base, name);
    return cols && { cols, keys: rowGridKeys(cols, gridKeys) };
  };
  const draw = () => {
    for (const f of [drawSeries, drawEffects]) {
      try {
        f();
      } catch (e) {
        hooks.onError(e);
      }
    }
  };
  metricSelect.addEventListener('change', drawSeries);
  gridSelect.addEventListener('change', draw);

  let readyOnce = false;
  let loading: Promise<void> | undefined;
  let again = false;
  const refresh = async (): Promise<void> => {
    if (loading) {
      again = true;
      return loading;
    }
    loading = (async () => {
      do {
        again = false;
        const [s, e] = await Promise.all([read('series.arrow'), read('effects.arrow')]);
        series = s;
        effects = e;
        draw();
        if (!readyOnce) {
          readyOnce = true;
          hooks.onReady();
        }
        await loadStatuses().catch(hooks.onError);
      } while (again);
    })();
    try {
      await loading;
    } finally {
      loading = undefined;
    }
  };
  return { refresh };
}
