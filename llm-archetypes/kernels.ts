/**
 * The observation kernel: per archetype, what its active members saw and did this step, summed
 * over chunks in chunk order. Declared like every kernel (sim-core/kernel.ts).
 */
import { kernel, kernelList } from '../sim-core/kernel.ts';
import { FEED_PARAMS, FEED_READS } from '../platform/kernels.ts';

/** Stance bins of feed items: [-1,-0.6), [-0.6,-0.2), [-0.2,0.2], (0.2,0.6], (0.6,1]. */
export const STANCE_BINS = 5;
export const NACTIONS = 12;
/** Per-archetype partial: members online, sum of opinion, items, in-network items, stance bins, actions. */
export const OBS_WIDTH = 4 + STANCE_BINS + NACTIONS;

const observe = kernel(
  { reads: { ...FEED_READS, archetype: 'u16', opinion: 'f32', stance: 'f32', evAction: 'u8', evCount: 'u16' }, writes: {}, params: [...FEED_PARAMS, 'maxEvents', 'archetypes'] },
  (a, start, end): number[] => {
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
  },
);

export const kernels = kernelList(import.meta.url, { observe });
