/**
 * Reductions from columns to what a panel draws: histograms, cascade series and size CCDF, the
 * archetype table, a sampled subgraph. Plain loops over typed arrays, no per-row objects; all pure,
 * so they are unit-tested in Node (tests/viz/reduce.test.ts).
 */
import type { NumericArray } from './arrowRanges.ts';

type Num = ArrayLike<number>;

/** Counts of `values` in `bins` equal bins over [lo, hi]; values outside are clamped to the ends, NaN skipped. */
export function histogram(values: Num, bins: number, lo: number, hi: number): Float64Array {
  const out = new Float64Array(bins);
  const scale = bins / (hi - lo);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v !== v) continue;
    let b = Math.floor((v - lo) * scale);
    if (b < 0) b = 0;
    else if (b >= bins) b = bins - 1;
    out[b]++;
  }
  return out;
}

/** Mean and variance (population) of a column, skipping NaN. */
export function moments(values: Num): { n: number; mean: number; variance: number } {
  let n = 0;
  let s = 0;
  let s2 = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v !== v) continue;
    n++;
    s += v;
    s2 += v * v;
  }
  const mean = n ? s / n : 0;
  return { n, mean, variance: n ? Math.max(0, s2 / n - mean * mean) : 0 };
}

export interface CascadeRows {
  step: Num;
  root: Num;
  scale: Num;
  depth: Num;
  max_breadth: Num;
  size: Num;
}

export interface CascadeSeries {
  root: number;
  /** Steps at which the cascade grew, ascending, with its statistics after that step. */
  steps: number[];
  scale: number[];
  depth: number[];
  max_breadth: number[];
}

/**
 * The `k` cascades with the largest final scale (ties: smaller root id first), each as its
 * statistics at the steps where it grew (cascades.arrow has one row per cascade per step it grew).
 */
export function topCascades(c: CascadeRows, k: number): CascadeSeries[] {
  const best = new Map<number, number>();
  const n = c.root.length;
  for (let i = 0; i < n; i++) {
    const r = c.root[i]!;
    const s = c.scale[i]!;
    if (s > (best.get(r) ?? -1)) best.set(r, s);
  }
  const roots = [...best].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k).map(([r]) => r);
  const idx = new Map(roots.map((r, i) => [r, i]));
  const out: CascadeSeries[] = roots.map((root) => ({ root, steps: [], scale: [], depth: [], max_breadth: [] }));
  for (let i = 0; i < n; i++) {
    const j = idx.get(c.root[i]!);
    if (j === undefined) continue;
    const s = out[j]!;
    s.steps.push(c.step[i]!);
    s.scale.push(c.scale[i]!);
    s.depth.push(c.depth[i]!);
    s.max_breadth.push(c.max_breadth[i]!);
  }
  return out;
}

/** The latest value of `value` for every root, over rows with step <= `upTo` (rows in step order). */
export function latestByRoot(c: Pick<CascadeRows, 'step' | 'root'>, value: Num, upTo: number): number[] {
  const last = new Map<number, number>();
  for (let i = 0; i < c.step.length; i++) {
    if (c.step[i]! > upTo) continue;
    last.set(c.root[i]!, value[i]!);
  }
  return [...last.values()];
}

/** Complementary CDF: for each distinct value x (ascending), the share of values >= x. Non-positive values are dropped (log axes). */
export function ccdf(values: number[]): { x: number[]; p: number[] } {
  const v = values.filter((a) => a > 0).sort((a, b) => a - b);
  const x: number[] = [];
  const p: number[] = [];
  const n = v.length;
  for (let i = 0; i < n; i++) {
    if (i > 0 && v[i] === v[i - 1]) continue;
    x.push(v[i]!);
    p.push((n - i) / n);
  }
  return { x, p };
}

export interface ArchetypeGroup {
  archetype: number;
  members: number;
  /** Labels of the binned attributes shared by the group (from its first member). */
  label: string;
}

/**
 * Members per archetype and a label built from the attributes that define archetypes (their
 * values on the first member of each archetype).
 */
export function archetypeGroups(archetype: Num, attrs: Array<{ codes: Num; labels: string[] }>): ArchetypeGroup[] {
  const counts = new Map<number, number>();
  const first = new Map<number, number>();
  for (let i = 0; i < archetype.length; i++) {
    const a = archetype[i]!;
    const c = counts.get(a);
    if (c === undefined) {
      counts.set(a, 1);
      first.set(a, i);
    } else counts.set(a, c + 1);
  }
  return [...counts]
    .sort((a, b) => a[0] - b[0])
    .map(([a, members]) => {
      const i = first.get(a)!;
      return { archetype: a, members, label: attrs.map((d) => d.labels[d.codes[i]!] ?? '?').join(' · ') };
    });
}

export interface Subgraph {
  /** Agent ids of the sampled nodes. */
  nodes: Int32Array;
  /** Edges as indices into `nodes` (source follows target). */
  source: Int32Array;
  target: Int32Array;
}

/**
 * A subgraph of at most `maxNodes` nodes and `maxEdges` edges from a window of the edge list (rows
 * in source order, so the window holds the complete follow lists of consecutive agents): the
 * `hubs` targets followed most often inside the window, plus the window's sources that follow at
 * least one hub, by agent id; each source keeps at most `perSource` of its edges to chosen nodes,
 * so the sample shows many accounts rather than a few dense follow lists. Deterministic.
 */
export function sampleSubgraph(source: Num, target: Num, agents: number, maxNodes = 2000, maxEdges = 8000, hubs = Math.floor(maxNodes * 0.3), perSource = 3): Subgraph {
  const m = source.length;
  const indeg = new Int32Array(agents);
  for (let e = 0; e < m; e++) indeg[target[e]!]++;
  const hubLimit = Math.min(hubs, maxNodes);
  // The hubLimit largest in-degrees (ties: smaller id): find the cut-off degree, then sort the few above it.
  let maxDeg = 0;
  for (let v = 0; v < agents; v++) if (indeg[v]! > maxDeg) maxDeg = indeg[v]!;
  const byDeg = new Int32Array(maxDeg + 1);
  for (let v = 0; v < agents; v++) byDeg[indeg[v]!]++;
  let cutoff = maxDeg;
  for (let seen = byDeg[maxDeg]!; cutoff > 1 && seen < hubLimit; ) seen += byDeg[--cutoff]!;
  const candidates: number[] = [];
  for (let v = 0; v < agents; v++) if (indeg[v]! >= Math.max(1, cutoff)) candidates.push(v);
  candidates.sort((x, y) => indeg[y]! - indeg[x]! || x - y);
  const chosen = new Int32Array(agents).fill(-1);
  const nodes: number[] = [];
  for (const v of candidates.slice(0, hubLimit)) {
    chosen[v] = nodes.length;
    nodes.push(v);
  }
  const es: number[] = [];
  const et: number[] = [];
  // Walk the window one follow list at a time.
  for (let e = 0; e < m && es.length < maxEdges; ) {
    const s = source[e]!;
    let end = e;
    while (end < m && source[end] === s) end++;
    let kept = 0;
    for (let k = e; k < end && kept < perSource && es.length < maxEdges; k++) {
      const t = target[k]!;
      if (t === s || chosen[t]! < 0 || chosen[t]! >= hubLimit) continue;
      if (chosen[s]! < 0) {
        if (nodes.length >= maxNodes) break;
        chosen[s] = nodes.length;
        nodes.push(s);
      }
      es.push(chosen[s]!);
      et.push(chosen[t]!);
      kept++;
    }
    e = end;
  }
  return { nodes: Int32Array.from(nodes), source: Int32Array.from(es), target: Int32Array.from(et) };
}

/** Values of `column` at the given rows. */
export function gather(column: NumericArray, rows: Int32Array): Float64Array {
  const out = new Float64Array(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = column[rows[i]!]!;
  return out;
}
