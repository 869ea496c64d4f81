/**
 * Seed selection for cascades and stories: the accounts a story or contagion starts from.
 * `hubs` are the accounts with the most followers, `leaves` those with the fewest (at least one),
 * `random` a uniform sample; ties break by a keyed hash of the row, so the choice is reproducible.
 *
 * How many: a count (`seedCount`) or a share of the agents (`seedFraction`, as NDlib's
 * `fraction_infected`), never both.
 */
import { z } from 'zod';
import type { Csr } from '../sim-core/csr.ts';
import { hash } from '../sim-core/rng.ts';
import { InputError } from '../sim-core/errors.ts';

export const SEED_STRATEGIES = ['hubs', 'leaves', 'random'] as const;
export type SeedStrategy = (typeof SEED_STRATEGIES)[number];

/** How many seeds: at most one of the two; neither means the caller's default. */
export interface SeedSize {
  /** Number of seed accounts (never more than there are accounts: that is an error). */
  seedCount?: number;
  /** Seed accounts as a share of all agents, in (0, 1]: round(fraction x agents), at least 1. */
  seedFraction?: number;
  /** The scenario's default count, when neither size is given: capped at the number of accounts. */
  defaultCount?: number;
}

/**
 * A scenario's seed parameters: `params` (the zod fields `seeds`, `seedCount`, `seedFraction`),
 * `check` (for the whole parameter object: not both sizes; the error names seedFraction) and
 * `options` (the parsed values as phase options). Neither size field has a schema default: `--set`
 * merges into the parsed defaults, so a default count would always collide with a given fraction;
 * `options` passes `defaultCount` when neither is given, which a small graph caps at its size (a
 * count the user gives is never capped: more seeds than accounts is an error).
 */
export function seedSpec(strategy: SeedStrategy, defaultCount: number) {
  return {
    params: {
      seeds: z.enum(SEED_STRATEGIES).default(strategy).describe('how seeds are chosen: hubs (most followers), leaves (fewest, at least one) or random'),
      seedCount: z.number().int().positive().optional().describe(`number of seed accounts (default ${defaultCount}); or give seedFraction`),
      seedFraction: z.number().gt(0).max(1).optional().describe('seed accounts as a share of agents in (0, 1], rounded, at least 1; or give seedCount'),
    },
    check(p: SeedSize, ctx: z.RefinementCtx): void {
      if (p.seedCount !== undefined && p.seedFraction !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['seedFraction'], message: 'give seedCount or seedFraction, not both' });
      }
    },
    options(p: SeedSize & { seeds: SeedStrategy }): SeedSize & { seeds: SeedStrategy } {
      if (p.seedFraction !== undefined) return { seeds: p.seeds, seedFraction: p.seedFraction };
      return p.seedCount !== undefined ? { seeds: p.seeds, seedCount: p.seedCount } : { seeds: p.seeds, defaultCount };
    },
  };
}

/** Throws an InputError when a given seedCount is more than the accounts (checked at set-up, before any file). */
export function checkSeedCountFits(o: SeedSize, accounts: number): void {
  if (o.seedCount !== undefined && o.seedCount > accounts) throw new InputError(`seedCount ${o.seedCount} is more than the ${accounts} accounts; lower it, or give seedFraction`);
}

/** Throws when both sizes are given or one is out of range (for phases built without zod). */
export function checkSeedSize(o: SeedSize): void {
  const { seedCount: count, seedFraction: fraction } = o;
  if (count !== undefined && fraction !== undefined) throw new Error('seeds: give seedCount or seedFraction, not both');
  if (fraction !== undefined && !(fraction > 0 && fraction <= 1)) throw new Error(`seedFraction must be in (0, 1] (got ${fraction})`);
  if (count !== undefined && !(Number.isInteger(count) && count >= 1)) throw new Error(`seedCount must be a whole number >= 1 (got ${count})`);
}

/**
 * The number of seeds for `agents` agents: `seedCount`, or `seedFraction` x agents rounded to the
 * nearest whole number (at least 1, so a cascade always starts; NDlib truncates), or `fallback`
 * when neither is given.
 */
export function seedTotal(agents: number, o: SeedSize, fallback: number): number {
  checkSeedSize(o);
  if (o.seedFraction !== undefined) return Math.min(agents, Math.max(1, Math.round(o.seedFraction * agents)));
  return o.seedCount ?? Math.min(o.defaultCount ?? fallback, agents);
}

/**
 * Picks `count` distinct rows of `followers` (one row per account). Returns them in selection order
 * (best first for hubs/leaves). O(n log count) with a bounded heap.
 */
export function selectSeeds(followers: Csr, nodes: number, strategy: SeedStrategy, count: number, key: number): Int32Array {
  // Never clamped: asking for more seeds than there are accounts is a mistake to name, not to hide.
  if (count > nodes) throw new InputError(`${count} seed accounts asked for, but there are only ${nodes} accounts; ask for at most ${nodes} (seedCount, seedFraction or story.count) or add agents`);
  const k = Math.max(0, count);
  // Score: larger is better. Pack (primary, hash tiebreak) into one float: primary first.
  const Off = followers.offsets;
  const score = (v: number): number => {
    const deg = Off[v + 1] - Off[v];
    const tie = hash(key, v) / 4294967296;
    if (strategy === 'hubs') return deg + tie;
    if (strategy === 'leaves') return deg === 0 ? -Infinity : -deg + tie;
    return tie;
  };
  // Min-heap of the k best (heap[0] is the worst kept).
  const heapV = new Int32Array(k);
  const heapS = new Float64Array(k);
  let size = 0;
  const siftDown = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < size && heapS[l] < heapS[m]) m = l;
      if (r < size && heapS[r] < heapS[m]) m = r;
      if (m === i) return;
      [heapS[i], heapS[m]] = [heapS[m], heapS[i]];
      [heapV[i], heapV[m]] = [heapV[m], heapV[i]];
      i = m;
    }
  };
  for (let v = 0; v < nodes && k > 0; v++) {
    const s = score(v);
    if (s === -Infinity) continue;
    if (size < k) {
      let i = size++;
      heapS[i] = s;
      heapV[i] = v;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (heapS[p] <= heapS[i]) break;
        [heapS[i], heapS[p]] = [heapS[p], heapS[i]];
        [heapV[i], heapV[p]] = [heapV[p], heapV[i]];
        i = p;
      }
    } else if (s > heapS[0]) {
      heapS[0] = s;
      heapV[0] = v;
      siftDown(0);
    }
  }
  const order = Array.from({ length: size }, (_, i) => i).sort((a, b) => heapS[b] - heapS[a]);
  return Int32Array.from(order, (i) => heapV[i]);
}
