/**
 * The social platform's WGSL kernels (platform/kernels.wgsl.ts) against their CPU declarations
 * (platform/kernels.ts), byte for byte, through the webgpu executor. Skips with one line when no
 * adapter exists.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type Executor } from '../../../sim-core/exec.ts';
import { createExecutor } from '../../../sim-core/cpuExecutor.ts';
import { bitsOf32, expf32, fromBits32 } from '../../../sim-core/f32math.ts';
import { hash } from '../../../sim-core/rng.ts';
import { sharedArray } from '../../../sim-core/table.ts';
import { RNG_WGSL } from '../../../sim-core/gpu/rng.wgsl.ts';
import { SOFTFLOAT_WGSL } from '../../../sim-core/gpu/softfloat.wgsl.ts';
import { SOFTMATH_WGSL } from '../../../sim-core/gpu/softmath.wgsl.ts';
import { GpuExecutor } from '../../../sim-core/gpu/executor.ts';
import { kernels as core } from '../../../sim-core/kernels.ts';
import { POISSON_COUNT_WGSL } from '../../../platform/kernels.wgsl.ts';
import { SOCIAL_PROOF, attentionTable, kernels as K, poissonCount32 } from '../../../platform/kernels.ts';
import { A, maxEventsFor } from '../../../platform/events.ts';
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

  it('impressions through the executor: the counts of the live rows, kept on the device while the host appends rows after them, and read back as far as asked', async () => {
    const rows = 20_003;
    const F = 10;
    const base = 5_000;
    const [first, count] = [300, 4_000];
    const cap = 6_000;
    const feed = sharedArray('i32', rows * F);
    const feedLen = sharedArray('u8', rows);
    for (let k = 0; k < rows; k++) {
      feedLen[k] = hash(40, k) % F;
      for (let i = 0; i < F; i++) {
        // A few popular posts, rows below first and past count (not counted), and live rows.
        const x = hash(41, k, i);
        feed[k * F + i] = x % 5 === 0 ? base + first + (x % 7) : base - 20 + (hash(42, k, i) % (count + 40));
      }
    }
    const args = { active: sharedArray('i32', rows), feed, feedFlags: sharedArray('u8', rows * F), feedLen, feedSize: F, base, first, count };
    await onBoth(async (cpu, exec) => {
      const mine = sharedArray('i32', cap).fill(3);
      const theirs = sharedArray('i32', cap).fill(3);
      // Twice: the second call adds to the counts the first left on the device.
      for (let t = 0; t < 2; t++) {
        await cpu.run(K.impressions, { ...args, impressions: mine }, rows, { chunkRows: 2048 });
        await exec.run(K.impressions, { ...args, impressions: theirs }, rows, { chunkRows: 2048 });
      }
      expect(exec.counts.gpu.get('impressions')).toBe(2);
      // The host appends rows past count (as apply does) while the counts are on the device; a
      // write inside the rows the kernel wrote is refused.
      for (const a of [mine, theirs]) a.fill(0, count, count + 500);
      exec.hostWrote(theirs, count, count + 500);
      expect(() => exec.hostWrote(theirs, count - 1, count)).toThrow(/only valid copy is on the device/);
      // Rows below first were never the device's: they are valid on the host already.
      expect(Array.from(theirs.subarray(0, first))).toEqual(Array.from(mine.subarray(0, first)));
      // A prefix read back (maintain's retired rows), then everything.
      await exec.sync([{ array: theirs, length: 1_000 }]);
      expect(Array.from(theirs.subarray(0, 1_000))).toEqual(Array.from(mine.subarray(0, 1_000)));
      expect(theirs[2_000]).toBe(3);
      // A capture now takes the device's counts and the host's new rows, each from where it is valid.
      const [snap] = await exec.capture([theirs]);
      expect(Buffer.from(snap.buffer, snap.byteOffset, snap.byteLength).equals(Buffer.from(mine.buffer))).toBe(true);
      // The appended rows go up with the next call, and the device's counts are kept beside them.
      // That call counts from row 0: the rows below 300 the device holds must not have been
      // counted by the calls before.
      for (const a of [mine, theirs]) a[count + 7] = 5;
      exec.hostWrote(theirs, count + 7, count + 8);
      const wider = { ...args, first: 0, count: count + 500 };
      await cpu.run(K.impressions, { ...wider, impressions: mine }, rows, { chunkRows: 2048 });
      await exec.run(K.impressions, { ...wider, impressions: theirs }, rows, { chunkRows: 2048 });
      await exec.sync();
      expect(Buffer.from(theirs.buffer).equals(Buffer.from(mine.buffer))).toBe(true);
      expect(mine[first]).toBeGreaterThan(rows / 20);
      expect(mine[count + 7]).toBeGreaterThan(5);
      expect(mine[0]).toBeGreaterThan(3);
      expect(mine[count + 500]).toBe(3);
      // With the host copy whole again, a call over fewer rows leaves only those to the device.
      await exec.run(K.impressions, { ...args, first: 0, count: 1_000, impressions: theirs }, rows, { chunkRows: 2048 });
      expect(() => exec.hostWrote(theirs, 1_000, 1_001)).not.toThrow();
      expect(() => exec.hostWrote(theirs, 999, 1_000)).toThrow(/only valid copy is on the device/);
    });
  });

  it('countVotes through the executor: the like and dislike counts of the live rows, other actions and targets outside them skipped, u16 counts and u8 actions read by word', async () => {
    const rows = 30_001;
    const E = 7;
    const base = 9_000;
    const [first, count] = [200, 3_000];
    const evCount = sharedArray('u16', rows);
    const evAction = sharedArray('u8', rows * E);
    const evTarget = sharedArray('i32', rows * E);
    for (let k = 0; k < rows; k++) {
      evCount[k] = hash(43, k) % (E + 1);
      for (let e = 0; e < E; e++) {
        // Mostly likes and dislikes (a few popular posts), some other actions; slots past the count hold likes that must not count.
        const x = hash(44, k, e);
        evAction[k * E + e] = x % 4 === 0 ? A.post : x % 3 === 0 ? A.dislike : A.like;
        evTarget[k * E + e] = x % 5 === 0 ? base + first + (x % 3) : base - 10 + (hash(45, k, e) % (count + 30));
      }
    }
    // Voters' opinions below 0 (a third of the rows), -0 and 0 (both the right side).
    const voterOpinion = sharedArray('f32', rows);
    for (let k = 0; k < rows; k++) voterOpinion[k] = k % 3 === 0 ? -0.5 : k % 3 === 1 ? (k % 2 ? -0 : 0) : 0.25;
    const args = { evCount, evAction, evTarget, voterOpinion, maxEvents: E, base, first, count };
    const counts = () => ({ likes: sharedArray('i32', 4_000).fill(2), dislikes: sharedArray('i32', 4_000).fill(1), likesLeft: sharedArray('i32', 4_000).fill(1), dislikesLeft: sharedArray('i32', 4_000) });
    await onBoth(async (cpu, exec) => {
      const mine = counts();
      const theirs = counts();
      for (let t = 0; t < 2; t++) {
        await cpu.run(K.countVotes, { ...args, ...mine }, rows, { chunkRows: 4096 });
        await exec.run(K.countVotes, { ...args, ...theirs }, rows, { chunkRows: 4096 });
      }
      expect(exec.counts.gpu.get('countVotes')).toBe(2);
      // Rows past count are the host's: it appends there while the counts stay on the device.
      expect(() => exec.hostWrote(theirs.likes, count, count + 10)).not.toThrow();
      await exec.sync();
      expect(Buffer.from(theirs.likes.buffer).equals(Buffer.from(mine.likes.buffer))).toBe(true);
      expect(Buffer.from(theirs.dislikes.buffer).equals(Buffer.from(mine.dislikes.buffer))).toBe(true);
      expect(Buffer.from(theirs.likesLeft.buffer).equals(Buffer.from(mine.likesLeft.buffer))).toBe(true);
      expect(Buffer.from(theirs.dislikesLeft.buffer).equals(Buffer.from(mine.dislikesLeft.buffer))).toBe(true);
      let likes = 0;
      let likesLeft = 0;
      let dislikesLeft = 0;
      for (let k = 0; k < rows; k++) {
        const left = voterOpinion[k] < 0;
        for (let e = 0; e < evCount[k]; e++) {
          const r = evTarget[k * E + e] - base;
          if (r < first || r >= count) continue;
          if (evAction[k * E + e] === A.like) {
            likes++;
            if (left) likesLeft++;
          } else if (evAction[k * E + e] === A.dislike && left) dislikesLeft++;
        }
      }
      expect(mine.likes.reduce((n, x) => n + x, 0)).toBe(2 * 4_000 + 2 * likes);
      // The left side's: votes by users of opinion below 0 (not -0), counted twice over the initial 1 and 0.
      expect(likesLeft).toBeGreaterThan(0);
      expect(mine.likesLeft.reduce((n, x) => n + x, 0)).toBe(4_000 + 2 * likesLeft);
      expect(mine.dislikesLeft.reduce((n, x) => n + x, 0)).toBe(2 * dislikesLeft);
      expect(mine.likes[first + 1]).toBeGreaterThan(rows / 20);
      expect(mine.likes[first - 1]).toBe(2);
      expect(mine.dislikes[count]).toBe(1);
    });
  });

  it('packEvents through the executor: each action at its place in the packed arrays, users without actions skipped, a u8 action buffer read by word', async () => {
    const users = 50_003;
    const E = 12;
    const evAction = sharedArray('u8', users * E);
    const evTarget = sharedArray('i32', users * E);
    const evStart = sharedArray('i32', users + 1);
    for (let k = 0; k < users; k++) {
      const count = hash(71, k) % 4 === 0 ? 0 : 1 + (hash(71, k, 1) % E);
      evStart[k + 1] = evStart[k] + count;
      for (let e = 0; e < E; e++) {
        evAction[k * E + e] = hash(72, k, e) % 13;
        evTarget[k * E + e] = hash(73, k, e) % 1_000_000;
      }
    }
    const total = evStart[users];
    const out = () => ({ packedAction: sharedArray('u32', total + 5).fill(77), packedTarget: sharedArray('i32', total + 5).fill(-77) });
    const [mine, theirs] = [out(), out()];
    const cpu = createExecutor(2);
    const inner = createExecutor(1);
    try {
      const exec = new GpuExecutor(gpu!, inner);
      await cpu.run(K.packEvents, { evAction, evTarget, evStart, ...mine, users, maxEvents: E }, total);
      await exec.run(K.packEvents, { evAction, evTarget, evStart, ...theirs, users, maxEvents: E }, total);
      await exec.sync();
      expect(exec.counts.gpu.get('packEvents')).toBe(1);
      expect(Buffer.from(theirs.packedAction.buffer).equals(Buffer.from(mine.packedAction.buffer))).toBe(true);
      expect(Buffer.from(theirs.packedTarget.buffer).equals(Buffer.from(mine.packedTarget.buffer))).toBe(true);
      // Spot checks against the definition: user k's action e is at evStart[k] + e; the rows past the total untouched.
      for (let k = 1; k < users; k += 997) for (let e = 0; e < evStart[k + 1] - evStart[k]; e++) expect(mine.packedTarget[evStart[k] + e]).toBe(evTarget[k * E + e]);
      expect(mine.packedAction[total]).toBe(77);
    } finally {
      await cpu.close();
      await inner.close();
    }
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

  it('act through the executor: the same events, counts and total, with flags, votes, novelty, many sessions, saturated social proof, posts, follows and targets split into ranges, on this adapter and at 8 storage buffers per shader', async () => {
    const users = 10_000;
    const posts = 6_000;
    const D = 8;
    const F = 10;
    const base = 900_000;
    const archetypes = 24;
    const step = 300;
    const maxEvents = maxEventsFor(F);
    const behaviour = sharedArray('f32', archetypes * NPARAMS);
    for (let k = 0; k < archetypes; k++) {
      const r = (i: number) => hash(61, k, i) / 2 ** 32;
      const row: Partial<Record<keyof typeof P, number>> = { like: 0.6 * r(0), dislike: 0.4 * r(1), repost: 0.3 * r(2), quote: 0.2 * r(3), comment: 0.2 * r(4), report: 0.3 * r(5), mute: 0.2 * r(6), unfollow: 0.4 * r(7), post: 0.4 * r(8), follow: k % 5 === 0 ? 1.5 : r(9) };
      for (const [name, v] of Object.entries(row)) behaviour[k * NPARAMS + P[name as keyof typeof P]] = v;
    }
    // A follow graph: 0 to 300 followees each (some users none).
    const deg = Array.from({ length: users }, (_, u) => (hash(62, u) % 7 === 0 ? 0 : hash(62, u, 1) % 301));
    const offsets = sharedArray('i32', users + 1);
    for (let u = 0; u < users; u++) offsets[u + 1] = offsets[u] + deg[u];
    const targets = sharedArray('i32', offsets[users]);
    for (let j = 0; j < targets.length; j++) targets[j] = hash(63, j) % users;
    const followers = sharedArray('i32', users);
    for (let u = 0; u < users; u++) followers[u] = hash(64, u) % 40;
    const interest = sharedArray('f32', users * D);
    for (let i = 0; i < users * D; i++) interest[i] = hash(65, i) / 2 ** 32 - 0.5;
    const opinion = sharedArray('f32', users);
    const archetype = sharedArray('u16', users);
    const activity = sharedArray('f32', users);
    const sessions = sharedArray('u8', users);
    for (let u = 0; u < users; u++) {
      opinion[u] = u % 40 === 0 ? -1 : 2 * (hash(66, u) / 2 ** 32) - 1;
      archetype[u] = hash(66, u, 1) % archetypes;
      activity[u] = u % 97 === 0 ? 0 : 0.01 + (hash(66, u, 2) / 2 ** 32) * 2;
      const h = hash(66, u, 3) % 100;
      sessions[u] = h < 70 ? 1 : h < 95 ? 2 + (h % 4) : h < 99 ? 30 : 255;
    }
    const post = {
      author: sharedArray('i32', posts),
      stance: sharedArray('f32', posts),
      likes: sharedArray('i32', posts),
      dislikes: sharedArray('i32', posts),
      reposts: sharedArray('i32', posts),
      flags: sharedArray('u8', posts),
      novelty: sharedArray('f32', posts),
      treatVote: sharedArray('i8', posts),
      topic: sharedArray('f32', posts * D),
      postStep: sharedArray('i32', posts),
    };
    for (let i = 0; i < posts; i++) {
      const r = (j: number) => hash(67, i, j);
      post.author[i] = r(0) % users;
      post.stance[i] = 2 * (r(1) / 2 ** 32) - 1;
      post.likes[i] = r(2) % 9 === 0 ? 500 + (r(3) % 2000) : r(3) % 12;
      post.dislikes[i] = r(4) % 5 === 0 ? r(5) % 30 : 0;
      post.reposts[i] = r(6) % 4;
      post.flags[i] = r(7) % 6 === 0 ? [1, 2, 4, 6, 16, 18][r(8) % 6] : 0;
      post.novelty[i] = r(9) % 10 === 0 ? (r(10) / 2 ** 32) * 10 - 5 : 0;
      post.treatVote[i] = r(11) % 8 === 0 ? (r(12) % 2 ? 1 : -1) : 0;
      post.postStep[i] = step - 192 + Math.floor((i * 192) / posts);
    }
    for (let i = 0; i < posts * D; i++) post.topic[i] = hash(68, i) / 2 ** 32 - 0.5;
    const rows = 4_999;
    const active = sharedArray('i32', rows);
    for (let k = 0; k < rows; k++) active[k] = (k * 2 + 1) % users;
    const feed = sharedArray('i32', rows * F);
    const feedFlags = sharedArray('u8', rows * F);
    const feedLen = sharedArray('u8', rows);
    for (let k = 0; k < rows; k++) {
      feedLen[k] = hash(69, k) % 11 === 0 ? 0 : 1 + (hash(69, k, 1) % F);
      for (let s = 0; s < F; s++) {
        feed[k * F + s] = base + (hash(70, k, s) % posts);
        feedFlags[k * F + s] = hash(70, k, s + F) % 3 === 0 ? 1 : 0;
      }
    }
    const attention = attentionTable(193, 0.4, 0.4, 0.25);
    const args = {
      active, feed, feedFlags, feedLen, feedSize: F, base, ...post, count: posts, dim: D, opinion, interest, archetype, behaviour, followers, offsets, targets, sessions, activity,
      attention, socialProof: SOCIAL_PROOF, step, maxEvents, activityRef: 0.3, postExponent: 0.7, labelLike: 0.8, labelReshare: 0.75, labelReport: 2, noteLike: 0.559, noteReshare: 0.539, herding: 0.32, correction: 0.5, voteScale: 3, noveltyWeight: Math.log(1.14), countsShown: 1,
    };
    const outputs = () => {
      const o = { evAction: sharedArray('u8', rows * maxEvents + 8), evTarget: sharedArray('i32', rows * maxEvents), evCount: sharedArray('u16', rows + 1) };
      o.evAction.fill(0xee);
      o.evTarget.fill(-7);
      o.evCount.fill(0xabcd);
      return o;
    };
    // The pack and the event targets fit one binding each, and the followee targets take three or more.
    const packed = Object.entries(args).filter(([name, x]) => ArrayBuffer.isView(x) && name !== 'targets');
    const packBytes = packed.reduce((n, [, x]) => n + (x as Int32Array).byteLength + 4, 0);
    const maxBindingBytes = Math.ceil(Math.max(packBytes, outputs().evTarget.byteLength) / 256) * 256;
    expect(targets.byteLength).toBeGreaterThan(2 * maxBindingBytes);
    const cpu = createExecutor(2);
    const inner = createExecutor(1);
    try {
      // On this adapter, and as on one with WebGPU's default of 8 storage buffers per shader (3 ranges).
      for (const storage of [gpu!.limits.maxStorageBuffersPerShaderStage, 8]) {
        const exec = new GpuExecutor({ ...gpu!, limits: { ...gpu!.limits, maxStorageBuffersPerShaderStage: storage } }, inner, { maxBindingBytes });
        // The second call with the counts hidden (platform.counts).
        for (const [key, countsShown] of [[12345, 1], [2 ** 45 + 3, 0]]) {
          const mine = outputs();
          const theirs = outputs();
          const want = await cpu.reduce(K.act, { ...args, key, countsShown, ...mine }, rows, { chunkRows: 1024 });
          const got = await exec.reduce(K.act, { ...args, key, countsShown, ...theirs }, rows, { chunkRows: 1024 });
          await exec.sync();
          expect(got).toEqual(want);
          for (const name of ['evAction', 'evTarget', 'evCount'] as const) expect(Buffer.from(theirs[name].buffer).equals(Buffer.from(mine[name].buffer)), `key ${key}: ${name}`).toBe(true);
          // Every action the kernel makes happened, and the slots past the rows were kept.
          const made = new Set<number>();
          for (let k = 0; k < rows; k++) for (let e = 0; e < mine.evCount[k]; e++) made.add(mine.evAction[k * maxEvents + e]);
          expect([...made].sort((x, y) => x - y)).toEqual([A.like, A.dislike, A.repost, A.quote, A.comment, A.report, A.mute, A.unfollow, A.follow, A.post]);
          expect(mine.evCount[rows]).toBe(0xabcd);
          // The behaviour table rewritten by the host between calls (a hostTable).
          for (let i = 0; i < behaviour.length; i++) behaviour[i] = Math.fround(behaviour[i] * 0.9);
        }
        expect(exec.counts.gpu.get('act'), `${storage} storage buffers`).toBe(2);
      }
      // A binding limit that the pack without the topics fits, and the topics, but not the whole
      // pack: the topics are bound on their own and act stays on the device (at 10M agents and a
      // full window the pack is ~2.9 GB, past NVIDIA's 2 GiB binding).
      // (The first 500 rows, so that their event arrays fit the limit too.)
      const few = 500;
      const fewOutputs = () => ({ evAction: sharedArray('u8', few * maxEvents), evTarget: sharedArray('i32', few * maxEvents), evCount: sharedArray('u16', few) });
      const rest = packBytes - post.topic.byteLength;
      const tight = Math.ceil(Math.max(rest, post.topic.byteLength, fewOutputs().evTarget.byteLength) / 256) * 256;
      expect(tight).toBeLessThan(packBytes);
      const exec = new GpuExecutor(gpu!, inner, { maxBindingBytes: tight });
      const mine = fewOutputs();
      const theirs = fewOutputs();
      const want = await cpu.reduce(K.act, { ...args, key: 77, ...mine }, few, { chunkRows: 128 });
      const got = await exec.reduce(K.act, { ...args, key: 77, ...theirs }, few, { chunkRows: 128 });
      await exec.sync();
      expect(got).toEqual(want);
      for (const name of ['evAction', 'evTarget', 'evCount'] as const) expect(Buffer.from(theirs[name].buffer).equals(Buffer.from(mine[name].buffer)), name).toBe(true);
      expect(exec.counts.gpu.get('act')).toBe(1);
      // The topics of a table with room to grow, past the limit, while the rows in use fit it: only
      // those are bound, and act stays on the device (at 10M agents the table's 2^25 rows of topics
      // are 2 GiB, past NVIDIA's 2 GiB - 4, and its ~29M rows in use are not).
      const roomy = sharedArray('f32', tight / 4 + posts * D);
      roomy.set(post.topic);
      expect(roomy.byteLength).toBeGreaterThan(tight);
      const [again, mine2] = [fewOutputs(), fewOutputs()];
      const want2 = await cpu.reduce(K.act, { ...args, topic: roomy, key: 78, ...mine2 }, few, { chunkRows: 128 });
      const got2 = await exec.reduce(K.act, { ...args, topic: roomy, key: 78, ...again }, few, { chunkRows: 128 });
      await exec.sync();
      expect(got2).toEqual(want2);
      for (const name of ['evAction', 'evTarget', 'evCount'] as const) expect(Buffer.from(again[name].buffer).equals(Buffer.from(mine2[name].buffer)), name).toBe(true);
      expect(exec.counts.gpu.get('act')).toBe(2);
    } finally {
      await cpu.close();
      await inner.close();
    }
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
