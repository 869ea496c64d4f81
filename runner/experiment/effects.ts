/**
 * The statistics of an experiment's tables: 95% Student-t intervals across seeds, the paired
 * interval of per-seed differences (common random numbers make these tight), and the Welch
 * interval of the same difference taken unpaired, so users see what pairing gained.
 *
 * Values that are not finite (an outcome undefined for a run) are left out; a statistic with too
 * few values is NaN. The t quantile comes from @stdlib (a port of well-tested special functions).
 */
import { createRequire } from 'node:module';

/**
 * The @stdlib package is some 400 small CommonJS modules (a quarter of a second to load), and
 * every `socsim` command imports this file through the experiment commands: required on first use.
 */
let tQuantile: ((p: number, df: number) => number) | undefined;

/** Two-sided 95%: the 0.975 quantile. */
const LEVEL = 0.975;

export interface Interval {
  /** Values used (finite ones). */
  n: number;
  mean: number;
  low: number;
  high: number;
}

export function finite(xs: readonly number[]): number[] {
  return xs.filter((x) => Number.isFinite(x));
}

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** Sample variance (n - 1 in the denominator); NaN below two values. */
export function variance(xs: readonly number[]): number {
  if (xs.length < 2) return NaN;
  const m = mean(xs);
  let s = 0;
  for (const x of xs) s += (x - m) * (x - m);
  return s / (xs.length - 1);
}

/** t_{0.975, df}; NaN when df is not positive. */
export function tCritical(df: number): number {
  if (!(df > 0)) return NaN;
  tQuantile ??= createRequire(import.meta.url)('@stdlib/stats-base-dists-t-quantile') as (p: number, df: number) => number;
  return tQuantile(LEVEL, df);
}

/** center +- t * se, with a zero spread giving the point itself (not NaN) whatever the df. */
function around(n: number, center: number, se: number, df: number): Interval {
  if (se === 0) return { n, mean: center, low: center, high: center };
  const h = tCritical(df) * se;
  return { n, mean: center, low: center - h, high: center + h };
}

/** Mean and 95% t interval (mean +- t_{0.975,n-1} s / sqrt(n)) of the finite values; NaN bounds when n < 2. */
export function tInterval(values: readonly number[]): Interval {
  const xs = finite(values);
  const n = xs.length;
  const m = mean(xs);
  if (n < 2) return { n, mean: m, low: NaN, high: NaN };
  return around(n, m, Math.sqrt(variance(xs) / n), n - 1);
}

/**
 * The paired difference a - b: the t interval of the per-seed differences over the seeds where
 * both are finite. `a` and `b` map seed -> value.
 */
export function pairedInterval(a: ReadonlyMap<number, number>, b: ReadonlyMap<number, number>): Interval {
  const d: number[] = [];
  for (const [seed, x] of a) {
    const y = b.get(seed);
    if (y !== undefined && Number.isFinite(x) && Number.isFinite(y)) d.push(x - y);
  }
  return tInterval(d);
}

/**
 * Welch's interval for mean(a) - mean(b), unpaired, with the Welch-Satterthwaite degrees of
 * freedom; NaN bounds when either side has fewer than two finite values.
 */
export function welchInterval(aValues: readonly number[], bValues: readonly number[]): Interval {
  const a = finite(aValues);
  const b = finite(bValues);
  const diff = mean(a) - mean(b);
  const n = Math.min(a.length, b.length);
  if (a.length < 2 || b.length < 2) return { n, mean: diff, low: NaN, high: NaN };
  const va = variance(a) / a.length;
  const vb = variance(b) / b.length;
  const se2 = va + vb;
  const df = (se2 * se2) / ((va * va) / (a.length - 1) + (vb * vb) / (b.length - 1));
  return around(n, diff, Math.sqrt(se2), df);
}
