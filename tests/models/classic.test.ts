import { afterAll, describe, expect, it } from 'vitest';
import { independentCascade, linearThreshold, sir } from '../../models/cascade.ts';
import { deffuant, degroot, hegselmannKrause, opinionStats, voter } from '../../models/opinion.ts';
import { barabasiAlbert } from '../../graph/generators.ts';
import { seedTotal, selectSeeds } from '../../models/seeds.ts';
import { buildGraph } from '../../sim-core/csr.ts';
import { type Executor } from '../../sim-core/exec.ts';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { measureInitial, runStep, type Phase, type World } from '../../sim-core/phase.ts';
import { keyOf } from '../../sim-core/rng.ts';
import { createTable, sharedArray, type Schema } from '../../sim-core/table.ts';
import { makeWorld as buildWorld } from './worlds.ts';

const exec = createExecutor(1);
afterAll(() => exec.close());

/** A world over a hand-built graph (see worlds.ts), on the inline executor unless `ex` says otherwise. */
const makeWorld = (n: number, follows: Array<[number, number]>, o: { seed?: number; opinion?: number[]; directed?: boolean; ex?: Executor } = {}): Promise<World> =>
  buildWorld(o.ex ?? exec, n, follows, o);

async function init(world: World, phases: Phase[]): Promise<void> {
  for (const p of phases) await p.init?.(world);
}

const col = (w: World, name: string) => Array.from(w.agents.columns[name]);

describe('independent cascade', () => {
  it('p = 1 on a directed tree reaches exactly the followers, one hop per step', async () => {
    // 1 follows 0; 2 and 5 follow 1; 3 and 0 follow 2; 4 follows 3; 6 follows 5; 0 follows 7.
    // Influence runs from an account to its followers: 0 -> 1 -> {2, 5} -> {3, 6} -> 4; never to 7.
    const w = await makeWorld(8, [
      [1, 0],
      [2, 1],
      [5, 1],
      [3, 2],
      [0, 2],
      [4, 3],
      [6, 5],
      [0, 7],
    ]);
    const phases = [independentCascade({ p: 1, seedCount: 1 })];
    await init(w, phases);
    const state = w.agents.columns.state as Uint8Array;
    state.fill(0);
    state[0] = 1;
    const expected = [
      [2, 1, 0, 0, 0, 0, 0, 0],
      [2, 2, 1, 0, 0, 1, 0, 0],
      [2, 2, 2, 1, 0, 2, 1, 0],
      [2, 2, 2, 2, 1, 2, 2, 0],
      [2, 2, 2, 2, 2, 2, 2, 0],
      [2, 2, 2, 2, 2, 2, 2, 0],
    ];
    const newPerStep = [1, 2, 2, 1, 0, 0];
    for (let s = 0; s < expected.length; s++) {
      const m = await runStep(w, phases, s);
      expect(col(w, 'state'), `after step ${s}`).toEqual(expected[s]);
      expect(m.get('ic_new')).toBe(newPerStep[s]);
      const active = expected[s].filter((x) => x > 0).length;
      expect(m.get('ic_active')).toBe(active);
      expect(m.get('ic_fraction')).toBe(active / 8);
    }
  });

  it('p in (0, 1) on a star: one chance per follower, mean p * k over 30 seeds within 4 SE', async () => {
    const k = 200;
    const p = 0.3;
    const follows: Array<[number, number]> = Array.from({ length: k }, (_, i) => [i + 1, 0]);
    const first: number[] = [];
    for (let seed = 1; seed <= 30; seed++) {
      const w = await makeWorld(k + 1, follows, { seed });
      const phases = [independentCascade({ p, seedCount: 1 })];
      await init(w, phases);
      // The hub (200 followers) is the seed, and it counts in the fractions.
      expect(col(w, 'state')[0]).toBe(1);
      expect(col(w, 'state').filter((x) => x > 0).length).toBe(1);
      const m1 = await runStep(w, phases, 0);
      const added = m1.get('ic_new')!;
      first.push(added);
      expect(m1.get('ic_active')).toBe(1 + added);
      expect(m1.get('ic_fraction')).toBe((1 + added) / (k + 1));
      expect(col(w, 'state').filter((x) => x === 1).length).toBe(added);
      // The hub is spent and the followers have no followers: nothing more happens.
      const m2 = await runStep(w, phases, 1);
      expect(m2.get('ic_new')).toBe(0);
      expect(m2.get('ic_active')).toBe(1 + added);
    }
    const mean = first.reduce((a, b) => a + b, 0) / first.length;
    const se = Math.sqrt((k * p * (1 - p)) / first.length);
    expect(Math.abs(mean - p * k), `mean ${mean}`).toBeLessThan(4 * se);
    // The seeds really differ.
    expect(new Set(first).size).toBeGreaterThan(5);
  });
});

describe('linear threshold', () => {
  it('adopts when the adopting share of followees reaches the threshold, synchronously', async () => {
    // Seeds 0, 1, 2 adopted. 3 follows {0,1,4} (share 2/3, th 0.6): step 1. 4 follows {0,5}
    // (share 1/2, th 0.5): step 1. 5 follows {3,4} (share 0 then 1, th 0.9): step 2, not step 1.
    // 6 follows {3,0,7,8} (1/4 then 2/4, th 0.7): never. 9 follows {5,6} (th 0.5): step 3.
    // 7 and 8 follow nobody (th 0.3): never.
    const w = await makeWorld(10, [
      [3, 0],
      [3, 1],
      [3, 4],
      [4, 0],
      [4, 5],
      [5, 3],
      [5, 4],
      [6, 3],
      [6, 0],
      [6, 7],
      [6, 8],
      [9, 5],
      [9, 6],
    ]);
    const phases = [linearThreshold({ seedCount: 1 })];
    await init(w, phases);
    const state = w.agents.columns.state as Uint8Array;
    const th = w.agents.columns.threshold as Float32Array;
    state.set([1, 1, 1, 0, 0, 0, 0, 0, 0, 0]);
    th.set([0.5, 0.5, 0.5, 0.6, 0.5, 0.9, 0.7, 0.3, 0.3, 0.5]);
    const expected = [
      [1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
      [1, 1, 1, 1, 1, 1, 0, 0, 0, 0],
      [1, 1, 1, 1, 1, 1, 0, 0, 0, 1],
      [1, 1, 1, 1, 1, 1, 0, 0, 0, 1],
    ];
    const added = [2, 1, 1, 0];
    for (let s = 0; s < expected.length; s++) {
      const m = await runStep(w, phases, s);
      expect(col(w, 'state'), `after step ${s}`).toEqual(expected[s]);
      expect(m.get('lt_new')).toBe(added[s]);
      expect(m.get('lt_active')).toBe(expected[s].filter((x) => x === 1).length);
      expect(m.get('lt_fraction')).toBe(expected[s].filter((x) => x === 1).length / 10);
    }
  });

  it('draws thresholds in [0, 1) and seeds the hubs', async () => {
    const n = 2000;
    const follows: Array<[number, number]> = [];
    for (let i = 1; i < n; i++) follows.push([i, 0]);
    for (let i = 2; i < n; i += 2) follows.push([i, 1]);
    const w = await makeWorld(n, follows, { seed: 3 });
    await init(w, [linearThreshold({ seedCount: 2 })]);
    const th = Array.from(w.agents.columns.threshold as Float32Array);
    expect(Math.min(...th)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...th)).toBeLessThanOrEqual(1);
    const mean = th.reduce((a, b) => a + b, 0) / n;
    expect(Math.abs(mean - 0.5)).toBeLessThan(4 * Math.sqrt(1 / 12 / n));
    const state = col(w, 'state');
    expect(state[0]).toBe(1);
    expect(state[1]).toBe(1);
    expect(state.filter((x) => x === 1).length).toBe(2);
  });

  it('a fixed threshold 0.5: every node has it, and exactly the predicted nodes adopt', async () => {
    // 0 is the seed. 1 follows {0, 3}: share 1/2 >= 0.5 at step 0. 2 follows {0, 1, 3}: 1/3 at
    // step 0, 2/3 once 1 has adopted, so step 1. 3 follows nobody and never adopts. With thresholds
    // drawn from U[0, 1) (seed 1) the outcome differs.
    const follows: Array<[number, number]> = [
      [1, 0],
      [1, 3],
      [2, 0],
      [2, 1],
      [2, 3],
    ];
    const w = await makeWorld(4, follows);
    const phases = [linearThreshold({ threshold: 0.5, seedCount: 1 })];
    await init(w, phases);
    expect(col(w, 'threshold')).toEqual([0.5, 0.5, 0.5, 0.5]);
    (w.agents.columns.state as Uint8Array).set([1, 0, 0, 0]);
    const expected = [
      [1, 1, 0, 0],
      [1, 1, 1, 0],
      [1, 1, 1, 0],
    ];
    for (let s = 0; s < expected.length; s++) {
      const m = await runStep(w, phases, s);
      expect(col(w, 'state'), `after step ${s}`).toEqual(expected[s]);
      expect(m.get('lt_new')).toBe([1, 1, 0][s]);
    }
    const u = await makeWorld(4, follows);
    await init(u, [linearThreshold({ seedCount: 1 })]);
    expect(new Set(col(u, 'threshold')).size).toBe(4);
  });

  it('a fixed threshold adopts at exact equality even where theta is not an f32 (1/5 >= 0.2); 0 and 1 at the ends', async () => {
    // 0 adopted; 5 follows 0..4 (share 1/5); 6 follows 0..4 and 7 (share 1/6).
    const follows: Array<[number, number]> = [];
    for (let v = 0; v < 5; v++) follows.push([5, v], [6, v]);
    follows.push([6, 7]);
    const run = async (threshold: number) => {
      const w = await makeWorld(8, follows);
      const phases = [linearThreshold({ threshold, seedCount: 1 })];
      await init(w, phases);
      (w.agents.columns.state as Uint8Array).set([1, 0, 0, 0, 0, 0, 0, 0]);
      await runStep(w, phases, 0);
      return col(w, 'state');
    };
    expect(await run(0.2)).toEqual([1, 0, 0, 0, 0, 1, 0, 0]);
    expect(await run(0.1)).toEqual([1, 0, 0, 0, 0, 1, 1, 0]);
    expect(await run(0.21)).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    // theta = 0: every account that follows someone adopts at once (share 0 >= 0, as in NDlib).
    expect(await run(0)).toEqual([1, 0, 0, 0, 0, 1, 1, 0]);
    expect(await run(1)).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(() => linearThreshold({ threshold: 1.5 })).toThrow(/threshold/);
  });
});

describe('SIR / SIS', () => {
  // A path: i + 1 follows i, so infection runs 0 -> 1 -> 2 -> 3 -> 4.
  const path: Array<[number, number]> = [
    [1, 0],
    [2, 1],
    [3, 2],
    [4, 3],
  ];

  it('SIR with beta = gamma = 1 transmits in the step it recovers', async () => {
    const w = await makeWorld(5, path);
    const phases = [sir({ beta: 1, gamma: 1, seedCount: 1 })];
    await init(w, phases);
    const state = w.agents.columns.state as Uint8Array;
    state.set([1, 0, 0, 0, 0]);
    const expected = [
      [2, 1, 0, 0, 0],
      [2, 2, 1, 0, 0],
      [2, 2, 2, 1, 0],
      [2, 2, 2, 2, 1],
      [2, 2, 2, 2, 2],
      [2, 2, 2, 2, 2],
    ];
    for (let s = 0; s < expected.length; s++) {
      const m = await runStep(w, phases, s);
      const e = expected[s];
      expect(col(w, 'state'), `after step ${s}`).toEqual(e);
      expect(m.get('susceptible')).toBe(e.filter((x) => x === 0).length);
      expect(m.get('infectious')).toBe(e.filter((x) => x === 1).length);
      expect(m.get('recovered')).toBe(e.filter((x) => x === 2).length);
      expect(m.get('new_infections')).toBe(s < 4 ? 1 : 0);
    }
  });

  it('SIS returns recovered nodes to susceptible, who can be infected again', async () => {
    const w = await makeWorld(5, path);
    const phases = [sir({ beta: 1, gamma: 1, sis: true, seedCount: 1 })];
    await init(w, phases);
    const state = w.agents.columns.state as Uint8Array;
    state.set([1, 0, 0, 0, 0]);
    for (let s = 0; s < 4; s++) {
      await runStep(w, phases, s);
      const e = [0, 0, 0, 0, 0];
      e[s + 1] = 1;
      expect(col(w, 'state'), `after step ${s}`).toEqual(e);
    }
    await runStep(w, phases, 4);
    expect(col(w, 'state')).toEqual([0, 0, 0, 0, 0]);

    // Two accounts that follow each other pass the infection back and forth.
    const pair = await makeWorld(2, [
      [0, 1],
      [1, 0],
    ]);
    const ph = [sir({ beta: 1, gamma: 1, sis: true, seedCount: 1 })];
    await init(pair, ph);
    (pair.agents.columns.state as Uint8Array).set([1, 0]);
    for (let s = 0; s < 4; s++) {
      const m = await runStep(pair, ph, s);
      expect(col(pair, 'state')).toEqual(s % 2 === 0 ? [0, 1] : [1, 0]);
      expect(m.get('new_infections')).toBe(1);
      expect(m.get('recovered')).toBe(0);
    }
  });

  it('recovery has probability gamma (mean over 8 seeds within 4 SE); gamma = 0 never recovers', async () => {
    const n = 1000;
    const gamma = 0.25;
    const recovered: number[] = [];
    for (let seed = 1; seed <= 8; seed++) {
      const w = await makeWorld(n, [], { seed });
      const phases = [sir({ beta: 1, gamma, seeds: 'random', seedCount: n })];
      await init(w, phases);
      const m = await runStep(w, phases, 0);
      recovered.push(m.get('recovered')!);
      expect(m.get('infectious')! + m.get('recovered')!).toBe(n);
    }
    const mean = recovered.reduce((a, b) => a + b, 0) / recovered.length;
    expect(Math.abs(mean - gamma * n)).toBeLessThan(4 * Math.sqrt((n * gamma * (1 - gamma)) / recovered.length));

    const w = await makeWorld(5, path);
    const phases = [sir({ beta: 1, gamma: 0, seedCount: 1 })];
    await init(w, phases);
    (w.agents.columns.state as Uint8Array).set([1, 0, 0, 0, 0]);
    for (let s = 0; s < 3; s++) await runStep(w, phases, s);
    expect(col(w, 'state')).toEqual([1, 1, 1, 1, 0]);
  });
});

describe('voter', () => {
  it('everyone copies the one account they all follow, after one step', async () => {
    for (const k of [2, 3]) {
      const n = 50;
      const follows: Array<[number, number]> = Array.from({ length: n - 1 }, (_, i) => [i + 1, 0]);
      const w = await makeWorld(n, follows);
      const phases = [voter({ states: k })];
      await init(w, phases);
      const vote = w.agents.columns.vote as Uint8Array;
      // Random initial votes in [0, k): all states present.
      expect(new Set(vote).size).toBe(k);
      vote.fill(0);
      vote[0] = k - 1;
      const m = await runStep(w, phases, 0);
      expect(col(w, 'vote')).toEqual(new Array(n).fill(k - 1));
      expect(m.get(`vote_${k - 1}`)).toBe(n);
      expect(m.get('vote_0')).toBe(0);
    }
  });

  it('rejects more states than the u8 vote column holds', () => {
    expect(() => voter({ states: 300 })).toThrow(/states/);
    expect(() => voter({ states: 256 })).not.toThrow();
  });

  it('is synchronous: two accounts that follow each other swap votes', async () => {
    const w = await makeWorld(3, [
      [0, 1],
      [1, 0],
    ]);
    const phases = [voter()];
    await init(w, phases);
    (w.agents.columns.vote as Uint8Array).set([0, 1, 1]);
    await runStep(w, phases, 0);
    // Node 2 follows nobody and keeps its vote.
    expect(col(w, 'vote')).toEqual([1, 0, 1]);
    await runStep(w, phases, 1);
    expect(col(w, 'vote')).toEqual([0, 1, 1]);
  });

  it('reaches consensus on a small complete graph (5 seeds)', async () => {
    const n = 10;
    const follows: Array<[number, number]> = [];
    for (let u = 0; u < n; u++) for (let v = 0; v < n; v++) if (u !== v) follows.push([u, v]);
    for (let seed = 1; seed <= 5; seed++) {
      const w = await makeWorld(n, follows, { seed });
      const phases = [voter()];
      await init(w, phases);
      const vote = w.agents.columns.vote as Uint8Array;
      expect(new Set(vote).size, 'starts mixed').toBe(2);
      let step = 0;
      while (new Set(vote).size > 1 && step < 2000) await runStep(w, phases, step++);
      expect(new Set(vote).size, `seed ${seed} after ${step} steps`).toBe(1);
      // Consensus is absorbing.
      const v = vote[0];
      for (let s = 0; s < 5; s++) await runStep(w, phases, step + s);
      expect(col(w, 'vote')).toEqual(new Array(n).fill(v));
    }
  });
});

describe('DeGroot', () => {
  // 0 follows 1 and 2; 1 follows 2; 2 follows nobody; 3 follows 0.
  const follows: Array<[number, number]> = [
    [0, 1],
    [0, 2],
    [1, 2],
    [3, 0],
  ];
  const x0 = [0, 0.5, -1, 1];

  it('selfWeight 1: the mean of own and followees\' opinions, from the start-of-step values', async () => {
    const w = await makeWorld(4, follows, { opinion: x0 });
    const phases = [degroot()];
    await init(w, phases);
    await runStep(w, phases, 0);
    const x1 = [(0 + 0.5 - 1) / 3, (0.5 - 1) / 2, -1, (1 + 0) / 2];
    col(w, 'opinion').forEach((v, i) => expect(v, `row ${i}`).toBeCloseTo(x1[i], 6));
    await runStep(w, phases, 1);
    const x2 = [(x1[0] + x1[1] + x1[2]) / 3, (x1[1] + x1[2]) / 2, -1, (x1[3] + x1[0]) / 2];
    col(w, 'opinion').forEach((v, i) => expect(v, `row ${i}`).toBeCloseTo(x2[i], 6));
  });

  it('selfWeight 0: the plain mean of followees; accounts that follow nobody keep theirs', async () => {
    const w = await makeWorld(4, follows, { opinion: x0 });
    const phases = [degroot({ selfWeight: 0 })];
    await init(w, phases);
    await runStep(w, phases, 0);
    const x1 = [(0.5 - 1) / 2, -1, -1, 0];
    col(w, 'opinion').forEach((v, i) => expect(v, `row ${i}`).toBeCloseTo(x1[i], 6));
  });
});

describe('Hegselmann-Krause', () => {
  // 0 follows 1..4; 1 follows 0; the rest follow nobody.
  const follows: Array<[number, number]> = [
    [0, 1],
    [0, 2],
    [0, 3],
    [0, 4],
    [1, 0],
  ];
  const x0 = [0, 0.1, 0.5, -0.3, 0.9];
  const cases: Array<[number, number[]]> = [
    [0.05, [0, 0.1, 0.5, -0.3, 0.9]],
    [0.15, [(0 + 0.1) / 2, (0.1 + 0) / 2, 0.5, -0.3, 0.9]],
    [0.35, [(0 + 0.1 - 0.3) / 3, 0.05, 0.5, -0.3, 0.9]],
    [1, [(0 + 0.1 + 0.5 - 0.3 + 0.9) / 5, 0.05, 0.5, -0.3, 0.9]],
  ];
  for (const [eps, x1] of cases) {
    it(`eps = ${eps}: mean over self and followees within eps (one step, by hand)`, async () => {
      const w = await makeWorld(5, follows, { opinion: x0 });
      const phases = [hegselmannKrause({ eps })];
      await init(w, phases);
      await runStep(w, phases, 0);
      col(w, 'opinion').forEach((v, i) => expect(v, `row ${i}`).toBeCloseTo(x1[i], 6));
    });
  }
});

describe('Deffuant, scheme synchronous', () => {
  it('moves toward the (only) followee by mu * d only when |d| < eps, synchronously', async () => {
    // 0 follows 1 (d = 0.2); 1 follows 0 (d = -0.2); 2 follows 3 (d = 0.5, too far);
    // 3 follows nobody; 4 follows 5 (d = -0.25).
    const w = await makeWorld(
      6,
      [
        [0, 1],
        [1, 0],
        [2, 3],
        [4, 5],
      ],
      { opinion: [0, 0.2, 0, 0.5, 0.5, 0.25] },
    );
    const phases = [deffuant({ eps: 0.3, mu: 0.5, scheme: 'synchronous' })];
    await init(w, phases);
    await runStep(w, phases, 0);
    const x1 = [0.1, 0.1, 0, 0.5, 0.375, 0.25];
    col(w, 'opinion').forEach((v, i) => expect(v, `row ${i}`).toBeCloseTo(x1[i], 6));
    await runStep(w, phases, 1);
    const x2 = [0.1, 0.1, 0, 0.5, 0.3125, 0.25];
    col(w, 'opinion').forEach((v, i) => expect(v, `row ${i}`).toBeCloseTo(x2[i], 6));
  });

  it('one phase object can be initialised again for a larger world', async () => {
    const phase = deffuant({ eps: 0.3, mu: 0.5, scheme: 'synchronous' });
    const small = await makeWorld(2, [[0, 1]], { opinion: [0, 0.2] });
    await init(small, [phase]);
    await runStep(small, [phase], 0);
    expect(col(small, 'opinion')[0]).toBeCloseTo(0.1, 6);
    // Rows 2 and 3 exist only in the second world.
    const big = await makeWorld(4, [[0, 1], [2, 3]], { opinion: [0, 0.2, 0, 0.2] });
    await init(big, [phase]);
    await runStep(big, [phase], 0);
    col(big, 'opinion').forEach((v, i) => expect(v, `row ${i}`).toBeCloseTo([0.1, 0.2, 0.1, 0.2][i], 6));
  });

  it('picks a followee at random: with two followees, about half the agents move toward each', async () => {
    // Agents 2..401 follow 0 (x = -0.1) and 1 (x = 0.1); their own x = 0; eps 0.5, mu 1.
    const n = 402;
    const follows: Array<[number, number]> = [];
    for (let i = 2; i < n; i++) follows.push([i, 0], [i, 1]);
    const x = new Array<number>(n).fill(0);
    x[0] = -0.1;
    x[1] = 0.1;
    const w = await makeWorld(n, follows, { opinion: x, seed: 11 });
    const phases = [deffuant({ eps: 0.5, mu: 1, scheme: 'synchronous' })];
    await init(w, phases);
    await runStep(w, phases, 0);
    const after = col(w, 'opinion').slice(2);
    const up = after.filter((v) => v > 0.09).length;
    const down = after.filter((v) => v < -0.09).length;
    expect(up + down).toBe(n - 2);
    expect(Math.abs(up / (n - 2) - 0.5)).toBeLessThan(4 * Math.sqrt(0.25 / (n - 2)));
  });
});

describe('opinionStats', () => {
  /** Population moments and Sarle's bimodality coefficient, computed directly. */
  function direct(x: number[]) {
    const n = x.length;
    const mean = x.reduce((a, b) => a + b, 0) / n;
    const m = (p: number) => x.reduce((a, b) => a + (b - mean) ** p, 0) / n;
    const m2 = m(2);
    const g = m(3) / m2 ** 1.5;
    const k = m(4) / (m2 * m2) - 3;
    const b = (g * g + 1) / (k + (3 * (n - 1) ** 2) / ((n - 2) * (n - 3)));
    return { mean, var: m2, b };
  }

  async function stats(x: number[]) {
    const w = await makeWorld(x.length, [], { opinion: x });
    const m = await runStep(w, [opinionStats()], 0);
    // The kernel reads the f32 column: compare with the f32-rounded values.
    return { got: m, want: direct(x.map(Math.fround)) };
  }

  it('mean, variance and bimodality match a direct computation; two peaks score higher than uniform', async () => {
    const n = 2001;
    const uniform = Array.from({ length: n }, (_, i) => -1 + (2 * i) / (n - 1));
    const twoPeaks = Array.from({ length: n }, (_, i) => (i % 2 ? 0.8 : -0.7) + 0.05 * Math.sin(i));
    const skewed = Array.from({ length: n }, (_, i) => ((i / n) ** 3) * 2 - 0.9);
    const b: Record<string, number> = {};
    for (const [name, x] of Object.entries({ uniform, twoPeaks, skewed })) {
      const { got, want } = await stats(x);
      expect(got.get('opinion_mean'), name).toBeCloseTo(want.mean, 9);
      expect(got.get('opinion_var'), name).toBeCloseTo(want.var, 9);
      expect(got.get('opinion_bimodality'), name).toBeCloseTo(want.b, 6);
      b[name] = got.get('opinion_bimodality')!;
    }
    // Uniform: g = 0, k = -1.2, so b ~ 1 / 1.8 = 0.556; two tight peaks: k ~ -2, b ~ 1.
    expect(b.uniform).toBeCloseTo(1 / 1.8, 2);
    expect(b.twoPeaks).toBeGreaterThan(0.9);
    expect(b.twoPeaks).toBeGreaterThan(b.uniform + 0.3);
  });

  it('a constant opinion has variance 0 and bimodality 0', async () => {
    const { got } = await stats(new Array<number>(100_000).fill(0.3));
    expect(got.get('opinion_mean')).toBeCloseTo(Math.fround(0.3), 12);
    expect(got.get('opinion_var')).toBe(0);
    expect(got.get('opinion_bimodality')).toBe(0);
  });

  it('stays exact near consensus (variance << mean^2), where DeGroot and HK end up', async () => {
    // Two tight peaks at 0.7 +- 0.001: variance 1e-6, g = 0, k = -2, so b = 1 / (corr - 2) ~ 1.
    const n = 200_000;
    const x = Array.from({ length: n }, (_, i) => 0.7 + (i % 2 ? 0.001 : -0.001));
    const { got, want } = await stats(x);
    expect(got.get('opinion_var')! / want.var).toBeCloseTo(1, 6);
    expect(got.get('opinion_bimodality')).toBeCloseTo(want.b, 4);
    expect(want.b).toBeCloseTo(1, 3);
    // A tight normal-ish bump: b well below 5/9.
    const y = Array.from({ length: n }, (_, i) => 0.3 + 1e-4 * (Math.sin(i) + Math.sin(2.7 * i) + Math.sin(5.3 * i)));
    const r = await stats(y);
    expect(r.got.get('opinion_bimodality')).toBeCloseTo(r.want.b, 4);
    expect(r.want.b).toBeLessThan(0.5);
  });
});

describe('seed counts and fractions', () => {
  it('seedFraction 0.1 of 1000 agents seeds exactly 100; rounding, at least 1; not both', async () => {
    for (const [make, name] of [
      [(o: object) => independentCascade({ p: 0.5, seeds: 'random', ...o }), 'IC'],
      [(o: object) => linearThreshold({ seeds: 'random', ...o }), 'LT'],
      [(o: object) => sir({ beta: 0.5, gamma: 0.5, seeds: 'random', ...o }), 'SIR'],
    ] as const) {
      const w = await makeWorld(1000, []);
      await init(w, [make({ seedFraction: 0.1 })]);
      expect(col(w, 'state').filter((x) => x === 1).length, name).toBe(100);
      const c = await makeWorld(1000, []);
      await init(c, [make({ seedCount: 37 })]);
      expect(col(c, 'state').filter((x) => x === 1).length, name).toBe(37);
      expect(() => make({ seedCount: 5, seedFraction: 0.1 }), name).toThrow(/seedCount or seedFraction, not both/);
      expect(() => make({ seedFraction: 0 }), name).toThrow(/seedFraction/);
    }
    // 0.29 x 100 is 28.999999999999996 in floating point: rounded, not truncated.
    expect(seedTotal(100, { seedFraction: 0.29 }, 1)).toBe(29);
    expect(seedTotal(1000, { seedFraction: 0.0001 }, 1)).toBe(1);
    expect(seedTotal(10, { seedFraction: 1 }, 1)).toBe(10);
    expect(seedTotal(10, {}, 4)).toBe(4);
  });
});

describe('initial opinions', () => {
  it('uniform on [lo, hi]: in range, mean within 4 SE over 4 seeds, one stream for every opinion model', async () => {
    const n = 4000;
    const [lo, hi] = [0.2, 0.6];
    const sd = (hi - lo) / Math.sqrt(12);
    const firsts: number[] = [];
    for (let seed = 1; seed <= 4; seed++) {
      const w = await makeWorld(n, [], { seed, opinion: new Array(n).fill(-1) });
      await init(w, [deffuant({ eps: 0.3, mu: 0.5, initial: { kind: 'uniform', lo, hi } })]);
      const x = col(w, 'opinion');
      expect(Math.min(...x)).toBeGreaterThanOrEqual(Math.fround(lo));
      expect(Math.max(...x)).toBeLessThanOrEqual(Math.fround(hi));
      const mean = x.reduce((a, b) => a + b, 0) / n;
      expect(Math.abs(mean - (lo + hi) / 2), `seed ${seed}`).toBeLessThan((4 * sd) / Math.sqrt(n));
      const v = x.reduce((a, b) => a + (b - mean) ** 2, 0) / n;
      expect(v / (sd * sd), `seed ${seed}`).toBeGreaterThan(0.9);
      expect(v / (sd * sd), `seed ${seed}`).toBeLessThan(1.1);
      firsts.push(x[0]);
      // Hegselmann-Krause and DeGroot start from the same opinions for the same seed.
      for (const phase of [hegselmannKrause({ eps: 0.2, initial: { kind: 'uniform', lo, hi } }), degroot({ initial: { kind: 'uniform', lo, hi } })]) {
        const o = await makeWorld(n, [], { seed, opinion: new Array(n).fill(-1) });
        await init(o, [phase]);
        expect(col(o, 'opinion')).toEqual(x);
      }
    }
    expect(new Set(firsts).size).toBe(4);
  });

  it('leanings, or no initial at all, keep the opinions the table has; bad bounds throw', async () => {
    const x0 = [0.5, -0.25, 1, -1];
    for (const initial of [undefined, { kind: 'leanings' as const }]) {
      const w = await makeWorld(4, [], { opinion: x0 });
      await init(w, [hegselmannKrause({ eps: 0.2, initial })]);
      expect(col(w, 'opinion')).toEqual(x0);
    }
    expect(() => deffuant({ eps: 0.2, mu: 0.5, initial: { kind: 'uniform', lo: 0.5, hi: 0 } })).toThrow(/lo <= hi/);
    expect(() => degroot({ initial: { kind: 'uniform', lo: -1.5 } })).toThrow(/lo <= hi/);
  });

  it('voter shares: state 0 never drawn with weight 0, state 2 about 3/4 (4 SE); wrong length throws', async () => {
    const n = 4000;
    const w = await makeWorld(n, []);
    await init(w, [voter({ states: 3, shares: [0, 1, 3] })]);
    const vote = col(w, 'vote');
    expect(vote.filter((v) => v === 0).length).toBe(0);
    const share = vote.filter((v) => v === 2).length / n;
    expect(Math.abs(share - 0.75)).toBeLessThan(4 * Math.sqrt((0.75 * 0.25) / n));
    expect(() => voter({ states: 3, shares: [1, 1] })).toThrow(/one weight per state/);
    expect(() => voter({ states: 2, shares: [0, 0] })).toThrow(/not all 0/);
  });
});

describe('initial metrics (measureInitial)', () => {
  it('reports the seeded state with "new" counts 0, before any step', async () => {
    const w = await makeWorld(1000, []);
    const ic = [independentCascade({ p: 0.5, seeds: 'random', seedFraction: 0.1 })];
    await init(w, ic);
    const m = await measureInitial(w, ic);
    expect(Object.fromEntries(m!)).toEqual({ ic_new: 0, ic_active: 100, ic_fraction: 0.1 });

    const s = await makeWorld(1000, []);
    const sirPhases = [sir({ beta: 0.5, gamma: 0.5, seeds: 'random', seedCount: 30 })];
    await init(s, sirPhases);
    expect(Object.fromEntries((await measureInitial(s, sirPhases))!)).toEqual({ susceptible: 970, infectious: 30, recovered: 0, new_infections: 0 });

    const l = await makeWorld(10, []);
    const ltPhases = [linearThreshold({ seedFraction: 0.2 })];
    await init(l, ltPhases);
    expect(Object.fromEntries((await measureInitial(l, ltPhases))!)).toEqual({ lt_new: 0, lt_active: 2, lt_fraction: 0.2 });

    const o = await makeWorld(4, [], { opinion: [0, 0, 1, 1] });
    const op = [degroot(), opinionStats()];
    await init(o, op);
    const om = (await measureInitial(o, op))!;
    expect(om.get('opinion_mean')).toBe(0.5);
    expect(om.get('opinion_var')).toBe(0.25);
    // measure changes nothing.
    expect(col(o, 'opinion')).toEqual([0, 0, 1, 1]);

    const v = await makeWorld(6, []);
    const vp = [voter({ states: 2, shares: [0, 1] })];
    await init(v, vp);
    expect(Object.fromEntries((await measureInitial(v, vp))!)).toEqual({ vote_0: 0, vote_1: 6 });
  });

  it('no initial row when a phase with metrics cannot measure, or none has metrics', async () => {
    const w = await makeWorld(4, [], { opinion: [0, 0, 1, 1] });
    const noMeasure: Phase = { name: 'flow', reads: [], writes: [], metrics: { things: 'i32' }, run: (_w, ctx) => ctx.metric('things', 1) };
    expect(await measureInitial(w, [opinionStats(), noMeasure])).toBeUndefined();
    expect(await measureInitial(w, [degroot()])).toBeUndefined();
  });
});

describe('selectSeeds', () => {
  // Follower counts: node v has FOLLOWERS[v] followers (all from nodes 10..), 0 for some.
  const FOLLOWERS = [3, 0, 7, 1, 5, 2, 0, 9, 4, 1];
  async function graphWithFollowers() {
    const follows: Array<[number, number]> = [];
    let next = 10;
    FOLLOWERS.forEach((c, v) => {
      for (let i = 0; i < c; i++) follows.push([next++, v]);
    });
    return makeWorld(next, follows);
  }

  it('hubs are the most-followed accounts, best first; leaves the least-followed with at least one', async () => {
    const w = await graphWithFollowers();
    const n = w.agents.length;
    const F = w.graph.followers;
    expect(Array.from(selectSeeds(F, n, 'hubs', 4, keyOf(1, 2, 3)))).toEqual([7, 2, 4, 8]);
    // Nodes 3 and 9 tie on one follower; the order between them depends on the key only.
    const leaves = Array.from(selectSeeds(F, n, 'leaves', 3, keyOf(1, 2, 3)));
    expect(leaves.slice(0, 2).sort()).toEqual([3, 9]);
    expect(leaves[2]).toBe(5);
    // Only 8 accounts have followers: asking for every account's worth of leaves returns those 8.
    const all = Array.from(selectSeeds(F, n, 'leaves', n, keyOf(1, 2, 3)));
    expect(all.sort((a, b) => a - b)).toEqual([0, 2, 3, 4, 5, 7, 8, 9]);
    expect(selectSeeds(F, n, 'hubs', 0, 1).length).toBe(0);
    expect(selectSeeds(F, n, 'hubs', n, 1).length).toBe(n);
    // More seeds than accounts is refused, not clamped.
    expect(() => selectSeeds(F, n, 'hubs', n + 10, 1)).toThrow(`${n + 10} seed accounts asked for, but there are only ${n} accounts`);
  });

  it('is deterministic for a key; random picks distinct rows that change with the key', async () => {
    const w = await graphWithFollowers();
    const n = w.agents.length;
    const F = w.graph.followers;
    for (const s of ['hubs', 'leaves', 'random'] as const) {
      expect(Array.from(selectSeeds(F, n, s, 5, 42))).toEqual(Array.from(selectSeeds(F, n, s, 5, 42)));
    }
    const a = Array.from(selectSeeds(F, n, 'random', 10, 1));
    const b = Array.from(selectSeeds(F, n, 'random', 10, 2));
    expect(new Set(a).size).toBe(10);
    expect(a.every((v) => v >= 0 && v < n)).toBe(true);
    expect(a).not.toEqual(b);
  });

  it('hubs on a BA graph are exactly the top follower counts', async () => {
    const el = barabasiAlbert(5000, 2, 4);
    const g = await buildGraph(exec, el.nodes, el.src, el.dst, false);
    const deg = Array.from({ length: el.nodes }, (_, v) => g.followers.offsets[v + 1] - g.followers.offsets[v]);
    const top = selectSeeds(g.followers, el.nodes, 'hubs', 20, 7);
    const sorted = [...deg].sort((x, y) => y - x);
    expect(Array.from(top, (v) => deg[v])).toEqual(sorted.slice(0, 20));
    const low = selectSeeds(g.followers, el.nodes, 'leaves', 20, 7);
    expect(Array.from(low, (v) => deg[v]).every((d) => d === 2)).toBe(true);
  });
});

describe('threads', () => {
  it('IC and HK give byte-identical columns with 1 and 2 threads', async () => {
    // Large enough for several 65,536-row chunks, so two workers really split the rows.
    const n = 150_000;
    const el = barabasiAlbert(n, 3, 5);
    const ex2 = createExecutor(2);
    try {
      const out: Buffer[][] = [];
      const metrics: number[][] = [];
      for (const ex of [exec, ex2]) {
        const graph = await buildGraph(ex, n, el.src, el.dst, false);
        const agents = createTable({ opinion: { type: 'f32' } } as Schema, n);
        const x = agents.columns.opinion as Float32Array;
        for (let i = 0; i < n; i++) x[i] = Math.sin(i * 12.9898) * 0.9;
        const w: World = { agents, graph, exec: ex, seed: 9, stepSeconds: 3600 };
        const phases = [independentCascade({ p: 0.2, seeds: 'random', seedCount: 20 }), hegselmannKrause({ eps: 0.3 })];
        await init(w, phases);
        const m: number[] = [];
        for (let s = 0; s < 4; s++) m.push(...(await runStep(w, phases, s)).values());
        const bytes = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
        out.push([bytes(agents.columns.state), bytes(x), bytes(graph.following.targets)]);
        metrics.push(m);
      }
      expect(out[0][0].equals(out[1][0]), 'state').toBe(true);
      expect(out[0][1].equals(out[1][1]), 'opinion').toBe(true);
      expect(out[0][2].equals(out[1][2]), 'graph').toBe(true);
      expect(metrics[1]).toEqual(metrics[0]);
      // The cascade spread beyond the first chunk and HK moved opinions (the comparison is not empty).
      const state = new Uint8Array(out[0][0].buffer, out[0][0].byteOffset, n);
      let active = 0;
      let beyond = 0;
      for (let i = 0; i < n; i++) {
        if (state[i] > 0) {
          active++;
          if (i >= 65_536) beyond++;
        }
      }
      expect(active).toBeGreaterThan(500);
      expect(beyond).toBeGreaterThan(10);
      const x = new Float32Array(out[0][1].buffer, out[0][1].byteOffset, n);
      let moved = 0;
      for (let i = 0; i < n; i++) if (x[i] !== Math.fround(Math.sin(i * 12.9898) * 0.9)) moved++;
      expect(moved).toBeGreaterThan(n / 2);
    } finally {
      await ex2.close();
    }
  });
});
