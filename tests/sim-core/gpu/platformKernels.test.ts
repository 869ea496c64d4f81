/**
 * The social platform's WGSL kernels (platform/gpuKernels.ts) against their CPU declarations
 * (platform/kernels.ts), byte for byte, through the webgpu executor. Skips with one line when no
 * adapter exists.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor, type Executor } from '../../../sim-core/exec.ts';
import { bitsOf32, expf32, fromBits32 } from '../../../sim-core/f32math.ts';
import { hash } from '../../../sim-core/rng.ts';
import { sharedArray } from '../../../sim-core/table.ts';
import { RNG_WGSL } from '../../../sim-core/gpu/rng.wgsl.ts';
import { SOFTFLOAT_WGSL } from '../../../sim-core/gpu/softfloat.wgsl.ts';
import { SOFTMATH_WGSL } from '../../../sim-core/gpu/softmath.wgsl.ts';
import { GpuExecutor } from '../../../sim-core/gpu/executor.ts';
import { kernels as core } from '../../../sim-core/kernels.ts';
import { POISSON_COUNT_WGSL } from '../../../platform/gpuKernels.ts';
import { A, kernels as K, poissonCount32 } from '../../../platform/kernels.ts';
import { NPARAMS, P } from '../../../platform/behaviour.ts';
import { normalisedProfiles } from '../../../platform/phases.ts';
import { gpuOrSkip, opsShader, runOps } from '../../gpuHelpers.ts';

const gpu = await gpuOrSkip("the social platform's WGSL kernels against the CPU");
afterAll(() => gpu?.close());

/**
 * Runs fn with a two-thread CPU executor and a webgpu executor (on a one-thread CPU executor), then
 * closes the CPU executors; the webgpu one is not closed, since that closes the device (afterAll).
 */
async function onBoth(fn: (cpu: Executor, exec: GpuExecutor) => Promise<void>): Promise<void> {
  const cpu = createExecutor(2);
  const inner = createExecutor(1);
  try {
    await fn(cpu, new GpuExecutor(gpu!, inner));
  } finally {
    await cpu.close();
    await inner.close();
  }
}

const SHADER = opsShader(`${RNG_WGSL}\n${SOFTFLOAT_WGSL}\n${SOFTMATH_WGSL}\n${POISSON_COUNT_WGSL}`, ['select(0u, 1u, uniform_below(a, b))', 'poisson_count(b, a)']);

describe.skipIf(!gpu)(`platform kernels on WebGPU (${gpu?.adapter})`, () => {
  it('uniform_below is the CPU comparison hash / 2^32 < x at and beside every threshold, for subnormal, tiny, normal, 1, infinite and NaN x', async () => {
    const xs = [0, -0, -1, 2 ** -149, 2 ** -140, 2 ** -126, 2 ** -33, 2 ** -32, 3 * 2 ** -33, 2 ** -31, 1e-7, 0.1, 0.5, 0.75, 1 - 2 ** -24, 1, 1.5, Infinity, NaN];
    for (let i = 0; i < 2000; i++) xs.push(fromBits32(hash(11, i) % 0x3f800000));
    const rows: Array<[number, number, number]> = [];
    for (const x of xs) {
      const t = Math.ceil(x * 2 ** 32);
      for (const h of [0, 1, t - 1, t, t + 1, 2 ** 32 - 1]) if (h >= 0 && h < 2 ** 32) rows.push([h, bitsOf32(x), 0]);
    }
    // NaN with the sign bit set, as a kernel could make it.
    rows.push([5, 0xffc00000, 0]);
    const got = await runOps(gpu!, SHADER, rows);
    const bad: string[] = [];
    rows.forEach(([h, x], i) => {
      const want = h / 2 ** 32 < fromBits32(x) || Number.isNaN(fromBits32(x)) ? 1 : 0;
      if (got[i] !== want && bad.length < 5) bad.push(`hash ${h}, x ${fromBits32(x)}: gpu ${got[i]}, cpu ${want}`);
    });
    expect(bad).toEqual([]);
  });

  it('poisson_count equals poissonCount32 at each CDF step and at random draws, lambda from 2^-149 to past 88', async () => {
    const lambdas = [0, -0, -2, NaN, Infinity, 2 ** -149, 1e-30, 1e-7, 0.5, 1, 3, 20, 87.3, 87.4, 88, 3e38];
    for (let i = 0; i < 1500; i++) lambdas.push(Math.fround(10 ** (-7 + (9.3 * hash(12, i)) / 2 ** 32)));
    const rows: Array<[number, number, number]> = [];
    for (const [j, l] of lambdas.entries()) {
      const hs = [0, 2 ** 32 - 1];
      for (let d = 0; d < 8; d++) hs.push(hash(13, j, d));
      // The draws at and beside the first few CDF values.
      if (l > 0 && l < 88) {
        let p = expf32(-l);
        let cdf = p;
        for (let n = 1; n <= 6 && cdf < 1; n++) {
          const t = Math.ceil(cdf * 2 ** 32);
          hs.push(t - 1, t);
          p = Math.fround(p * Math.fround(l / n));
          cdf = Math.fround(cdf + p);
        }
      }
      for (const h of hs) if (h >= 0 && h < 2 ** 32) rows.push([h, bitsOf32(l), 1]);
    }
    const got = await runOps(gpu!, SHADER, rows);
    const bad: string[] = [];
    let above = 0;
    rows.forEach(([h, l], i) => {
      const want = poissonCount32(fromBits32(l), h);
      if (want > 1) above++;
      if (got[i] !== want && bad.length < 5) bad.push(`lambda ${fromBits32(l)}, hash ${h}: gpu ${got[i]}, cpu ${want}`);
    });
    expect(bad).toEqual([]);
    expect(above).toBeGreaterThan(2000);
  });

  it('activate through the executor: the same session counts and online total, suspended accounts and every archetype included, and a behaviour table rewritten between calls', async () => {
    const n = 100_003;
    const activity = sharedArray('f32', n);
    const chronotype = sharedArray('u8', n);
    const archetype = sharedArray('u16', n);
    const suspended = sharedArray('u8', n);
    const archetypes = 300;
    const behaviour = sharedArray('f32', archetypes * NPARAMS);
    for (let i = 0; i < n; i++) {
      // Mostly the platform's range, some zeros and some very active accounts.
      const r = hash(14, i) / 2 ** 32;
      activity[i] = r < 0.05 ? 0 : r < 0.1 ? 30 * r : 0.3 * r;
      chronotype[i] = hash(14, i, 1) % 4;
      archetype[i] = hash(14, i, 2) % archetypes;
      suspended[i] = hash(14, i, 3) % 50 === 0 ? 1 : 0;
    }
    for (let k = 0; k < archetypes; k++) behaviour[k * NPARAMS + P.activity] = 0.5 + (hash(15, k) / 2 ** 32) * 2;
    const profiles = normalisedProfiles();
    await onBoth(async (cpu, exec) => {
      for (const [c, [hour, stepHours]] of [[3, 1], [20, 1], [13, 0.25], [9, 6]].entries()) {
        if (c === 2) for (let k = 0; k < archetypes; k++) behaviour[k * NPARAMS + P.activity] *= 3;
        const args = { activity, chronotype, archetype, behaviour, profiles, suspended, hour, stepHours, key: 1e12 + c };
        const want = sharedArray('u8', n);
        const [wantOnline] = await cpu.reduce(K.activate, { ...args, out: want }, n);
        const got = sharedArray('u8', n);
        const [gotOnline] = await exec.reduce(K.activate, { ...args, out: got }, n);
        await exec.sync();
        expect(gotOnline, `hour ${hour}, step ${stepHours} h`).toBe(wantOnline);
        expect(Buffer.from(got.buffer).equals(Buffer.from(want.buffer)), `hour ${hour}, step ${stepHours} h`).toBe(true);
        expect(wantOnline).toBeGreaterThan(1000);
        if (stepHours === 6) expect(Math.max(...want)).toBeGreaterThan(3);
      }
      expect(exec.counts.gpu.get('activate')).toBe(4);
      expect(exec.counts.cpu.get('activate')).toBeUndefined();
    });
  });

  it('exposure through the executor: the same opinions and per-user distances, with exact eps ties, backfire, clamping at +-1 and empty feeds', async () => {
    const users = 40_000;
    const posts = 50_000;
    const F = 10;
    const base = 7_000_000;
    const archetypes = 90;
    const behaviour = sharedArray('f32', archetypes * NPARAMS);
    for (let k = 0; k < archetypes; k++) {
      behaviour[k * NPARAMS + P.eps] = [0.25, 0.5, 2][k % 3];
      behaviour[k * NPARAMS + P.mu] = 0.05 + (hash(21, k) / 2 ** 32) * 0.9;
      behaviour[k * NPARAMS + P.backfire] = k % 2 ? 0 : 0.3;
    }
    const opinion = sharedArray('f32', users);
    const archetype = sharedArray('u16', users);
    for (let u = 0; u < users; u++) {
      const r = hash(22, u) / 2 ** 32;
      opinion[u] = r < 0.1 ? (r < 0.05 ? -1 : 1) : 2 * r - 1;
      archetype[u] = hash(22, u, 1) % archetypes;
    }
    const stance = sharedArray('f32', posts);
    for (let i = 0; i < posts; i++) stance[i] = (hash(23, i) % 17) / 8 - 1;
    // Every other user active, in a shuffled order.
    const act = Array.from({ length: users / 2 }, (_, i) => 2 * i).sort((x, y) => hash(24, x) - hash(24, y));
    const rows = act.length;
    const active = sharedArray('i32', rows);
    active.set(act);
    const feed = sharedArray('i32', rows * F);
    const feedLen = sharedArray('u8', rows);
    const feedFlags = sharedArray('u8', rows * F);
    for (let k = 0; k < rows; k++) {
      feedLen[k] = hash(25, k) % 13 < 3 ? 0 : 1 + (hash(25, k, 1) % F);
      for (let s = 0; s < feedLen[k]; s++) feed[k * F + s] = base + (hash(26, k, s) % posts);
    }
    // Some feeds hold a post at exactly eps from the user: ad < eps must be false there.
    for (let k = 0; k < rows; k += 7) if (feedLen[k] > 0) stance[feed[k * F] - base] = Math.fround(opinion[active[k]] + behaviour[archetype[active[k]] * NPARAMS + P.eps]);
    await onBoth(async (cpu, exec) => {
      for (const backfireDistance of [1.2, 2.5]) {
        const copy = () => {
          const o = sharedArray('f32', users);
          o.set(opinion);
          return o;
        };
        const mine = { opinion: copy(), rowDist: sharedArray('f32', rows) };
        const theirs = { opinion: copy(), rowDist: sharedArray('f32', rows + 5) };
        const args = { active, feed, feedFlags, feedLen, feedSize: F, base, stance, archetype, behaviour, backfireDistance };
        await cpu.run(K.exposure, { ...args, ...mine }, rows, { chunkRows: 4096 });
        await exec.run(K.exposure, { ...args, ...theirs }, rows, { chunkRows: 4096 });
        await exec.sync();
        expect(Buffer.from(theirs.opinion.buffer).equals(Buffer.from(mine.opinion.buffer)), `backfire ${backfireDistance}: opinions`).toBe(true);
        expect(Buffer.from(theirs.rowDist.buffer, 0, rows * 4).equals(Buffer.from(mine.rowDist.buffer)), `backfire ${backfireDistance}: distances`).toBe(true);
        let moved = 0;
        for (let u = 0; u < users; u++) if (mine.opinion[u] !== opinion[u]) moved++;
        expect(moved).toBeGreaterThan(users / 4);
      }
      expect(exec.counts.gpu.get('exposure')).toBe(2);
    });
  });

  it('feedMix through the executor: the same distinct clusters per row (bytes past the rows kept) and totals', async () => {
    const rows = 30_001;
    const F = 12;
    const posts = 20_000;
    const base = 123;
    const cluster = sharedArray('u8', posts);
    for (let i = 0; i < posts; i++) cluster[i] = hash(31, i) % 9;
    const feed = sharedArray('i32', rows * F);
    const feedFlags = sharedArray('u8', rows * F);
    const feedLen = sharedArray('u8', rows);
    for (let k = 0; k < rows; k++) {
      feedLen[k] = hash(32, k) % 5 === 0 ? 0 : 1 + (hash(32, k, 1) % F);
      for (let s = 0; s < F; s++) {
        feed[k * F + s] = base + (hash(33, k, s) % posts);
        feedFlags[k * F + s] = hash(33, k, s + F) & 1;
      }
    }
    const active = sharedArray('i32', rows);
    const args = { active, feed, feedFlags, feedLen, feedSize: F, base, cluster };
    await onBoth(async (cpu, exec) => {
      const fill = () => {
        const a = sharedArray('u8', rows + 3);
        a.fill(0xee);
        return a;
      };
      const mine = fill();
      const theirs = fill();
      const want = await cpu.reduce(K.feedMix, { ...args, rowDistinct: mine }, rows, { chunkRows: 4096 });
      const got = await exec.reduce(K.feedMix, { ...args, rowDistinct: theirs }, rows, { chunkRows: 4096 });
      await exec.sync();
      expect(got).toEqual(want);
      expect(want[0]).toBeGreaterThan(rows / 2);
      expect(Buffer.from(theirs.buffer).equals(Buffer.from(mine.buffer))).toBe(true);
      expect(mine[rows]).toBe(0xee);
      expect(exec.counts.gpu.get('feedMix')).toBe(1);
    });
  });

  it('postContent through the executor: the same topics, stances and clusters for rows with a post event; other rows untouched', async () => {
    const users = 20_000;
    const rows = 9_999;
    const D = 16;
    const topics = 40;
    const maxEvents = 13;
    const interest = sharedArray('f32', users * D);
    const opinion = sharedArray('f32', users);
    const prototypes = sharedArray('f32', topics * D);
    for (let i = 0; i < users * D; i++) interest[i] = (hash(41, i) / 2 ** 32 - 0.5) * 0.5;
    for (let u = 0; u < users; u++) opinion[u] = u % 50 === 0 ? (u % 100 === 0 ? 1 : -1) : 2 * (hash(42, u) / 2 ** 32) - 1;
    for (let i = 0; i < topics * D; i++) prototypes[i] = hash(43, i) / 2 ** 32 - 0.5;
    const active = sharedArray('i32', rows);
    const evAction = sharedArray('u8', rows * maxEvents);
    const evCount = sharedArray('u16', rows);
    let posting = 0;
    for (let k = 0; k < rows; k++) {
      active[k] = (k * 7 + 3) % users;
      evCount[k] = hash(44, k) % (maxEvents + 1);
      for (let e = 0; e < evCount[k]; e++) evAction[k * maxEvents + e] = hash(44, k, e + 1) % 6 === 0 ? A.post : 1 + (hash(44, k, e + 100) % 9);
      if (evAction.subarray(k * maxEvents, k * maxEvents + evCount[k]).includes(A.post)) posting++;
    }
    const outputs = () => {
      const o = { topic: sharedArray('f32', rows * D), stance: sharedArray('f32', rows), cluster: sharedArray('u8', rows + 2) };
      o.topic.fill(7);
      o.stance.fill(9);
      o.cluster.fill(0xee);
      return o;
    };
    const args = { active, evAction, evCount, interest, opinion, prototypes, dim: D, topics, maxEvents, key: 2 ** 40 + 17 };
    const mine = outputs();
    const theirs = outputs();
    await onBoth(async (cpu, exec) => {
      await cpu.run(K.postContent, { ...args, ...mine }, rows, { chunkRows: 4096 });
      await exec.run(K.postContent, { ...args, ...theirs }, rows, { chunkRows: 4096 });
      await exec.sync();
      for (const name of ['topic', 'stance', 'cluster'] as const) expect(Buffer.from(theirs[name].buffer).equals(Buffer.from(mine[name].buffer)), name).toBe(true);
      expect(posting).toBeGreaterThan(rows / 4);
      expect(new Set(mine.cluster).size).toBeGreaterThan(20);
      expect(mine.cluster[rows]).toBe(0xee);
      expect(exec.counts.gpu.get('postContent')).toBe(1);
    });
  });

  it("a pack follows its members: exposure's packed inputs rewritten by a GPU kernel, by the host (hostWrote) and by a CPU kernel, and moved by a member before them changing length", async () => {
    const users = 6000;
    const rows = 3000;
    const F = 6;
    const posts = 4000;
    const archetypes = 12;
    const behaviour = sharedArray('f32', archetypes * NPARAMS);
    for (let k = 0; k < archetypes; k++) {
      behaviour[k * NPARAMS + P.eps] = 0.2 + 0.1 * k;
      behaviour[k * NPARAMS + P.mu] = 0.3;
      behaviour[k * NPARAMS + P.backfire] = 0.1;
    }
    const stance = sharedArray('f32', posts);
    for (let i = 0; i < posts; i++) stance[i] = 2 * (hash(51, i) / 2 ** 32) - 1;
    const table = sharedArray('u16', 2);
    table.set([3, 9]);
    const group = sharedArray('u8', users);
    for (let u = 0; u < users; u++) group[u] = u & 1;
    // Each backend gets its own copies of the inputs, changed the same way.
    const inputs = () => {
      const active = sharedArray('i32', rows);
      for (let k = 0; k < rows; k++) active[k] = 2 * k;
      const feed = sharedArray('i32', rows * F);
      const feed2 = sharedArray('i32', rows * F);
      for (let j = 0; j < rows * F; j++) [feed[j], feed2[j]] = [hash(52, j) % posts, hash(53, j) % posts];
      const feedLen = sharedArray('u8', rows);
      for (let k = 0; k < rows; k++) feedLen[k] = hash(54, k) % (F + 1);
      const archetype = sharedArray('u16', users);
      for (let u = 0; u < users; u++) archetype[u] = hash(55, u) % archetypes;
      const opinion = sharedArray('f32', users);
      for (let u = 0; u < users; u++) opinion[u] = 2 * (hash(56, u) / 2 ** 32) - 1;
      return { active, feed, feed2, feedLen, archetype, opinion, rowDist: sharedArray('f32', rows) };
    };
    const sequence = async (exec: Executor) => {
      const x = inputs();
      const out: Buffer[] = [];
      const exposure = async () => {
        const args = { active: x.active, feed: x.feed, feedFlags: x.feedLen, feedLen: x.feedLen, feedSize: F, base: 0, stance, archetype: x.archetype, behaviour, backfireDistance: 1.5, opinion: x.opinion, rowDist: x.rowDist };
        await exec.run(K.exposure, args, rows);
        await exec.sync?.();
        out.push(Buffer.from(x.opinion.slice().buffer), Buffer.from(x.rowDist.slice().buffer));
      };
      await exposure();
      // A member written by a kernel that runs on the device (copy has a WGSL version).
      await exec.run(core.copy, { src: x.feed2, out: x.feed }, rows * F);
      await exposure();
      // A member written in plain JavaScript, announced.
      for (let k = 0; k < rows; k++) x.feedLen[k] = (x.feedLen[k] + 3) % (F + 1);
      exec.hostWrote?.(x.feedLen);
      await exposure();
      // A member written by a kernel that runs on the CPU (broadcast has no WGSL version).
      await exec.run(core.broadcast, { table, group, out: x.archetype }, users);
      await exposure();
      // A longer active list (a new array, as each step's is), then the shorter one again (the
      // pack's buffer is kept): the members after it move.
      const shorter = x.active;
      x.active = sharedArray('i32', rows + 101);
      x.active.set(shorter);
      await exposure();
      x.active = shorter;
      await exposure();
      return out;
    };
    await onBoth(async (cpu, exec) => {
      const want = await sequence(cpu);
      const got = await sequence(exec);
      got.forEach((b, i) => expect(b.equals(want[i]), `output ${i >> 1} (${i & 1 ? 'rowDist' : 'opinion'})`).toBe(true));
      expect(exec.counts.gpu.get('exposure')).toBe(6);
      expect(exec.counts.gpu.get('copy')).toBe(1);
      expect(exec.counts.cpu.get('broadcast')).toBe(1);
    });
  });
});
