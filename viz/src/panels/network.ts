/**
 * Network view: a sampled subgraph of the follow graph (at most 2,000 agents; see
 * reduce.ts sampleSubgraph) laid out by a force simulation on a canvas, coloured by each agent's
 * opinion at the selected step; hover (or arrow keys) shows an agent's details; wheel/drag zoom.
 */
import { forceCenter, forceLink, forceManyBody, forceSimulation, forceX, forceY, format, zoom, zoomIdentity, select, type Simulation, type ZoomTransform } from 'd3';
import { opinionColor, snapshotFor, type Panel, type RunState, type ViewState } from '../state.ts';

interface Node {
  i: number;
  id: number;
  x?: number;
  y?: number;
  vx?: number;
  vy?: number;
  following: number;
  followers: number;
}

export function networkPanel(el: HTMLElement, onFirstDraw: () => void): Panel {
  el.innerHTML = `<h2>Network</h2><p class="note net-note"></p>
    <div class="net-wrap"><canvas tabindex="0" role="img" aria-label="sampled follow graph coloured by opinion; arrow keys step through agents"></canvas>
    <div class="tooltip" role="status" hidden></div></div>
    <div class="opinion-scale" aria-hidden="true"><span>−1 left</span><i></i><span>+1 right</span></div>`;
  const canvas = el.querySelector('canvas')!;
  const tip = el.querySelector<HTMLElement>('.tooltip')!;
  const note = el.querySelector<HTMLElement>('.net-note')!;
  const ctx = canvas.getContext('2d')!;
  let nodes: Node[] = [];
  let links: Array<{ source: Node; target: Node }> = [];
  let sim: Simulation<Node, undefined> | undefined;
  let graphRef: RunState['graph'];
  let colors: string[] = [];
  let opinions: Float64Array = new Float64Array(0);
  let transform: ZoomTransform = zoomIdentity;
  let focused = -1;
  /** Until the user zooms or pans, the view follows the layout so the whole sample stays in frame. */
  let userZoomed = false;
  let ticks = 0;
  let drawn = false;
  let lastRun: RunState | undefined;
  let lastSnapStep = NaN;
  let width = 600;
  const height = 420;

  const resize = () => {
    width = Math.max(240, el.querySelector<HTMLElement>('.net-wrap')!.clientWidth || 600);
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
    draw();
  };

  const css = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

  function draw(): void {
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = css('--canvas-bg') || '#fff';
    ctx.fillRect(0, 0, width, height);
    if (!nodes.length) return;
    ctx.save();
    ctx.translate(transform.x, transform.y);
    ctx.scale(transform.k, transform.k);
    ctx.beginPath();
    for (const l of links) {
      ctx.moveTo(l.source.x!, l.source.y!);
      ctx.lineTo(l.target.x!, l.target.y!);
    }
    ctx.strokeStyle = css('--edge') || 'rgba(0,0,0,0.12)';
    ctx.lineWidth = 0.6 / transform.k;
    ctx.stroke();
    const stroke = css('--node-stroke') || 'rgba(0,0,0,0.5)';
    for (const n of nodes) {
      const r = 2 + Math.min(6, Math.sqrt(n.followers) * 0.6);
      ctx.beginPath();
      ctx.arc(n.x!, n.y!, r, 0, 2 * Math.PI);
      ctx.fillStyle = colors[n.i] ?? '#888';
      ctx.fill();
      ctx.lineWidth = 0.5 / transform.k;
      ctx.strokeStyle = stroke;
      ctx.stroke();
    }
    if (focused >= 0 && nodes[focused]) {
      const n = nodes[focused]!;
      ctx.beginPath();
      ctx.arc(n.x!, n.y!, 9, 0, 2 * Math.PI);
      ctx.lineWidth = 2 / transform.k;
      ctx.strokeStyle = css('--accent') || '#f80';
      ctx.stroke();
    }
    ctx.restore();
    if (!drawn) {
      drawn = true;
      el.dataset.drawn = 'true';
      onFirstDraw();
    }
  }

  const describe = (n: Node) => {
    const o = opinions[n.i];
    const g = lastRun?.groups;
    const arch = lastRun?.snap?.archetype?.[n.id];
    const label = arch !== undefined && g ? g.find((x) => x.archetype === arch)?.label : undefined;
    return `agent ${n.id}\nopinion ${o === undefined || Number.isNaN(o) ? '–' : o.toFixed(3)}${arch !== undefined ? `\narchetype ${arch}${label ? ` (${label})` : ''}` : ''}\nfollows ${n.following} / followed by ${n.followers} in the sample`;
  };

  const showTip = (n: Node | undefined, px?: number, py?: number) => {
    if (!n) {
      tip.hidden = true;
      return;
    }
    tip.hidden = false;
    tip.textContent = describe(n);
    const sx = px ?? transform.applyX(n.x!);
    const sy = py ?? transform.applyY(n.y!);
    tip.style.left = `${Math.min(width - 200, sx + 12)}px`;
    tip.style.top = `${Math.max(0, sy - 10)}px`;
    tip.dataset.agent = String(n.id);
  };

  canvas.addEventListener('mousemove', (ev) => {
    if (!sim) return;
    const r = canvas.getBoundingClientRect();
    const [x, y] = transform.invert([ev.clientX - r.left, ev.clientY - r.top]);
    const n = sim.find(x, y, 12 / transform.k);
    focused = n ? n.i : -1;
    showTip(n, ev.clientX - r.left, ev.clientY - r.top);
    draw();
  });
  canvas.addEventListener('mouseleave', () => {
    focused = -1;
    showTip(undefined);
    draw();
  });
  canvas.addEventListener('keydown', (ev) => {
    if (!nodes.length) return;
    if (ev.key === 'ArrowRight' || ev.key === 'ArrowDown') focused = (focused + 1) % nodes.length;
    else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowUp') focused = (focused - 1 + nodes.length) % nodes.length;
    else if (ev.key === 'Escape') focused = -1;
    else return;
    ev.preventDefault();
    showTip(focused >= 0 ? nodes[focused] : undefined);
    draw();
  });
  select(canvas).call(
    zoom<HTMLCanvasElement, unknown>()
      .scaleExtent([0.2, 12])
      .filter((ev: Event) => ev.type !== 'dblclick')
      .on('zoom', (ev: { transform: ZoomTransform; sourceEvent: unknown }) => {
        if (ev.sourceEvent) userZoomed = true;
        transform = ev.transform;
        draw();
      }),
  );
  new ResizeObserver(resize).observe(el.querySelector<HTMLElement>('.net-wrap')!);
  new MutationObserver(() => draw()).observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme-resolved'] });

  /** Scales and centres the view on the nodes' bounding box. */
  const fit = () => {
    let x0 = Infinity;
    let x1 = -Infinity;
    let y0 = Infinity;
    let y1 = -Infinity;
    for (const n of nodes) {
      if (n.x! < x0) x0 = n.x!;
      if (n.x! > x1) x1 = n.x!;
      if (n.y! < y0) y0 = n.y!;
      if (n.y! > y1) y1 = n.y!;
    }
    if (!Number.isFinite(x0)) return;
    const pad = 16;
    const k = Math.min(4, (width - 2 * pad) / Math.max(1, x1 - x0), (height - 2 * pad) / Math.max(1, y1 - y0));
    transform = zoomIdentity.translate(width / 2 - (k * (x0 + x1)) / 2, height / 2 - (k * (y0 + y1)) / 2).scale(k);
    select(canvas).property('__zoom', transform);
  };

  const build = (g: NonNullable<RunState['graph']>) => {
    sim?.stop();
    const { sub } = g;
    nodes = Array.from(sub.nodes, (id, i) => ({ i, id, following: 0, followers: 0 }));
    links = [];
    for (let e = 0; e < sub.source.length; e++) {
      const s = nodes[sub.source[e]!]!;
      const t = nodes[sub.target[e]!]!;
      s.following++;
      t.followers++;
      links.push({ source: s, target: t });
    }
    sim = forceSimulation<Node>(nodes)
      .force('link', forceLink<Node, { source: Node; target: Node }>(links).distance(18).strength(0.25))
      .force('charge', forceManyBody<Node>().strength(-14).distanceMax(160).theta(0.95))
      .force('x', forceX<Node>(0).strength(0.04))
      .force('y', forceY<Node>(0).strength(0.04))
      .force('center', forceCenter(0, 0))
      .alphaDecay(0.05)
      .on('tick', () => {
        if (!userZoomed && ticks++ % 5 === 0) fit();
        draw();
      })
      .on('end', () => {
        canvas.dataset.settled = 'true';
      });
    delete canvas.dataset.settled;
    userZoomed = false;
    ticks = 0;
    fit();
    canvas.dataset.nodes = String(nodes.length);
    canvas.dataset.edges = String(links.length);
    // Draw the starting positions now, so the panel shows the sample before the first tick.
    draw();
  };

  return {
    update(run: RunState, view: ViewState) {
      lastRun = run;
      if (!run.graph) {
        note.textContent = 'loading the follow graph sample…';
        return;
      }
      if (run.graph !== graphRef) {
        graphRef = run.graph;
        build(run.graph);
      }
      const snap = snapshotFor(run, view.step);
      const op = run.snap?.opinion;
      if (op && run.snap!.step !== lastSnapStep) {
        lastSnapStep = run.snap!.step;
        opinions = Float64Array.from(run.graph.sub.nodes, (id) => op[id] ?? NaN);
        colors = Array.from(opinions, (o) => (Number.isNaN(o) ? '#888' : opinionColor(o)));
        canvas.dataset.step = String(run.snap!.step);
        let sum = 0;
        for (const o of opinions) sum += o;
        canvas.dataset.meanOpinion = (sum / Math.max(1, opinions.length)).toFixed(6);
        draw();
      }
      const fmt = format(',');
      note.textContent = `${fmt(nodes.length)} agents and ${fmt(links.length)} follows sampled from ${fmt(run.graph.window)} of the ${fmt(run.graph.total)} edges of ${run.graph.file} (16 evenly spaced windows: the most-followed accounts in them and up to 3 follows of each account there); colour: opinion ${run.snap ? `after step ${run.snap.step}` : ''}${snap && run.snap && snap.step !== run.snap.step ? ' (loading the selected step…)' : ''}`;
    },
  };
}
