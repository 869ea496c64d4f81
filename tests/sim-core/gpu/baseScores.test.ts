/**
 * The post base scores in WGSL (recsys/baseScores.wgsl.ts, with the software f64 multiply of
 * sim-core/gpu/softf64.wgsl.ts) against the CPU, bit for bit: a post table stepped through
 * retirements and growth, scored by PostRecords.update on the webgpu executor (the `score` column)
 * and on the CPU (the records' recF), under x-interest with both recency forms (ages whose R(age)
 * is an f32 subnormal or 0), chronological and random, with follower counts around and far past
 * 999 (the factor table extended as counts grow) and rank multipliers. Skips with one line when no
 * adapter exists.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../../sim-core/cpuExecutor.ts';
import { hash } from '../../../sim-core/rng.ts';
import { GpuExecutor } from '../../../sim-core/gpu/executor.ts';
import { KIND, PostTable } from '../../../platform/posts.ts';
import { PostRecords } from '../../../recsys/records.ts';
import { RANKER } from '../../recsys/rankerCodes.ts';
import { runPass } from '../../../sim-core/gpu/dispatch.ts';
import { RNG_WGSL } from '../../../sim-core/gpu/rng.wgsl.ts';
import { SOFTFLOAT_WGSL } from '../../../sim-core/gpu/softfloat.wgsl.ts';
import { SOFTF64_WGSL } from '../../../sim-core/gpu/softf64.wgsl.ts';
import { gpuOrSkip, rowShader } from '../../gpuHelpers.ts';

const gpu = await gpuOrSkip('the post base scores in WGSL against the CPU');
afterAll(() => gpu?.close());

const RANKS = [1, 1, 1, 0.3, 0.7, 1.1, 1e-39, 0];

/** Per row [a high word, a low word, b high word, b low word] (two f64): the f64 bits of d_mul(a, b), then its f32 bits. */
const MUL_SHADER = rowShader(
  `${RNG_WGSL}\n${SOFTFLOAT_WGSL}\n${SOFTF64_WGSL}`,
  `  let d = d_mul(d_from_f64(ab[4u * i], ab[4u * i + 1u]), d_from_f64(ab[4u * i + 2u], ab[4u * i + 3u]));
  var hi = d.s << 31u;
  if ((d.hi | d.lo) != 0u) { hi = hi | (u32(d.e + 1075) << 20u) | (d.hi & 0xfffffu); }
  out[3u * i] = hi;
  out[3u * i + 1u] = d.lo;
  out[3u * i + 2u] = d_to_f32(d);`,
);

describe.skipIf(!gpu)(`post base scores on WebGPU (${gpu?.adapter})`, () => {
  it.each([
    { ranker: 'x-interest, exp(-age / tau)', code: RANKER.xInterest, recency: 0, tauHours: 0.19 },
    { ranker: "x-interest, OASIS's logarithm", code: RANKER.xInterest, recency: 1, tauHours: 6 },
    { ranker: 'chronological', code: RANKER.chronological, recency: 0, tauHours: 6 },
    { ranker: 'random', code: RANKER.random, recency: 0, tauHours: 6 },
  ])('$ranker: the same f32 bits for every live post, step after step', async ({ code, recency, tauHours }) => {
    const D = 4;
    const users = 3000;
    const cpu = createExecutor(1);
    const inner = createExecutor(1);
    const exec = new GpuExecutor(gpu!, inner);
    try {
      const posts = new PostTable(D, 64, 2 ** 24 - 500).bind(cpu);
      const mine = new PostRecords(D).bind(cpu);
      const theirs = new PostRecords(D).bind(exec);
      // Counts around 999 (factor 1 at 999 exactly) and far past it; some grow every step, past the factor table.
      const followers = new Int32Array(users).map((_, v) => (v % 5 === 0 ? 990 + (v % 20) : v % 7 === 0 ? hash(61, v) % 2_000_000 : v));
      const seen = { subnormal: 0, factor: 0 };
      for (let step = 0; step < 40; step++) {
        for (let i = 0; i < 80 + (step % 13); i++) {
          const id = posts.nextId;
          posts.add({ author: hash(62, id) % users, step, kind: KIND.original, parent: -1, root: -1, rootAuthor: 0, depth: 0, stance: 0, cluster: 0, flags: hash(63, id) % 11 === 0 ? 8 : 0, prevByAuthor: -1 }, [1, 0, 0, 0]);
          posts.cols.rank[posts.count - 1] = RANKS[hash(64, id) % RANKS.length];
        }
        if (step >= 10) posts.retire(Math.max(0, posts.count - 2000), () => {});
        for (let v = 0; v < users; v += 7) followers[v] += 1000 * step;
        for (const c of Object.values(posts.cols)) exec.hostWrote(c);
        exec.hostWrote(followers);
        // About half an hour a step, the window ~20 hours: at tau = 0.19 h, R(age) of the oldest rows is
        // an f32 subnormal (e^-87 to e^-103) or 0.
        const o = { ranker: code, step, stepSeconds: 1800 + 97 * step, tauHours, recency, followers };
        const want = await mine.update(posts, o);
        const got = await theirs.update(posts, o);
        expect(got, `step ${step}: removed`).toBe(want);
        await exec.sync([theirs.score]);
        for (let r = posts.first; r < posts.count; r++) {
          const a = mine.recF[r * mine.stride];
          const b = theirs.score[r];
          if (!Object.is(a, b)) throw new Error(`step ${step}, row ${r}: ${b} on the device, ${a} on the CPU`);
          seen.subnormal += a !== 0 && Math.abs(a) < 2 ** -126 ? 1 : 0;
          seen.factor += followers[posts.cols.author[r]] > 999 && a !== 0 ? 1 : 0;
        }
      }
      // The cases the software arithmetic must get right came up.
      if (code === RANKER.xInterest || code === RANKER.chronological) expect(seen.factor).toBeGreaterThan(100);
      expect(seen.subnormal).toBeGreaterThan(code === RANKER.chronological ? -1 : 100);
      expect(exec.counts.gpu.get('baseScores')).toBeGreaterThanOrEqual(40);
      expect(exec.counts.cpu.get('baseScores')).toBeUndefined();
    } finally {
      await cpu.close();
      await inner.close();
    }
  });

  it('d_mul and d_to_f32 equal the f64 product and Math.fround of it, ties to even included', async () => {
    const f64 = new Float64Array(1);
    const w = new Uint32Array(f64.buffer);
    const words = (x: number) => ((f64[0] = x), [w[1], w[0]]);
    const pairs: Array<[number, number]> = [];
    for (let i = 0; i < 20_000; i++) {
      // A 53-bit significand times a short one (1 to 3 more bits: exact halves are common), or two random ones.
      const a = (1 + hash(51, i) / 2 ** 32 + (hash(51, i, 1) >>> 11) / 2 ** 53) * 2 ** ((hash(52, i) % 200) - 100) * (i % 3 === 0 ? -1 : 1);
      const b = i % 2 === 0 ? [1.5, 1.25, 1.75, 1.125, 3, 0.625][i % 6] * 2 ** ((hash(53, i) % 40) - 20) : 1 + (hash(54, i) / 2 ** 32) * 0.999;
      pairs.push([a, b]);
    }
    // Two full 53-bit significands whose 106-bit product drops 52 bits: b chosen (mod 2^52, with a
    // odd) so that those bits are exactly a half, a half and one more (its only set bits in the
    // lowest word), or a half and a bit in the word above.
    const M = 1n << 52n;
    const inverse = (a: bigint) => {
      let x = a;
      for (let k = 0; k < 6; k++) x = (x * (2n - a * x)) & (M - 1n);
      return x;
    };
    for (const target of [M / 2n, M / 2n + 1n, M / 2n + (1n << 40n), M / 2n - 1n]) {
      for (let t = 0, made = 0; made < 50; t++) {
        const a = M + (BigInt(hash(55, t)) << 19n) + 1n;
        const b = ((target * inverse(a)) & (M - 1n)) + M;
        if (a * b >= 1n << 105n) continue;
        pairs.push([Number(a) / 2 ** 52, Number(b) / 2 ** 52]);
        made++;
      }
    }
    // f32 boundaries: products that round to the smallest normal, to subnormals and to 0, and zeros.
    pairs.push([2 ** -126, 1 - 2 ** -25], [2 ** -149, 0.5], [2 ** -149, 0.75], [2 ** -140, 1 / 3], [0, 5], [-0, 5], [3, -0]);
    const input = Uint32Array.from(pairs.flatMap(([a, b]) => [...words(a), ...words(b)]));
    const out = new Uint32Array(await runPass(gpu!, MUL_SHADER, { rows: pairs.length, params: [], inputs: [input], outputBytes: pairs.length * 12 }));
    const f32 = new Float32Array(1);
    const f32w = new Uint32Array(f32.buffer);
    let ties = 0;
    pairs.forEach(([a, b], i) => {
      const [hi, lo] = words(a * b);
      f32[0] = a * b;
      const want = [hi, lo, f32w[0]];
      const got = [out[3 * i], out[3 * i + 1], out[3 * i + 2]];
      if (got.some((x, k) => x !== want[k])) throw new Error(`${a} x ${b}: device ${got.map((x) => x.toString(16))}, CPU ${want.map((x) => x.toString(16))}`);
      // An exact half dropped in rounding the product to 53 bits (normal inputs).
      if (a !== 0 && b !== 0 && i < 20_000) {
        const sig = (x: number) => {
          const [h, l] = words(x);
          return (BigInt((h & 0xfffff) | 0x100000) << 32n) | BigInt(l);
        };
        const p = sig(a) * sig(b);
        const drop = BigInt(p.toString(2).length - 53);
        if (drop > 0n && (p & ((1n << drop) - 1n)) === 1n << (drop - 1n)) ties++;
      }
    });
    expect(ties).toBeGreaterThan(100);
  });

  it('bridging (per-side vote counts) stays on the CPU, into the same column', async () => {
    const inner = createExecutor(1);
    const exec = new GpuExecutor(gpu!, inner);
    try {
      const posts = new PostTable(4, 64);
      for (let i = 0; i < 10; i++) posts.add({ author: i, step: 2, kind: KIND.original, parent: -1, root: -1, rootAuthor: 0, depth: 0, stance: 0, cluster: 0, flags: 0, prevByAuthor: -1 }, [1, 0, 0, 0]);
      // Row 9: 4 likes, 3 of them from the left: min(4/5, 2/3). Row 8: 2 dislikes from the left: min(1/4, 1/2).
      posts.cols.likes[9] = 4;
      posts.cols.likes_left[9] = 3;
      posts.cols.dislikes[8] = 2;
      posts.cols.dislikes_left[8] = 2;
      const records = new PostRecords(4).bind(exec);
      await records.update(posts, { ranker: RANKER.bridging, step: 8, stepSeconds: 3600, tauHours: 6, recency: 0, followers: new Int32Array(10) });
      await exec.sync([records.score]);
      expect(records.score[9]).toBe(Math.fround(Math.exp(-1) * (2 / 3)));
      expect(records.score[8]).toBe(Math.fround(Math.exp(-1) * 0.25));
      expect(records.score[0]).toBe(Math.fround(Math.exp(-1) * 0.5));
      expect(exec.counts.gpu.get('baseScores')).toBeUndefined();
    } finally {
      await inner.close();
    }
  });

  it('reddit-hot (a base-10 logarithm) stays on the CPU, into the same column', async () => {
    const inner = createExecutor(1);
    const exec = new GpuExecutor(gpu!, inner);
    try {
      const posts = new PostTable(4, 64);
      for (let i = 0; i < 100; i++) posts.add({ author: i % 9, step: i >> 3, kind: KIND.original, parent: -1, root: -1, rootAuthor: 0, depth: 0, stance: 0, cluster: 0, flags: 0, prevByAuthor: -1 }, [1, 0, 0, 0]);
      posts.cols.likes.fill(3);
      const records = new PostRecords(4).bind(exec);
      await records.update(posts, { ranker: RANKER.redditHot, step: 20, stepSeconds: 3600, tauHours: 6, recency: 0, followers: new Int32Array(9) });
      await exec.sync([records.score]);
      expect(records.score[99]).toBe(Math.fround(Math.log10(3) + (12 * 3600) / 45000));
      expect(exec.counts.gpu.get('baseScores')).toBeUndefined();
    } finally {
      await inner.close();
    }
  });
});
