/**
 * The observation kernel: per archetype, what its active members saw and did this step, summed
 * over chunks in chunk order. Registered with the executor (workers import it by URL).
 */
import { registerKernels } from '../sim-core/exec.ts';
import type { FeedRows } from '../platform/kernels.ts';

/** Stance bins of feed items: [-1,-0.6), [-0.6,-0.2), [-0.2,0.2], (0.2,0.6], (0.6,1]. */
export const STANCE_BINS = 5;
export const NACTIONS = 12;
/** Per-archetype partial: members online, sum of opinion, items, in-network items, stance bins, actions. */
export const OBS_WIDTH = 4 + STANCE_BINS + NACTIONS;

function observe(
  a: FeedRows & {
    archetype: Uint16Array;
    opinion: Float32Array;
    stance: Float32Array;
    evAction: Uint8Array;
    evCount: Uint16Array;
    maxEvents: number;
    archetypes: number;
  },
  start: number,
  end: number,
): number[] {
  const out = new Array<number>(a.archetypes * OBS_WIDTH).fill(0);
  const F = a.feedSize;
  for (let k = start; k < end; k++) {
    const u = a.active[k];
    const o = a.archetype[u] * OBS_WIDTH;
    out[o]++;
    out[o + 1] += a.opinion[u];
    const len = a.feedLen[k];
    out[o + 2] += len;
    for (let s = 0; s < len; s++) {
      out[o + 3] += a.feedFlags[k * F + s];
      const st = a.stance[a.feed[k * F + s] - a.base];
      const bin = st < -0.6 ? 0 : st < -0.2 ? 1 : st <= 0.2 ? 2 : st <= 0.6 ? 3 : 4;
      out[o + 4 + bin]++;
    }
    const ne = a.evCount[k];
    for (let e = 0; e < ne; e++) out[o + 4 + STANCE_BINS + a.evAction[k * a.maxEvents + e]]++;
  }
  return out;
}

export const kernels = { observe };
registerKernels(import.meta.url, kernels as never);
