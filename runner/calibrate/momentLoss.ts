/**
 * The loss of a calibration to published moments, and the record of each moment's fit.
 *
 * Moment loss of simulated values s (each the mean over the calibration's seeds) against published
 * values t with standard errors sigma (momentsFile.ts: `se`, or the 95% interval's width / 3.92):
 *
 *   L = (1/K) sum_i w_i (s_i - t_i)^2,   w_i = 1 / sigma_i^2
 *
 * the mean over the K moments of the squared distance in published standard errors (a chi-square
 * over K): moments in different units add up, and L = 1 means one standard error off on average.
 * Moment i contributes w_i (s_i - t_i)^2 / K; the contributions sum to L. A moment with no finite
 * simulated value (e.g. a ratio over zero in every seed) contributes +Infinity.
 *
 * With a series target as well (`--target`), the objective is L + W NRMSE^2 (W: `--series-weight`),
 * the series' NRMSE squared as the moments' distances are; with a series target alone it is the
 * NRMSE, as before.
 */
import type { Moment } from './momentsFile.ts';
import { sigmaOf, weightOf } from './momentsFile.ts';
import { tInterval } from '../experiment/effects.ts';

/** Each moment's contribution w_i (s_i - t_i)^2 / K. */
export function contributions(sim: readonly number[], moments: readonly Moment[]): number[] {
  const k = moments.length;
  return moments.map((m, i) => (Number.isFinite(sim[i]) ? (weightOf(m) * (sim[i] - m.value) ** 2) / k : Infinity));
}

/** L = (1/K) sum_i w_i (s_i - t_i)^2. */
export function momentLoss(sim: readonly number[], moments: readonly Moment[]): number {
  return contributions(sim, moments).reduce((a, c) => a + c, 0);
}

/** The calibration's objective from its parts: see the file comment. */
export function objective(parts: { nrmse?: number; moments?: number; seriesWeight: number }): number {
  if (parts.moments === undefined) return parts.nrmse!;
  return parts.moments + (parts.nrmse === undefined ? 0 : parts.seriesWeight * parts.nrmse ** 2);
}

/** One moment at a calibration's best point, as best.json and moments.arrow record it. */
export interface MomentFit {
  id: string;
  kind: Moment['kind'];
  /** Mean over the seeds of the simulated value, its 95% t interval over seeds and the seeds used. */
  value: number;
  ci: [number, number];
  n: number;
  target: number;
  /** The published 95% interval (from `se`: target +- 1.96 se). */
  target_ci: [number, number];
  sigma: number;
  weight: number;
  contribution: number;
  source: Moment['source'];
}

/** The fit of every moment from its per-seed values (`perSeed[i][j]`: moment i, seed j). */
export function momentFits(moments: readonly Moment[], perSeed: readonly number[][]): MomentFit[] {
  const stats = perSeed.map((xs) => tInterval(xs));
  const c = contributions(stats.map((s) => s.mean), moments);
  return moments.map((m, i) => {
    const sigma = sigmaOf(m);
    return {
      id: m.id,
      kind: m.kind,
      value: stats[i].mean,
      ci: [stats[i].low, stats[i].high],
      n: stats[i].n,
      target: m.value,
      target_ci: m.interval ? [m.interval[0], m.interval[1]] : [m.value - 1.96 * sigma, m.value + 1.96 * sigma],
      sigma,
      weight: 1 / sigma ** 2,
      contribution: c[i],
      source: m.source,
    };
  });
}

const num = (v: number) => (!Number.isFinite(v) ? String(v) : Math.abs(v) >= 1e6 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(3) : String(Number(v.toPrecision(4))));
const ci = ([a, b]: [number, number]) => (Number.isFinite(a) ? `[${num(a)}, ${num(b)}]` : '');

/** The moments' fit as a text table (printed at the end of a calibration). */
export function formatMomentFits(rows: readonly MomentFit[]): string {
  const head = ['moment', 'kind', 'simulated', '95% ci (seeds)', 'published', '95% ci', 'weight', 'contribution'];
  const body = rows.map((r) => [r.id, r.kind, num(r.value), ci(r.ci), num(r.target), ci(r.target_ci), num(r.weight), num(r.contribution)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((x, i) => x.padEnd(widths[i])).join('  ').trimEnd();
  return [line(head), ...body.map(line)].join('\n') + '\n';
}
