/**
 * The dashboard: loads a run directory through the server (/run/...), draws every panel, and
 * follows a live run through server-sent events (/events).
 *
 * On an experiment directory (experiment.json, no manifest.json) it shows the experiment view
 * instead (panels/experiment.ts); `?run=runs/<id>` shows one of its runs with the panels below,
 * reading /run/runs/<id>/... and following /events?run=runs/<id>.
 *
 * Loading order, for a fast first render at 1M agents: manifest and metrics (small, whole) ->
 * header and time panels; then, in parallel, cascades and archetypes (whole), the selected step's
 * snapshot (only the opinion, archetype and group-label columns, by byte ranges) and a window of
 * graph.arrow for the network sample; then the other snapshots' opinion columns one at a time,
 * each reduced to a histogram and dropped.
 */
import './style.css';
import { fetchEdgeWindows, fetchManifest, fetchSnapshot, fetchTable, HttpError, snapshotStep, SNAPSHOT_ATTRS, type Snapshot } from './data/run.ts';
import { archetypeGroups, histogram, sampleSubgraph } from './data/reduce.ts';
import { OPINION_BINS, OPINION_RANGE, snapshotFor, type Panel, type RunState, type ViewState } from './state.ts';
import { headerPanel, simTime } from './panels/header.ts';
import { timeSeriesPanel } from './panels/timeSeries.ts';
import { opinionPanel } from './panels/opinion.ts';
import { cascadesPanel } from './panels/cascades.ts';
import { recommenderPanel } from './panels/recommender.ts';
import { archetypesPanel } from './panels/archetypes.ts';
import { networkPanel } from './panels/network.ts';
import { experimentView, type ExperimentView } from './panels/experiment.ts';
import { fetchExperiment } from './data/experiment.ts';

/** `?run=DIR`: a run inside the served directory (an experiment's runs/<id>), plain path segments only. */
const RUN_PARAM = new URLSearchParams(location.search).get('run');
const RUN_PATH = /^[A-Za-z0-9_=-][A-Za-z0-9._=-]*(\/[A-Za-z0-9_=-][A-Za-z0-9._=-]*)*$/;
const runPathOk = RUN_PARAM === null || RUN_PATH.test(RUN_PARAM);
const BASE = RUN_PARAM && runPathOk ? `run/${RUN_PARAM.split('/').map(encodeURIComponent).join('/')}/` : 'run/';
/** The network sample reads this many windows of graph.arrow, of this many edge rows each (8 bytes a row). */
const EDGE_WINDOWS = 16;
const EDGE_ROWS = 12_500;

interface Probe {
  /** ms since navigation start when every panel had drawn data for the first time. */
  firstFullRenderMs?: number;
  marks: Record<string, number>;
  /** steps_completed each time the header was drawn (live runs append). */
  renders: number[];
  /** Wall time of each full render (all panels), ms. */
  renderMs: number[];
  bytes: number;
  errors: string[];
}
const probe: Probe = { marks: {}, renders: [], renderMs: [], bytes: 0, errors: [] };
(window as unknown as { __socsim: Probe }).__socsim = probe;
const mark = (name: string) => (probe.marks[name] ??= Math.round(performance.now()));

const $ = <T extends HTMLElement>(sel: string) => document.querySelector<T>(sel)!;

// ---- theme ------------------------------------------------------------------------------------
const media = window.matchMedia('(prefers-color-scheme: dark)');
function applyTheme(): void {
  const chosen = localStorage.getItem('socsim-theme') ?? 'auto';
  const html = document.documentElement;
  if (chosen === 'auto') delete html.dataset.theme;
  else html.dataset.theme = chosen;
  html.dataset.themeResolved = chosen === 'auto' ? (media.matches ? 'dark' : 'light') : chosen;
  $('#theme').textContent = `theme: ${chosen}`;
}
media.addEventListener('change', () => {
  applyTheme();
  render();
});
$('#theme').addEventListener('click', () => {
  const order = ['auto', 'light', 'dark'];
  const now = localStorage.getItem('socsim-theme') ?? 'auto';
  localStorage.setItem('socsim-theme', order[(order.indexOf(now) + 1) % order.length]!);
  applyTheme();
  render();
});
const themeParam = new URLSearchParams(location.search).get('theme');
if (themeParam === 'light' || themeParam === 'dark' || themeParam === 'auto') localStorage.setItem('socsim-theme', themeParam);
applyTheme();

// ---- state --------------------------------------------------------------------------------------
let run: RunState | undefined;
/** Set when the served directory is an experiment (then nothing below `run` is used). */
let experiment: ExperimentView | undefined;
const view: ViewState = { step: 0, range: null, follow: true };
const panels: Panel[] = [];
const scrubber = $<HTMLInputElement>('#step');
const stepOut = $<HTMLOutputElement>('#step-label');
const fromIn = $<HTMLInputElement>('#range-from');
const toIn = $<HTMLInputElement>('#range-to');

function setStep(step: number): void {
  if (!run) return;
  const max = run.manifest.steps_completed;
  view.step = Math.max(0, Math.min(max, Math.round(step)));
  view.follow = view.step === max;
  render();
  void ensureSnapshot();
}

function setRange(r: [number, number] | null): void {
  view.range = r && r[1] > r[0] ? r : null;
  render();
}

const actions = { setStep, setRange };

function render(): void {
  if (!run) return;
  const t0 = performance.now();
  const max = run.manifest.steps_completed;
  scrubber.max = String(max);
  scrubber.value = String(view.step);
  scrubber.setAttribute('aria-valuetext', `after step ${view.step} of ${max}`);
  stepOut.textContent = `after step ${view.step} of ${max} · ${simTime(view.step * run.manifest.step_seconds)}`;
  fromIn.max = toIn.max = String(max);
  fromIn.value = String(view.range?.[0] ?? 0);
  toIn.value = String(view.range?.[1] ?? max);
  $('#follow').toggleAttribute('aria-pressed', view.follow);
  $('#follow').setAttribute('aria-pressed', String(view.follow));
  for (const p of panels) {
    try {
      p.update(run, view);
    } catch (e) {
      probe.errors.push(String((e as Error).stack ?? e));
      console.error(e);
    }
  }
  probe.renders.push(max);
  probe.renderMs.push(Math.round(performance.now() - t0));
  checkReady();
}

/** Coalesces background renders (snapshot histograms arriving one by one) to one per `delay` ms. */
let renderTimer: ReturnType<typeof setTimeout> | undefined;
function scheduleRender(delay = 200): void {
  renderTimer ??= setTimeout(() => {
    renderTimer = undefined;
    render();
  }, delay);
}

// ---- controls ------------------------------------------------------------------------------------
scrubber.addEventListener('input', () => setStep(Number(scrubber.value)));
$('#prev').addEventListener('click', () => setStep(view.step - 1));
$('#next').addEventListener('click', () => setStep(view.step + 1));
$('#follow').addEventListener('click', () => run && setStep(run.manifest.steps_completed));
const rangeChanged = () => setRange([Number(fromIn.value), Number(toIn.value)]);
fromIn.addEventListener('change', rangeChanged);
toIn.addEventListener('change', rangeChanged);
$('#range-all').addEventListener('click', () => setRange(null));
document.addEventListener('keydown', (ev) => {
  if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement || ev.target instanceof HTMLCanvasElement) return;
  if (ev.key === '[') setStep(view.step - 1);
  else if (ev.key === ']') setStep(view.step + 1);
});

// ---- loading ---------------------------------------------------------------------------------------
let networkDrawn = false;
let pendingSnapshots = 0;

function checkReady(): void {
  if (!run || probe.firstFullRenderMs !== undefined) return;
  const loaded = run.metrics && run.cascades !== undefined && run.graph && networkDrawn && run.snap && pendingSnapshots === 0 && run.snapshots.every((s) => run!.hist.has(s.step));
  if (!loaded) return;
  probe.firstFullRenderMs = Math.round(performance.now());
  document.documentElement.dataset.ready = 'true';
}

async function loadMetrics(): Promise<void> {
  const m = await fetchTable(BASE, run!.manifest.files.metrics || 'metrics.arrow');
  if (!m) return;
  run!.metrics = m;
  const step = m.num.step;
  run!.metricX = Float64Array.from({ length: m.rows }, (_v, i) => (step ? step[i]! : i + 1));
}

async function loadTables(): Promise<void> {
  // A finished run lists its extra files; while it runs, the metrics say which exist.
  const m = run!.manifest;
  const other = m.status === 'running' ? undefined : m.files.other;
  const has = (f: string) =>
    other ? other.includes(f) : f === 'cascades.arrow' ? !!run!.metrics?.num.cascades_changed : m.llm.provider !== 'heuristic';
  const [c, a, t] = await Promise.all([
    has('cascades.arrow') ? fetchTable(BASE, 'cascades.arrow') : undefined,
    has('archetypes.arrow') ? fetchTable(BASE, 'archetypes.arrow') : undefined,
    other?.includes('target.arrow') ? fetchTable(BASE, 'target.arrow') : undefined,
  ]);
  run!.cascades = c ?? { rows: 0, names: [], num: {}, str: {} };
  run!.archetypes = a;
  run!.target = t;
}

const snapshotCache = new Map<number, Snapshot>();
let snapLoading: Promise<void> | undefined;

/** Loads (one at a time) the full columns of the snapshot the selected step shows. */
async function ensureSnapshot(): Promise<void> {
  if (!run) return;
  const want = snapshotFor(run, view.step);
  if (!want || run.snap?.step === want.step) return;
  if (snapLoading) {
    await snapLoading;
    return ensureSnapshot();
  }
  snapLoading = (async () => {
    let s = snapshotCache.get(want.step);
    if (!s) {
      s = await fetchSnapshot(BASE, want.name, ['opinion', 'archetype', ...SNAPSHOT_ATTRS]);
      probe.bytes += s.bytes;
      snapshotCache.clear(); // keep one snapshot's columns in memory
      snapshotCache.set(want.step, s);
    }
    if (s.opinion && !run!.hist.has(s.step)) run!.hist.set(s.step, histogram(s.opinion, OPINION_BINS, ...OPINION_RANGE));
    run!.snap = s;
    run!.groups = s.archetype ? archetypeGroups(s.archetype, s.attrs) : [];
  })();
  try {
    await snapLoading;
  } finally {
    snapLoading = undefined;
  }
  render();
}

/**
 * Histograms of the snapshots not yet reduced, newest first: only their opinion column is read (by
 * byte ranges), reduced to OPINION_BINS counts and dropped; at most HIST_PARALLEL files in flight.
 */
const HIST_PARALLEL = 3;
let histLoading = false;
async function loadHistograms(): Promise<void> {
  if (histLoading || !run) return;
  histLoading = true;
  const r = run;
  const inFlight = new Set<number>();
  const worker = async () => {
    for (;;) {
      const next = [...r.snapshots].reverse().find((s) => !r.hist.has(s.step) && !inFlight.has(s.step));
      if (!next) return;
      inFlight.add(next.step);
      pendingSnapshots++;
      try {
        const s = await fetchSnapshot(BASE, next.name, ['opinion']);
        probe.bytes += s.bytes;
        r.hist.set(next.step, s.opinion ? histogram(s.opinion, OPINION_BINS, ...OPINION_RANGE) : new Float64Array(OPINION_BINS));
      } finally {
        inFlight.delete(next.step);
        pendingSnapshots--;
      }
      scheduleRender();
    }
  };
  try {
    await Promise.all(Array.from({ length: HIST_PARALLEL }, worker));
  } finally {
    histLoading = false;
  }
  render();
}

async function loadGraph(): Promise<void> {
  const file = run!.manifest.files.graph || 'graph.arrow';
  const w = await fetchEdgeWindows(BASE, file, EDGE_WINDOWS, EDGE_ROWS);
  probe.bytes += w.bytes;
  run!.graph = { sub: sampleSubgraph(w.source, w.target, run!.manifest.agents, 2000, 8000), window: w.rows, total: w.total, file };
}

function setSnapshots(): void {
  run!.snapshots = run!.manifest.files.agents.map((name) => ({ name, step: snapshotStep(name) })).filter((s) => Number.isFinite(s.step)).sort((a, b) => a.step - b.step);
}

function fail(e: unknown): void {
  probe.errors.push(String((e as Error).message ?? e));
  const box = $('#error');
  box.hidden = false;
  box.textContent = `could not load the run: ${(e as Error).message ?? e}`;
  console.error(e);
}

/** The experiment view, when the served directory is an experiment (experiment.json); false otherwise. */
async function bootExperiment(): Promise<boolean> {
  let plan;
  try {
    plan = await fetchExperiment(BASE);
  } catch (e) {
    if (e instanceof HttpError && e.status === 404) return false;
    throw e;
  }
  $('#waiting').hidden = true;
  document.body.dataset.view = 'experiment';
  document.title = `socsim · experiment ${plan.name}`;
  const main = $('#experiment');
  main.hidden = false;
  experiment = experimentView(main, BASE, plan, {
    onReady() {
      probe.firstFullRenderMs = Math.round(performance.now());
      document.documentElement.dataset.ready = 'true';
    },
    onError(e) {
      probe.errors.push(String((e as Error).stack ?? e));
      console.error(e);
    },
  });
  await experiment.refresh();
  return true;
}

async function boot(): Promise<void> {
  if (!runPathOk) throw new Error(`bad run path in the address: ${RUN_PARAM}`);
  if (RUN_PARAM) {
    const back = $<HTMLAnchorElement>('#back');
    back.hidden = false;
    back.href = './';
  }
  let manifest;
  try {
    manifest = await fetchManifest(BASE);
  } catch (e) {
    if (e instanceof HttpError && (e.status === 503 || e.status === 404)) {
      if (e.status === 404 && !RUN_PARAM && (await bootExperiment())) return;
      $('#waiting').hidden = false;
      return; // the events stream calls boot() again when the run is ready
    }
    throw e;
  }
  $('#waiting').hidden = true;
  mark('manifest');
  run = { manifest, snapshots: [], hist: new Map(), live: live.connected && manifest.status === 'running' };
  setSnapshots();
  const hashStep = Number(new URLSearchParams(location.hash.slice(1)).get('step'));
  view.step = Number.isFinite(hashStep) && location.hash.includes('step=') ? Math.min(hashStep, manifest.steps_completed) : manifest.steps_completed;
  view.follow = view.step === manifest.steps_completed;
  document.title = `socsim · ${manifest.scenario.name}`;
  try {
    await loadMetrics();
  } catch (e) {
    run = undefined; // the next event (or a reload) boots again
    throw e;
  }
  $('#error').hidden = true;
  mark('metrics');
  panels.push(
    headerPanel($('#run-header')),
    timeSeriesPanel($('#panel-timeseries'), actions),
    opinionPanel($('#panel-opinion')),
    cascadesPanel($('#panel-cascades')),
    recommenderPanel($('#panel-recommender')),
    archetypesPanel($('#panel-archetypes')),
    networkPanel($('#panel-network'), () => {
      networkDrawn = true;
      mark('network');
      checkReady();
    }),
  );
  render();
  mark('first-panels');
  await Promise.all([
    loadTables().then(() => (mark('tables'), render())),
    ensureSnapshot().then(() => mark('snapshot')),
    loadGraph().then(() => (mark('graph'), render())),
  ]);
  await loadHistograms();
  mark('histograms');
  render();
}

// ---- live updates ------------------------------------------------------------------------------
const live = { connected: false, refreshing: false, dirty: false, retryMs: 0, retry: undefined as ReturnType<typeof setTimeout> | undefined };
/** Backoff of a failed refresh's retries: 0.5 s, doubling up to 30 s. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 30_000;

let booting: Promise<void> | undefined;
function startBoot(): void {
  booting ??= boot()
    .catch(fail)
    .finally(() => {
      booting = undefined;
      // A change announced while booting may be newer than the manifest the boot read.
      if (live.dirty && run) void refresh();
    });
}

async function refresh(): Promise<void> {
  if (experiment) return experiment.refresh();
  if (!run) {
    if (booting) live.dirty = true;
    return startBoot();
  }
  if (live.refreshing) {
    live.dirty = true;
    return;
  }
  live.refreshing = true;
  try {
    do {
      live.dirty = false;
      const m = await fetchManifest(BASE);
      const grew = m.steps_completed !== run.manifest.steps_completed;
      const wasFollowing = view.follow;
      run.manifest = m;
      run.live = live.connected && m.status === 'running';
      if (grew || m.status !== 'running') {
        setSnapshots();
        await Promise.all([loadMetrics(), loadTables()]);
        if (wasFollowing) view.step = m.steps_completed;
      }
      render();
      if (wasFollowing) await ensureSnapshot();
      void loadHistograms();
    } while (live.dirty);
    live.retryMs = 0;
  } catch (e) {
    probe.errors.push(String((e as Error).message ?? e));
    // Tried again later, with backoff: after a run's last step no event comes to try again, so
    // a transient failure (a dropped connection, a table read mid-write) would otherwise stay.
    live.retryMs = Math.min(live.retryMs > 0 ? live.retryMs * 2 : RETRY_FIRST_MS, RETRY_MAX_MS);
    clearTimeout(live.retry);
    live.retry = setTimeout(() => void refresh(), live.retryMs);
  } finally {
    live.refreshing = false;
  }
}

function connect(): void {
  const es = new EventSource(RUN_PARAM && runPathOk ? `events?run=${encodeURIComponent(RUN_PARAM)}` : 'events');
  es.addEventListener('hello', (ev) => {
    live.connected = true;
    $('#live').dataset.state = 'connected';
    const d = JSON.parse((ev as MessageEvent).data) as { ready: boolean; steps_completed: number };
    if (d.ready && (!run || d.steps_completed !== run.manifest.steps_completed)) void refresh();
  });
  for (const name of ['step', 'status', 'ready', 'experiment']) es.addEventListener(name, () => void refresh());
  es.onerror = () => {
    live.connected = false;
    $('#live').dataset.state = 'disconnected';
  };
}

connect();
startBoot();
