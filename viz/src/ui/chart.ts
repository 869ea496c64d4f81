/**
 * A small SVG line chart over columns: each series is an x column and a y column (typed arrays),
 * drawn as one path, optionally over a shaded band (a confidence interval); an optional vertical marker (the selected step), an optional x brush, log
 * axes, and an HTML legend whose entries show each series' value at the marker.
 */
import { area, axisBottom, axisLeft, brushX, extent, format, line, curveStepAfter, curveLinear, scaleLinear, scaleLog, select, type BrushBehavior, type Selection } from 'd3';

export interface Series {
  name: string;
  label?: string;
  x: ArrayLike<number>;
  y: ArrayLike<number>;
  color: string;
  step?: boolean;
  points?: boolean;
  /** A band from `lo` to `hi` at each x (same length as x), drawn under the line. */
  band?: { lo: ArrayLike<number>; hi: ArrayLike<number> };
}

export interface ChartOptions {
  title: string;
  height?: number;
  xLabel?: string;
  yLabel?: string;
  logX?: boolean;
  logY?: boolean;
  /** Called with [x0, x1] (rounded to steps) when the user brushes, null when cleared. */
  onBrush?(range: [number, number] | null): void;
  /** Format of legend values. */
  valueFormat?(v: number): string;
}

export interface ChartView {
  xDomain?: [number, number];
  yDomain?: [number, number];
  marker?: number;
  brush?: [number, number] | null;
  note?: string;
}

const MARGIN = { top: 8, right: 12, bottom: 30, left: 52 };

export function formatValue(v: number): string {
  if (!Number.isFinite(v)) return '–';
  if (Number.isInteger(v)) return format(',')(v);
  const a = Math.abs(v);
  return a >= 100 ? format(',.0f')(v) : a >= 1 ? format('.2f')(v) : format('.3f')(v);
}

/** The y value at x = `at` (the last point with x <= at), or NaN. */
export function valueAt(s: Pick<Series, 'x' | 'y'>, at: number): number {
  let v = NaN;
  for (let i = 0; i < s.x.length; i++) {
    if (s.x[i]! <= at) v = s.y[i]!;
    else break;
  }
  return v;
}

export class LineChart {
  readonly o: ChartOptions;
  readonly root: HTMLElement;
  private readonly svg: Selection<SVGSVGElement, unknown, null, undefined>;
  private readonly legend: HTMLUListElement;
  private readonly noteEl: HTMLParagraphElement;
  private series: Series[] = [];
  private view: ChartView = {};
  /** Everything but the brush; redrawn from scratch on each draw. */
  private readonly content: Selection<SVGGElement, unknown, null, undefined>;
  /**
   * The brush layer persists across draws, so a redraw while the user drags (a live run pushes a
   * step every few hundred ms) neither drops the gesture nor maps it through a stale scale.
   */
  private readonly brushLayer?: Selection<SVGGElement, unknown, null, undefined>;
  private readonly brush?: BrushBehavior<unknown>;
  private dragging = false;
  private moving = false;
  private x: ((v: number) => number) & { invert(v: number): number } = scaleLinear();

  constructor(parent: HTMLElement, o: ChartOptions) {
    this.o = o;
    this.root = document.createElement('figure');
    this.root.className = 'chart';
    const cap = document.createElement('figcaption');
    cap.textContent = o.title;
    this.root.append(cap);
    this.svg = select(this.root).append('svg').attr('role', 'img').attr('aria-label', o.title) as never;
    this.content = this.svg.append('g');
    if (o.onBrush) {
      this.brushLayer = this.svg.append('g').attr('class', 'brush');
      this.brush = brushX()
        .on('start', (ev: { sourceEvent?: unknown }) => {
          if (ev.sourceEvent) this.dragging = true;
        })
        .on('end', (ev: { selection: [number, number] | null; sourceEvent?: unknown }) => {
          if (!ev.sourceEvent || this.moving) return;
          this.dragging = false;
          if (!ev.selection) return o.onBrush!(null);
          const r: [number, number] = [Math.round(this.x.invert(ev.selection[0])), Math.round(this.x.invert(ev.selection[1]))];
          o.onBrush!(r[1] > r[0] ? r : null);
        });
    }
    this.noteEl = document.createElement('p');
    this.noteEl.className = 'note';
    this.legend = document.createElement('ul');
    this.legend.className = 'legend';
    this.root.append(this.noteEl, this.legend);
    parent.append(this.root);
    new ResizeObserver(() => this.draw()).observe(this.root);
  }

  render(series: Series[], view: ChartView): void {
    this.series = series;
    this.view = view;
    this.draw();
  }

  private draw(): void {
    const { o, series, view } = this;
    const width = Math.max(240, this.root.clientWidth || 480);
    const height = o.height ?? 170;
    this.svg.attr('viewBox', `0 0 ${width} ${height}`);
    const svg = this.content;
    svg.selectAll('*').remove();
    this.noteEl.textContent = view.note ?? '';
    this.noteEl.hidden = !view.note;
    this.root.dataset.series = String(series.length);
    const iw = width - MARGIN.left - MARGIN.right;
    const ih = height - MARGIN.top - MARGIN.bottom;
    const g = svg.append('g').attr('transform', `translate(${MARGIN.left},${MARGIN.top})`);

    const xs: number[] = [];
    const ys: number[] = [];
    for (const s of series) {
      for (const yc of s.band ? [s.y, s.band.lo, s.band.hi] : [s.y]) {
        for (let i = 0; i < s.x.length; i++) {
          const x = s.x[i]!;
          const y = yc[i]!;
          if (!Number.isFinite(y) || !Number.isFinite(x)) continue;
          if (view.xDomain && (x < view.xDomain[0] || x > view.xDomain[1])) continue;
          if ((o.logX && x <= 0) || (o.logY && y <= 0)) continue;
          xs.push(x);
          ys.push(y);
        }
      }
    }
    let xd = view.xDomain ?? (extent(xs) as [number, number]);
    if (xd[0] === undefined) xd = [0, 1];
    if (xd[0] === xd[1]) xd = o.logX ? [xd[0] / 2, xd[1] * 2] : [xd[0] - 0.5, xd[1] + 0.5];
    let yd = view.yDomain ?? (extent(ys) as [number, number]);
    if (yd[0] === undefined) yd = [0, 1];
    if (!o.logY && !view.yDomain) yd = [Math.min(0, yd[0]), yd[1]];
    if (yd[0] === yd[1]) yd = o.logY ? [yd[0] / 2, yd[1] * 2] : [yd[0] - 1, yd[1] + 1];
    const x = (o.logX ? scaleLog() : scaleLinear()).domain(xd).range([0, iw]);
    const y = (o.logY ? scaleLog() : scaleLinear()).domain(yd).range([ih, 0]);
    if (!o.logY) y.nice();
    const big = Math.max(Math.abs(yd[0]), Math.abs(yd[1])) >= 10_000;
    const logTick = (v: unknown) => format('~g')(v as number);
    const xAxis = axisBottom(x).ticks(Math.max(2, Math.floor(iw / 70)));
    if (o.logX) xAxis.tickFormat((v) => (shouldLabelLog(v as number, xd) ? logTick(v) : ''));
    const yAxis = axisLeft(y).ticks(Math.max(2, Math.floor(ih / 30)), big ? '~s' : ',~r');
    if (o.logY) yAxis.tickFormat((v) => (shouldLabelLog(v as number, yd) ? logTick(v) : ''));
    g.append('g').attr('class', 'axis x').attr('transform', `translate(0,${ih})`).call(xAxis as never);
    g.append('g').attr('class', 'axis y').call(yAxis as never);
    if (o.xLabel) g.append('text').attr('class', 'axis-label').attr('x', iw).attr('y', ih + 26).attr('text-anchor', 'end').text(o.xLabel);
    if (o.yLabel) g.append('text').attr('class', 'axis-label').attr('x', iw).attr('y', 2).attr('dy', '0.7em').attr('text-anchor', 'end').text(o.yLabel);

    const plot = g.append('g').attr('class', 'plot');
    plot.append('clipPath').attr('id', `clip-${uid(this)}`).append('rect').attr('width', iw).attr('height', ih);
    const lines = plot.append('g').attr('clip-path', `url(#clip-${uid(this)})`);
    for (const s of series) {
      if (!s.band) continue;
      const { lo, hi } = s.band;
      const ok = (i: number) => Number.isFinite(lo[i]!) && Number.isFinite(hi[i]!) && (!o.logY || lo[i]! > 0) && (!o.logX || s.x[i]! > 0);
      const band = area<number>()
        .defined(ok)
        .x((i) => x(s.x[i]!))
        .y0((i) => y(lo[i]!))
        .y1((i) => y(hi[i]!))
        .curve(s.step ? curveStepAfter : curveLinear);
      lines
        .append('path')
        .attr('class', 'band')
        .attr('data-name', s.name)
        .attr('fill', s.color)
        .attr('d', band(Array.from({ length: s.x.length }, (_v, i) => i)) ?? '');
    }
    for (const s of series) {
      const idx: number[] = [];
      for (let i = 0; i < s.x.length; i++) {
        const xv = s.x[i]!;
        const yv = s.y[i]!;
        if (!Number.isFinite(yv) || (o.logX && xv <= 0) || (o.logY && yv <= 0)) continue;
        idx.push(i);
      }
      const path = line<number>()
        .x((i) => x(s.x[i]!))
        .y((i) => y(s.y[i]!))
        .curve(s.step ? curveStepAfter : curveLinear);
      lines
        .append('path')
        .attr('class', 'line')
        .attr('data-name', s.name)
        .attr('data-points', idx.length)
        .attr('stroke', s.color)
        .attr('fill', 'none')
        .attr('d', path(idx) ?? '');
      if (s.points) {
        lines
          .append('g')
          .attr('class', 'points')
          .attr('data-name', s.name)
          .selectAll('circle')
          .data(idx)
          .join('circle')
          .attr('class', 'point')
          .attr('r', 2.5)
          .attr('fill', s.color)
          .attr('cx', (i) => x(s.x[i]!))
          .attr('cy', (i) => y(s.y[i]!));
      }
    }
    if (view.marker !== undefined && Number.isFinite(view.marker)) {
      const mx = x(view.marker);
      if (mx >= 0 && mx <= iw) plot.append('line').attr('class', 'marker').attr('x1', mx).attr('x2', mx).attr('y1', 0).attr('y2', ih);
    }
    this.x = x as never;
    if (this.brush && this.brushLayer && !this.dragging) {
      this.brushLayer.attr('transform', `translate(${MARGIN.left},${MARGIN.top})`);
      this.brush.extent([[0, 0], [iw, ih]]);
      this.brushLayer.call(this.brush);
      this.moving = true;
      this.brushLayer.call(this.brush.move, view.brush ? [x(view.brush[0]), x(view.brush[1])] : null);
      this.moving = false;
    }

    // Legend: one entry per series, with its value at the marker.
    const fmt = o.valueFormat ?? formatValue;
    this.legend.replaceChildren(
      ...series.map((s) => {
        const li = document.createElement('li');
        li.dataset.name = s.name;
        const sw = document.createElement('span');
        sw.className = 'swatch';
        sw.style.background = s.color;
        const name = document.createElement('span');
        name.className = 'name';
        name.textContent = s.label ?? s.name;
        li.append(sw, name);
        if (view.marker !== undefined) {
          const v = valueAt(s, view.marker);
          const val = document.createElement('span');
          val.className = 'value';
          val.textContent = fmt(v);
          li.append(val);
        }
        return li;
      }),
    );
  }
}

/** On log axes, label powers of ten, and also 2 and 5 times them when the axis spans at most two decades. */
function shouldLabelLog(v: number, domain: [number, number]): boolean {
  const m = v / 10 ** Math.floor(Math.log10(v) + 1e-9);
  const decades = Math.log10(Math.max(domain[0], domain[1]) / Math.max(1e-300, Math.min(domain[0], domain[1])));
  return Math.abs(m - 1) < 1e-6 || (decades <= 2 && (Math.abs(m - 2) < 1e-6 || Math.abs(m - 5) < 1e-6));
}

const ids = new WeakMap<object, number>();
let nextId = 0;
function uid(o: object): number {
  let v = ids.get(o);
  if (v === undefined) ids.set(o, (v = nextId++));
  return v;
}
