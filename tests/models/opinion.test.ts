/**
 * The update schemes of the bounded-confidence models (models/opinion.ts), each on a case worked
 * out by hand: Deffuant's pairwise scheme (one pair update, strict bound, sequential order,
 * directed ties, the sum of opinions kept) beside the synchronous one, and Hegselmann-Krause with
 * and without the agent's own opinion, with <= and < bounds. The older synchronous-Deffuant and
 * default-HK cases are in classic.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { deffuant, hegselmannKrause } from '../../models/opinion.ts';
import { barabasiAlbert } from '../../graph/generators.ts';
import { type Executor } from '../../sim-core/exec.ts';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { kernels as K } from '../../sim-core/kernels.ts';
import { runStep, type Phase, type World } from '../../sim-core/phase.ts';
import { keyOf, streamOf, uniform } from '../../sim-core/rng.ts';
import { makeWorld as buildWorld } from './worlds.ts';

const exec = createExecutor(1);
const pool = createExecutor(2);
afterAll(() => Promise.all([exec.close(), pool.close()]));

/** A world over `follows` (u -> v: u follows v), with opinions x (f32). */
const makeWorld = (n: number, follows: Array<[number, number]>, x: ArrayLike<number>, o: { directed?: boolean; seed?: number; ex?: Executor } = {}): Promise<World> =>
  buildWorld(o.ex ?? exec, n, follows, { ...o, opinion: x });

async function step(w: World, phases: Phase[], steps = 1): Promise<number[]> {
  for (const p of phases) await p.init?.(w);
  for (let s = 0; s < steps; s++) await runStep(w, phases, s);
  return Array.from(w.agents.columns.opinion);
}

/** Runs `updates` pair updates of the pairwise kernel directly; returns the opinions and [pairs moved]. */
async function pairUpdates(w: World, updates: number, eps: number, mu: number, key = 7): Promise<[number[], number]> {
  const x = w.agents.columns.opinion as Float32Array;
  const G = w.graph.following;
  const [moved] = await w.exec.reduce(K.pairwiseBounded, { offsets: G.offsets, targets: G.targets, x, eps, mu, agents: w.agents.length, key }, updates);
  return [Array.from(x), moved];
}

const f = Math.fround;

describe('Deffuant, scheme pairwise (Deffuant et al. 2000)', () => {
  it('one pair update on two accounts that follow each other: both move by mu * d', async () => {
    const w = await makeWorld(2, [[0, 1], [1, 0]], [0, 0.5]);
    const [x, moved] = await pairUpdates(w, 1, 0.75, 0.25);
    // d = 0.5: x0 = 0 + 0.25 * 0.5, x1 = 0.5 - 0.25 * 0.5, whichever of the two was picked first.
    expect(x).toEqual([0.125, 0.375]);
    expect(moved).toBe(1);
  });

  it('the bound is strict: |d| = eps leaves both where they are', async () => {
    const at = await makeWorld(2, [[0, 1], [1, 0]], [0, 0.25]);
    expect(await pairUpdates(at, 1, 0.25, 0.5)).toEqual([[0, 0.25], 0]);
    const above = await makeWorld(2, [[0, 1], [1, 0]], [0, 0.25]);
    expect(await pairUpdates(above, 1, 0.2500001, 0.5)).toEqual([[0.125, 0.125], 1]);
  });

  it('a step is N updates, one after another: the second update reads the first one\'s result', async () => {
    // mu = 0.3, eps = 1 on a mutual pair: update 1 gives (0.06, 0.14), update 2 (0.084, 0.116).
    // The synchronous scheme moves each toward the other's start value: (0.06, 0.14).
    const x0 = [0, 0.2];
    const pw = await step(await makeWorld(2, [[0, 1], [1, 0]], x0), [deffuant({ eps: 1, mu: 0.3 })]);
    const seq1 = [f(0 + 0.3 * (f(0.2) - 0)), f(f(0.2) - 0.3 * (f(0.2) - 0))];
    const seq2 = [f(seq1[0] + 0.3 * (seq1[1] - seq1[0])), f(seq1[1] - 0.3 * (seq1[1] - seq1[0]))];
    expect(pw).toEqual(seq2);
    expect(pw[0]).toBeCloseTo(0.084, 6);
    const sync = await step(await makeWorld(2, [[0, 1], [1, 0]], x0), [deffuant({ eps: 1, mu: 0.3, scheme: 'synchronous' })]);
    expect(sync).toEqual(seq1);
  });

  it('picks a uniform agent, then a uniform followee; the followee moves too, and an agent that follows nobody wastes its update', async () => {
    // 0 follows 1; 1 and 2 follow nobody. Two steps of 3 updates each, replayed from the draws.
    const w = await makeWorld(3, [[0, 1]], [0, 0.5, 1]);
    const got = await step(w, [deffuant({ eps: 1, mu: 0.25 })], 2);
    const x = [0, 0.5, 1];
    let moves = 0;
    for (let s = 0; s < 2; s++) {
      const key = keyOf(1, streamOf('deffuant'), s);
      for (let t = 0; t < 3; t++) {
        if (Math.floor(uniform(key, t, 0) * 3) !== 0) continue;
        const m = 0.25 * (x[1] - x[0]);
        [x[0], x[1]] = [f(x[0] + m), f(x[1] - m)];
        moves++;
      }
    }
    expect(got).toEqual(x);
    // Seed 1 picks agent 0 more than once but not every time (so the count of picks shows), and row 2 never moves.
    expect(moves).toBeGreaterThan(1);
    expect(moves).toBeLessThan(6);
    expect(got[2]).toBe(1);
  });

  it('the partner is uniform among the followees: 4 followees, 400 single updates, each partner 1/4 within 4 SE', async () => {
    // Agent 0 follows 1..4; with agents = 1 every update picks agent 0; the followee that moved says who was picked.
    const counts = [0, 0, 0, 0];
    const w = await makeWorld(5, [[0, 1], [0, 2], [0, 3], [0, 4]], [0, 0.5, 0.5, 0.5, 0.5]);
    const x = w.agents.columns.opinion as Float32Array;
    const G = w.graph.following;
    for (let key = 1; key <= 400; key++) {
      x.set([0, 0.5, 0.5, 0.5, 0.5]);
      await exec.run(K.pairwiseBounded, { offsets: G.offsets, targets: G.targets, x, eps: 1, mu: 0.5, agents: 1, key }, 1);
      counts[[1, 2, 3, 4].find((j) => x[j] !== 0.5)! - 1]++;
    }
    for (const c of counts) expect(Math.abs(c / 400 - 0.25)).toBeLessThan(4 * Math.sqrt((0.25 * 0.75) / 400));
  });

  it('keeps the sum of opinions to float32 rounding (<= 2^-24 per update) on a BA graph, 5 seeds; the synchronous scheme does not', async () => {
    const n = 2000;
    const steps = 20;
    const bound = n * steps * 2 ** -24;
    for (let seed = 1; seed <= 5; seed++) {
      const el = barabasiAlbert(n, 5, seed);
      const key = keyOf(seed, streamOf('test.x0'), 0);
      const x0 = Array.from({ length: n }, (_, i) => -1 + 2 * uniform(key, i));
      const sum = (x: number[]) => x.reduce((a, b) => a + b, 0);
      const drift: Record<string, number> = {};
      for (const scheme of ['pairwise', 'synchronous'] as const) {
        const w = await makeWorld(n, Array.from(el.src, (u, k) => [u, el.dst[k]] as [number, number]), x0, { directed: false, seed });
        const x = await step(w, [deffuant({ eps: 0.6, mu: 0.3, scheme })], steps);
        drift[scheme] = Math.abs(sum(x) - sum(x0.map(f)));
      }
      expect(drift.pairwise, `seed ${seed}`).toBeLessThan(bound);
      // The test can fail: one-sided moves shift the sum by far more than the rounding bound.
      expect(drift.synchronous, `seed ${seed}`).toBeGreaterThan(10 * bound);
    }
  });

  it('gives the same bytes on the worker pool (one chunk) as in the main thread', async () => {
    const n = 3000;
    const el = barabasiAlbert(n, 3, 4);
    const follows = Array.from(el.src, (u, k) => [u, el.dst[k]] as [number, number]);
    const x0 = Array.from({ length: n }, (_, i) => Math.sin(i));
    const one = await step(await makeWorld(n, follows, x0, { directed: false }), [deffuant({ eps: 0.5, mu: 0.5 })], 3);
    const two = await step(await makeWorld(n, follows, x0, { directed: false, ex: pool }), [deffuant({ eps: 0.5, mu: 0.5 })], 3);
    expect(two).toEqual(one);
    expect(one).not.toEqual(x0.map(f));
  });

  it('is declared sequential: every executor runs it as one chunk, whatever chunking the caller asks for', async () => {
    const w = await makeWorld(4, [[0, 1], [1, 0], [2, 3], [3, 2]], [0, 0.5, 0, 0.5], { ex: pool });
    const G = w.graph.following;
    const args = { offsets: G.offsets, targets: G.targets, x: w.agents.columns.opinion, eps: 1, mu: 0.5, agents: 4, key: 3 };
    for (const ex of [exec, pool]) expect(await ex.run(K.pairwiseBounded, args, 1000, { chunkRows: 10 })).toHaveLength(1);
  });

  it('rejects an unknown scheme', () => {
    expect(() => deffuant({ eps: 0.3, mu: 0.5, scheme: 'async' as never })).toThrow(/scheme must be one of pairwise, synchronous/);
  });
});

describe('Hegselmann-Krause options', () => {
  // 0 follows 1..4; 1 follows 0; 2, 3 and 4 follow nobody. Values exact in float32.
  const follows: Array<[number, number]> = [[0, 1], [0, 2], [0, 3], [0, 4], [1, 0]];
  const x0 = [0, 0.25, 0.5, -0.5, 1];
  // [eps, includeSelf, strict, expected]: by hand, from the sets within eps of x0[0] = 0 and x0[1] = 0.25.
  const cases: Array<[number, boolean, boolean, number[]]> = [
    [0.25, true, false, [(0 + 0.25) / 2, (0.25 + 0) / 2, 0.5, -0.5, 1]],
    [0.25, true, true, [0, 0.25, 0.5, -0.5, 1]],
    [0.25, false, false, [0.25, 0, 0.5, -0.5, 1]],
    // Nobody within a strict 0.25 of agent 0 or 1 besides themselves: they keep their opinions.
    [0.25, false, true, [0, 0.25, 0.5, -0.5, 1]],
    [0.5, true, false, [(0 + 0.25 + 0.5 - 0.5) / 4, (0.25 + 0) / 2, 0.5, -0.5, 1]],
    [0.5, true, true, [(0 + 0.25) / 2, (0.25 + 0) / 2, 0.5, -0.5, 1]],
    [0.5, false, false, [(0.25 + 0.5 - 0.5) / 3, 0, 0.5, -0.5, 1]],
    [0.5, false, true, [0.25, 0, 0.5, -0.5, 1]],
  ];
  for (const [eps, includeSelf, strict, want] of cases) {
    it(`eps = ${eps}, includeSelf = ${includeSelf}, strict = ${strict}: one step by hand`, async () => {
      const x = await step(await makeWorld(5, follows, x0), [hegselmannKrause({ eps, includeSelf, strict })]);
      expect(x).toEqual(want.map(f));
    });
  }

  it('defaults are the paper\'s: the agent counts itself, and the bound is <=', async () => {
    const x = await step(await makeWorld(5, follows, x0), [hegselmannKrause({ eps: 0.25 })]);
    expect(x).toEqual(cases[0][3].map(f));
  });
});
