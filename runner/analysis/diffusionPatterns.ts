/**
 * Diffusion patterns of a run's reshare cascades, measured from posts.arrow the way the literature
 * measures retweet cascades, so `socsim validate` can set them beside published figures.
 *
 * A reshare cascade is an original post (its root) and every repost and quote reached from it
 * through parent links, at any depth; comments are conversations, not reshares, and a repost of a
 * comment starts that comment's own cascade (not counted here: roots are original posts). Sizes
 * count reshares (a never-reshared post has size 0); trees count nodes, the root included.
 *
 * Cascades keep growing until the run ends, so only roots posted at least `followHours` before the
 * end are measured (each is followed for at least that long).
 */
import path from 'node:path';
import type { Vector } from 'apache-arrow';
import { InputError } from '../../sim-core/errors.ts';
import { arrowFileSummary, readArrowBatches } from '../../sim-core/io/arrowRead.ts';
import { KIND, POST_KINDS } from '../../platform/posts.ts';

/** The posts.arrow columns the patterns need, one entry per post, in id order (ids 0..n-1). */
export interface PostColumns {
  kind: ArrayLike<number>;
  parent: ArrayLike<number>;
  step: ArrayLike<number>;
}

export interface DiffusionPatterns {
  /** Original posts measured (posted at least followHours before the end). */
  roots: number;
  /** Their reshares (reposts and quotes, any depth). */
  reshares: number;
  /** Share of roots never reshared; reaching at least 10 and 100 reshares. */
  neverReshared: number;
  atLeast10: number;
  atLeast100: number;
  /** Maximum-likelihood power-law exponent of the tree-size density (nodes >= tailMin), and the trees it used. */
  tailExponent: number;
  tailTrees: number;
  /** Share of reshares made directly from the root (depth 1). */
  directFromRoot: number;
  /** Among reshared roots: share whose deepest reshare is at depth 1, 2, and 3 or more. */
  depth1: number;
  depth2: number;
  depth3plus: number;
  /** Mean structural virality (Wiener index) of trees with 10-99 nodes, and with >= 100 nodes, and their number. */
  viralityMid: number;
  viralityLarge: number;
  largeTrees: number;
  /**
   * Least-squares slope of structural virality on log10(nodes), over trees with >= viralityMin
   * nodes: what a tenfold larger tree adds (stars alone give 0.18 from 10 to 100 nodes).
   */
  viralityPerDecade: number;
  viralityTrees: number;
  /**
   * Of the reshares made within DELAY_HORIZON_HOURS (24) of their root, the estimated share made
   * within 1 hour and within 6 hours. Every root is followed at least that long, so all roots are
   * measured over the same horizon (NaN when followHours is shorter).
   */
  within1h: number;
  within6h: number;
}

/**
 * Delays are compared over one horizon for every root: a run follows its roots for 24-48 hours, so
 * shares of all reshares ever made (the published form, e.g. Kwak et al.'s "75% under a day") cannot
 * be measured; shares of those made within a day can.
 */
export const DELAY_HORIZON_HOURS = 24;

export interface PatternOptions {
  /** Hours per step (the run's step_seconds / 3600). */
  stepHours: number;
  /** Steps the run completed. */
  steps: number;
  /** Roots must be posted at least this many hours before the end. */
  followHours: number;
  /** Smallest tree (nodes) in the tail fit, and in the virality-size correlation. */
  tailMin?: number;
  viralityMin?: number;
}

const isReshare = (k: number) => k === KIND.repost || k === KIND.quote;

/**
 * P(D <= x) for the delay D = d h + U2 - U1 between posts d steps apart, with U1, U2 uniform in
 * [0, h) (when in its step each post was made is not recorded): a triangular law on
 * [(d - 1) h, (d + 1) h].
 */
export function delayCdf(dSteps: number, h: number, x: number): number {
  const y = x - dSteps * h;
  if (y <= -h) return 0;
  if (y <= 0) return (y + h) ** 2 / (2 * h * h);
  if (y < h) return 1 - (h - y) ** 2 / (2 * h * h);
  return 1;
}

/**
 * Structural virality (Goel, Anderson, Hofman and Watts, Management Science 2016): the mean
 * shortest-path distance over all pairs of a tree's nodes, computed as sum over edges of
 * s (n - s) / (n (n - 1) / 2), s being the size of the subtree below the edge.
 */
export function structuralVirality(subtreeSizes: ArrayLike<number>, n: number): number {
  if (n < 2) return 0;
  let sum = 0;
  for (let i = 0; i < subtreeSizes.length; i++) sum += subtreeSizes[i] * (n - subtreeSizes[i]);
  return sum / ((n * (n - 1)) / 2);
}

/**
 * Discrete power-law exponent by maximum likelihood, alpha = 1 + m / sum ln(x / (xmin - 1/2))
 * (Clauset, Shalizi and Newman, SIAM Review 2009, eq. 3.7), over the values >= xmin.
 */
export function powerLawExponent(values: ArrayLike<number>, xmin: number): { alpha: number; m: number } {
  let m = 0;
  let s = 0;
  for (let i = 0; i < values.length; i++) {
    if (values[i] < xmin) continue;
    m++;
    s += Math.log(values[i] / (xmin - 0.5));
  }
  return { alpha: m > 0 ? 1 + m / s : NaN, m };
}

function slope(x: number[], y: number[]): number {
  const n = x.length;
  if (n < 3) return NaN;
  const mx = x.reduce((a, b) => a + b, 0) / n;
  const my = y.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
  }
  return sxx > 0 ? sxy / sxx : NaN;
}

export function diffusionPatterns(p: PostColumns, o: PatternOptions): DiffusionPatterns {
  const n = p.kind.length;
  const tailMin = o.tailMin ?? 10;
  const viralityMin = o.viralityMin ?? 10;
  const lastRootStep = o.steps - Math.ceil(o.followHours / o.stepHours);
  // Tree root (an original post, else -1) and reshare depth of every post; parents precede children.
  const root = new Int32Array(n).fill(-1);
  const depth = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const k = p.kind[i];
    if (k === KIND.original) {
      if (p.step[i] < lastRootStep) root[i] = i;
    } else if (isReshare(k)) {
      const q = p.parent[i];
      if (q < 0 || q >= i) throw new InputError(`posts.arrow: post ${i} has parent ${q}; parents must be earlier posts`);
      root[i] = root[q];
      depth[i] = depth[q] + 1;
    }
  }
  // Subtree sizes (children have larger ids: one backward pass), reshares and deepest depth per root.
  const sub = new Int32Array(n).fill(1);
  const maxDepth = new Int32Array(n);
  let roots = 0;
  let reshares = 0;
  let direct = 0;
  let in1h = 0;
  let in6h = 0;
  let inHorizon = 0;
  for (let i = n - 1; i >= 0; i--) {
    const r = root[i];
    if (r < 0) continue;
    if (r === i) {
      roots++;
      continue;
    }
    sub[p.parent[i]] += sub[i];
    reshares++;
    if (depth[i] === 1) direct++;
    if (depth[i] > maxDepth[r]) maxDepth[r] = depth[i];
    const d = p.step[i] - p.step[r];
    in1h += delayCdf(d, o.stepHours, 1);
    in6h += delayCdf(d, o.stepHours, 6);
    inHorizon += delayCdf(d, o.stepHours, DELAY_HORIZON_HOURS);
  }
  // Per tree: nodes (sub[root]) and the sum over its edges of s (n - s) for structural virality.
  const edgeSum = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const r = root[i];
    if (r >= 0 && r !== i) edgeSum[r] += sub[i] * (sub[r] - sub[i]);
  }
  const sizes: number[] = [];
  const logSize: number[] = [];
  const sv: number[] = [];
  let never = 0;
  let ge10 = 0;
  let ge100 = 0;
  const depthCount = [0, 0, 0];
  let largeSum = 0;
  let large = 0;
  let midSum = 0;
  let mid = 0;
  for (let i = 0; i < n; i++) {
    if (root[i] !== i) continue;
    const nodes = sub[i];
    sizes.push(nodes);
    if (nodes === 1) never++;
    if (nodes - 1 >= 10) ge10++;
    if (nodes - 1 >= 100) ge100++;
    if (nodes > 1) depthCount[Math.min(maxDepth[i], 3) - 1]++;
    const v = nodes > 1 ? edgeSum[i] / ((nodes * (nodes - 1)) / 2) : 0;
    if (nodes >= viralityMin) {
      logSize.push(Math.log10(nodes));
      sv.push(v);
    }
    if (nodes >= 100) {
      largeSum += v;
      large++;
    } else if (nodes >= 10) {
      midSum += v;
      mid++;
    }
  }
  const reshared = roots - never;
  const tail = powerLawExponent(sizes, tailMin);
  const share = (x: number, of: number) => (of > 0 ? x / of : NaN);
  return {
    roots,
    reshares,
    neverReshared: share(never, roots),
    atLeast10: share(ge10, roots),
    atLeast100: share(ge100, roots),
    tailExponent: tail.alpha,
    tailTrees: tail.m,
    directFromRoot: share(direct, reshares),
    depth1: share(depthCount[0], reshared),
    depth2: share(depthCount[1], reshared),
    depth3plus: share(depthCount[2], reshared),
    viralityMid: mid > 0 ? midSum / mid : NaN,
    viralityLarge: large > 0 ? largeSum / large : NaN,
    largeTrees: large,
    viralityPerDecade: slope(logSize, sv),
    viralityTrees: sv.length,
    within1h: o.followHours >= DELAY_HORIZON_HOURS ? share(in1h, inHorizon) : NaN,
    within6h: o.followHours >= DELAY_HORIZON_HOURS ? share(in6h, inHorizon) : NaN,
  };
}

/**
 * The columns of a run directory's posts.arrow, checked to hold ids 0..n-1 in order. Read a slice
 * of rows at a time, those four columns only (posts.arrow passes 2 GiB after ~30 steps at 10M
 * agents): 9 bytes a post in memory.
 */
export function readPostColumns(runDir: string): PostColumns {
  const file = path.join(runDir, 'posts.arrow');
  const { schema, rows } = arrowFileSummary(file);
  const names = schema.fields.map((f) => f.name);
  for (const name of ['id', 'kind', 'parent', 'step']) {
    if (!names.includes(name)) throw new InputError(`${file} has no column ${name}; is it a socsim posts.arrow?`);
  }
  const kind = new Uint8Array(rows);
  const parent = new Int32Array(rows);
  const step = new Int32Array(rows);
  let at = 0;
  for (const b of readArrowBatches(file, undefined, ['id', 'kind', 'parent', 'step'])) {
    const id = int32Of(b.getChild('id')!);
    for (let i = 0; i < id.length; i++) {
      if (id[i] !== at + i) throw new InputError(`${file}: row ${at + i} has id ${id[i]}; posts.arrow must hold every post in id order (was the run cut short?)`);
    }
    kind.set(codesOf(b.getChild('kind')!, POST_KINDS), at);
    parent.set(int32Of(b.getChild('parent')!), at);
    step.set(int32Of(b.getChild('step')!), at);
    at += b.numRows;
  }
  return { kind, parent, step };
}

/** Codes of a dictionary column against `names` (the writer's dictionary order may differ). */
function codesOf(col: Vector, names: readonly string[]): Uint8Array {
  const out = new Uint8Array(col.length);
  let at = 0;
  for (const d of col.data) {
    const dict = d.dictionary;
    const map = dict ? Array.from({ length: dict.length }, (_, j) => names.indexOf(String(dict.get(j)))) : [];
    const idx = d.values as ArrayLike<number>;
    for (let i = 0; i < d.length; i++) out[at++] = map[idx[d.offset + i]] ?? 255;
  }
  return out;
}

const int32Of = (col: Vector): Int32Array => col.toArray() as Int32Array;
