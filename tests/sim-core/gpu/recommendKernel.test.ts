/**
 * The recommend phase's WGSL kernels (recsys/gpuKernels.ts) against their CPU declarations
 * (recsys/kernels.ts), byte for byte, through the webgpu executor; the feed kernel for every ranker.
 * Skips with one line when no adapter exists.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../../sim-core/cpuExecutor.ts';
import { hash } from '../../../sim-core/rng.ts';
import { sharedArray } from '../../../sim-core/table.ts';
import { createPairSet, pairSetAdd } from '../../../sim-core/pairSet.ts';
import { GpuExecutor } from '../../../sim-core/gpu/executor.ts';
import { kernels as K } from '../../../recsys/kernels.ts';
import { RANKER } from '../../recsys/rankerCodes.ts';
import { FLAG } from '../../../platform/posts.ts';
import { gpuOrSkip } from '../../gpuHelpers.ts';

const gpu = await gpuOrSkip('the feed kernel in WGSL against the CPU');
afterAll(() => gpu?.close());

/**
 * A synthetic step: users with followee rows, posts in records chained by author (some retired
 * below `base`, some before minStep, some removed), candidate lists, mutes and impression rings.
 */
function world(removedShare: number) {
  const users = 6_000;
  const posts = 30_000;
  const D = 16;
  const stride = 4 + D / 4;
  const base = 50_000;
  const topics = 12;
  const probe = 3;
  const perCluster = 16;
  const seenSize = 16;
  const deg = Array.from({ length: users }, (_, u) => (hash(81, u) % 9 === 0 ? 0 : hash(81, u, 1) % 90));
  const offsets = sharedArray('i32', users + 1);
  for (let u = 0; u < users; u++) offsets[u + 1] = offsets[u] + deg[u];
  const targets = sharedArray('i32', offsets[users]);
  for (let j = 0; j < targets.length; j++) targets[j] = hash(82, j) % users;
  const rec = sharedArray('i32', posts * stride);
  const recF = new Float32Array(rec.buffer);
  const recQ = new Int8Array(rec.buffer);
  // The base scores as the webgpu backend gets them, in a column of their own (records.ts).
  const score = sharedArray('f32', posts);
  const latest = sharedArray('i32', users).fill(-1);
  const flags = sharedArray('u8', posts);
  const rootAuthor = sharedArray('i32', posts);
  // Authors with a post before the window keep a retired id as their previous post.
  for (let v = 0; v < users; v++) if (hash(83, v) % 5 === 0) latest[v] = base - 1 - (hash(83, v, 1) % 100);
  for (let r = 0; r < posts; r++) {
    const at = r * stride;
    const au = hash(84, r) % users;
    // A few equal base scores, so ties by id are exercised.
    recF[at] = hash(84, r, 1) % 7 === 0 ? 0.5 : (hash(84, r, 2) / 2 ** 32) * 3 - 0.2;
    score[r] = recF[at];
    rec[at + 1] = Math.floor((r * 48) / posts);
    rec[at + 2] = au;
    rec[at + 3] = latest[au];
    latest[au] = base + r;
    for (let d = 0; d < D; d++) recQ[(at + 4) * 4 + d] = (hash(85, r, d) % 255) - 127;
    flags[r] = hash(86, r) / 2 ** 32 < removedShare ? FLAG.removed : 0;
    rootAuthor[r] = hash(86, r, 1) % users;
  }
  const minStep = 6;
  const minRow = Math.ceil((minStep * posts) / 48);
  const recent = sharedArray('u8', (users + 7) >> 3);
  for (let v = 0; v < users; v++) if (latest[v] >= base + minRow) recent[v >> 3] |= 1 << (v & 7);
  const interestQ = sharedArray('i8', users * D);
  for (let i = 0; i < interestQ.length; i++) interestQ[i] = (hash(87, i) % 255) - 127;
  const userClusters = sharedArray('u8', users * probe);
  for (let i = 0; i < userClusters.length; i++) userClusters[i] = hash(88, i) % topics;
  const clusterPosts = sharedArray('i32', topics * perCluster).fill(-1);
  for (let t = 0; t < topics; t++) for (let i = 0; i < perCluster - (t % 4); i++) clusterPosts[t * perCluster + i] = base + (hash(89, t, i) % posts) - (i === 3 ? posts : 0);
  const trending = sharedArray('i32', 20).fill(-1);
  for (let i = 0; i < 17; i++) trending[i] = base + (hash(90, i) % posts);
  const mutes = createPairSet();
  const muters = sharedArray('u8', (users + 7) >> 3);
  for (let u = 0; u < users; u += 3) {
    for (let m = 0; m < 4; m++) pairSetAdd(mutes, u, hash(91, u, m) % users);
    muters[u >> 3] |= 1 << (u & 7);
  }
  const rows = 3_001;
  const active = sharedArray('i32', rows);
  for (let k = 0; k < rows; k++) active[k] = (k * 2 + 1) % users;
  return {
    users, rows, seenSize,
    args: {
      active, offsets, targets, latest, recent, rootAuthor, flags, rec, recF, recQ, score, followers: sharedArray('i32', users), interestQ, userClusters, clusterPosts, trending,
      muteA: mutes.keysA, muteB: mutes.keysB, muters, base, count: posts, stride, dim: D, probe, perCluster, seenSize, minStep, minRow, perAuthor: 2, maxScan: 32,
      removed: flags.reduce((n, f) => n + (f === 0 ? 0 : 1), 0),
      // No prosocial terms (platform.outPartisan and dominant.factor 1): their arrays are not read.
      stance: sharedArray('f32', 0), opinion: sharedArray('f32', 0), outBoost: 1, dominant: sharedArray('u8', 0), demote: 1,
    },
  };
}

describe.skipIf(!gpu)(`the recommend phase's kernels on WebGPU (${gpu?.adapter})`, () => {
  it('recentAuthors: the same bitset of authors with a post since firstId, for a user count that is not a multiple of 32', async () => {
    const n = 100_003;
    const latest = sharedArray('i32', n);
    for (let v = 0; v < n; v++) latest[v] = hash(95, v) % 4 === 0 ? -1 : hash(95, v, 1) % 50_000;
    // Some exactly at firstId: in the window.
    for (let v = 0; v < n; v += 1000) latest[v] = 31_000;
    const bits = () => sharedArray('u8', (n + 7) >> 3).fill(0xa5);
    const [mine, theirs] = [bits(), bits()];
    const cpu = createExecutor(2);
    const inner = createExecutor(1);
    try {
      const exec = new GpuExecutor(gpu!, inner);
      await cpu.run(K.recentAuthors, { latest, recent: mine, firstId: 31_000 }, n);
      await exec.run(K.recentAuthors, { latest, recent: theirs, firstId: 31_000 }, n);
      await exec.sync();
      expect(Buffer.from(theirs.buffer).equals(Buffer.from(mine.buffer))).toBe(true);
      let set = 0;
      for (let v = 0; v < n; v++) set += (mine[v >> 3] >> (v & 7)) & 1;
      expect(set).toBeGreaterThan(n / 5);
      expect(set).toBeLessThan(n / 2);
      expect(exec.counts.gpu.get('recentAuthors')).toBe(1);
    } finally {
      await cpu.close();
      await inner.close();
    }
  });

  it.each([
    { ranker: 'chronological', code: RANKER.chronological, removed: 0 },
    { ranker: 'random', code: RANKER.random, removed: 0.05 },
    { ranker: 'reddit-hot', code: RANKER.redditHot, removed: 0.05 },
    { ranker: 'x-interest', code: RANKER.xInterest, removed: 0 },
    { ranker: 'bridging', code: RANKER.bridging, removed: 0.05 },
    // As on an adapter with WebGPU's default of 8 storage buffers per shader: the followee targets in one range.
    { ranker: 'x-interest at 8 storage buffers per shader', code: RANKER.xInterest, removed: 0, storage: 8 },
  ])('$ranker: the same feeds, flags, lengths, impression rings and total over two steps', async ({ code, removed, storage }) => {
    const w = world(removed);
    const F = 10;
    const state = () => {
      const seen = sharedArray('i32', w.users * w.seenSize);
      for (let i = 0; i < seen.length; i++) seen[i] = hash(92, i) % 3 === 0 ? w.args.base + (hash(92, i, 1) % w.args.count) : -1;
      const seenAt = sharedArray('u8', w.users);
      for (let u = 0; u < w.users; u++) seenAt[u] = hash(93, u) % w.seenSize;
      const feed = sharedArray('i32', w.rows * F);
      const feedFlags = sharedArray('u8', w.rows * F + 3).fill(0xee);
      const feedLen = sharedArray('u8', w.rows + 3).fill(0xee);
      return { seen, seenAt, feed, feedFlags, feedLen };
    };
    const cpu = createExecutor(2);
    const inner = createExecutor(1);
    try {
      const exec = new GpuExecutor(storage ? { ...gpu!, limits: { ...gpu!.limits, maxStorageBuffersPerShaderStage: storage } } : gpu!, inner);
      const mine = state();
      const theirs = state();
      // Two steps: the second reads the impression rings the first wrote (on the device).
      for (const key of [777, 2 ** 41 + 5]) {
        const args = { ...w.args, feedSize: F, inNetwork: 4, ranker: code, key };
        const want = await cpu.reduce(K.recommend, { ...args, ...mine }, w.rows, { chunkRows: 512 });
        const got = await exec.reduce(K.recommend, { ...args, ...theirs }, w.rows, { chunkRows: 512 });
        await exec.sync();
        expect(got).toEqual(want);
        expect(want[0]).toBeGreaterThan(w.rows * 3);
        for (const name of ['feed', 'feedFlags', 'feedLen', 'seen', 'seenAt'] as const) expect(Buffer.from(theirs[name].buffer).equals(Buffer.from(mine[name].buffer)), `key ${key}: ${name}`).toBe(true);
      }
      // Feeds mix in-network and out-of-network items.
      const flags = mine.feedFlags.subarray(0, w.rows * F);
      expect(flags.includes(1) && flags.includes(0)).toBe(true);
      expect(mine.feedLen[w.rows]).toBe(0xee);
      expect(exec.counts.gpu.get('recommend')).toBe(2);
    } finally {
      await cpu.close();
      await inner.close();
    }
  });
});
