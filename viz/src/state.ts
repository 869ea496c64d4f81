/**
 * What the panels see: the run's data (columns and reductions, never rows) and the view (the
 * selected step and step range). Steps on every axis count completed steps, as the run directory
 * does: the metrics row of step N and snapshot step-N are drawn at x = N, and the scrubber's value
 * s means "the state after s steps".
 */
import { interpolateRdBu } from 'd3';
import type { Snapshot, Columns, RunManifest } from './data/run.ts';
import type { ArchetypeGroup, Subgraph } from './data/reduce.ts';

export const OPINION_BINS = 40;
export const OPINION_RANGE: [number, number] = [-1, 1];

export interface RunState {
  manifest: RunManifest;
  metrics?: Columns;
  /** x of every metrics row (its step). */
  metricX?: Float64Array;
  cascades?: Columns;
  archetypes?: Columns;
  /** target.arrow, in a calibration's best run (socsim calibrate): step and the matched columns. */
  target?: Columns;
  /** Snapshot steps on disk, ascending, with file names. */
  snapshots: Array<{ step: number; name: string }>;
  /** Opinion histogram of each loaded snapshot (OPINION_BINS bins over OPINION_RANGE). */
  hist: Map<number, Float64Array>;
  /** The snapshot the step panels show (the latest at or before the selected step), when loaded. */
  snap?: Snapshot;
  groups?: ArchetypeGroup[];
  graph?: { sub: Subgraph; window: number; total: number; file: string };
  /** Whether the page follows a live run (SSE connected and the run still going). */
  live: boolean;
}

export interface ViewState {
  step: number;
  range: [number, number] | null;
  /** Move the scrubber to the newest step as steps arrive. */
  follow: boolean;
}

export interface Panel {
  update(run: RunState, view: ViewState): void;
}

export interface Actions {
  setStep(step: number): void;
  setRange(range: [number, number] | null): void;
}

/** The snapshot shown for a selected step: the latest snapshot at or before it (or the first). */
export function snapshotFor(run: RunState, step: number): { step: number; name: string } | undefined {
  let best = run.snapshots[0];
  for (const s of run.snapshots) if (s.step <= step) best = s;
  return best;
}

/** Colour of an opinion in [-1, 1]: blue (left, -1) through pale grey to red (right, +1). */
export function opinionColor(o: number): string {
  const t = Math.max(0, Math.min(1, (1 - o) / 2));
  return interpolateRdBu(0.06 + 0.88 * t);
}

/** The x domain of the time panels: the brushed range, or every completed step. */
export function xDomain(run: RunState, view: ViewState): [number, number] {
  if (view.range) return view.range;
  return [0, Math.max(1, run.manifest.steps_completed)];
}

export const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac', '#1f77b4', '#17becf'];
