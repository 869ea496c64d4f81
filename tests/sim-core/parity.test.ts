/**
 * Parity of the kernel list across executors: every kernel declared in any kernel list runs on
 * the inline executor and on the worker pool over the same inputs, split into several chunks, and
 * must give the same bytes in every array it writes and the same partial results. Inputs come from
 * the code production runs: each bundled scenario (and the archetype layer against a local
 * chat-completions server) runs on a checking executor that executes every kernel call both ways.
 * Kernels no scenario calls get a direct case below, so nothing in the list goes unchecked.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyKernel, CallArgs, Kernel, KernelSpec } from '../../sim-core/kernel.ts';
import { chunkRanges, kernelRanges, type Executor, type RunOptions } from '../../sim-core/exec.ts';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { kernels as core } from '../../sim-core/kernels.ts';
import { kernels as recsys } from '../../recsys/kernels.ts';
import { kernels as candidates } from '../../recsys/candidateKernels.ts';
import { kernels as fold } from '../../platform/foldKernels.ts';
import { kernels as platform } from '../../platform/kernels.ts';
import { kernels as postBatch } from '../../platform/postBatch.ts';
import { COUNTED_COLUMNS, KIND, SCALAR_COLUMNS } from '../../platform/posts.ts';
import { hash, keyOf } from '../../sim-core/rng.ts';
import { sharedArray, type TypedArray } from '../../sim-core/table.ts';
import { bundledScenarios, loadScenario } from '../../runner/run/loadScenario.ts';
import { runScenario } from '../../runner/run/runScenario.ts';
import { ok, replyObject, startFakeServer, type FakeServer } from '../llm-archetypes/fakeServer.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SOURCE_DIRS = ['sim-core', 'graph', 'population', 'models', 'platform', 'recsys', 'llm-archetypes'];

const bytes = (a: TypedArray) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

interface Seen {
  calls: number;
  /** Most chunks any call was split into. */
  chunks: number;
}

/** Runs every call on the inline executor (on copies of the written arrays) and on the pool, and compares. */
class CheckingExecutor implements Executor {
  private readonly inline: Executor;
  private readonly pool: Executor;
  readonly threads = 2;
  readonly seen = new Map<string, Seen>();
  readonly mismatches: string[] = [];
  constructor(inline: Executor, pool: Executor) {
    this.inline = inline;
    this.pool = pool;
  }

  async run<S extends KernelSpec>(k: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<number[][]> {
    const id = `${path.relative(ROOT, fileURLToPath(k.module))}:${k.name}`;
    const a = args as Record<string, unknown>;
    const copies: Record<string, unknown> = { ...a };
    // Outputs that are views of one buffer (the packed post records) get views of one copy.
    const buffers = new Map<ArrayBufferLike, ArrayBufferLike>();
    for (const name of Object.keys(k.spec.writes)) {
      const v = a[name] as TypedArray | undefined;
      if (!v) continue;
      let copy = buffers.get(v.buffer);
      if (!copy) {
        copy = v.buffer instanceof SharedArrayBuffer ? new SharedArrayBuffer(v.buffer.byteLength) : new ArrayBuffer(v.buffer.byteLength);
        new Uint8Array(copy).set(new Uint8Array(v.buffer));
        buffers.set(v.buffer, copy);
      }
      copies[name] = new (v.constructor as new (b: ArrayBufferLike, at: number, n: number) => TypedArray)(copy, v.byteOffset, v.length);
    }
    const mine = await this.inline.run(k as AnyKernel, copies as never, rows, opts);
    const theirs = await this.pool.run(k as AnyKernel, args as never, rows, opts);
    for (const name of Object.keys(k.spec.writes)) {
      const v = a[name] as TypedArray | undefined;
      if (v && !bytes(v).equals(bytes(copies[name] as TypedArray))) this.mismatches.push(`${id}: ${name} differs`);
    }
    if (JSON.stringify(mine) !== JSON.stringify(theirs)) this.mismatches.push(`${id}: partial results differ`);
    const s = this.seen.get(id) ?? { calls: 0, chunks: 0 };
    s.calls++;
    s.chunks = Math.max(s.chunks, chunkRanges(rows, kernelRanges(k as AnyKernel, opts)).length);
    this.seen.set(id, s);
    return theirs;
  }

  async reduce<S extends KernelSpec>(k: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<number[]> {
    const parts = await this.run(k, args, rows, opts);
    const total: number[] = [];
    for (const p of parts) for (let i = 0; i < p.length; i++) total[i] = (total[i] ?? 0) + p[i];
    return total;
  }

  async close(): Promise<void> {}
}

/** Every kernel declared in the source tree, by `file:name`; `sequential` collects those declared sequential. */
async function declaredKernels(sequential: string[] = []): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const name of fs.readdirSync(dir)) {
      const p = path.join(dir, name);
      if (fs.statSync(p).isDirectory()) await walk(p);
      else if (name.endsWith('.ts') && /^export const kernels = kernelList\(/m.test(fs.readFileSync(p, 'utf8'))) {
        // Every module that declares a kernel list: a folder's kernels.ts, modules of kernels of
        // their own (recsys/candidateKernels.ts) and kernels beside the code that calls them
        // (platform/postBatch.ts).
        const list = ((await import(pathToFileURL(p).href)) as { kernels?: Record<string, AnyKernel> }).kernels;
        if (!list) continue;
        for (const k of Object.values(list)) {
          out.push(`${path.relative(ROOT, p)}:${k.name}`);
          if (k.spec.sequential) sequential.push(`${path.relative(ROOT, p)}:${k.name}`);
        }
      }
    }
  };
  for (const d of SOURCE_DIRS) await walk(path.join(ROOT, d));
  return out.sort();
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-parity-'));
const inline = createExecutor(1);
const pool = createExecutor(2);
const check = new CheckingExecutor(inline, pool);
let server: FakeServer;

beforeAll(async () => {
  server = await startFakeServer(() => ok(JSON.stringify(replyObject({ like: 0.2 }))));
});
afterAll(async () => {
  await server?.close();
  await pool.close();
  await inline.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('kernel parity: inline and worker pool', () => {
  // Enough agents that agent-level kernels (65,536 rows per chunk) and per-user kernels (2,048
  // active users per chunk) split into several chunks.
  const AGENTS = 140_000;

  for (const name of bundledScenarios()) {
    it(`${name}: every kernel call gives the same bytes`, async () => {
      const { scenario } = await loadScenario(name);
      const social = name === 'social-feed';
      await runScenario(scenario, { agents: AGENTS, steps: social ? 2 : 3, seed: 5, out: path.join(tmp, name), executor: check, snapshotEvery: 0 });
      expect(check.mismatches).toEqual([]);
    });
  }

  it('social-feed with LLM archetypes (local chat-completions server)', async () => {
    process.env.SOCSIM_LLM_API_KEY = 'parity-test';
    const { scenario } = await loadScenario('social-feed');
    await runScenario(scenario, {
      agents: AGENTS,
      steps: 1,
      seed: 6,
      out: path.join(tmp, 'social-llm'),
      executor: check,
      snapshotEvery: 0,
      llm: { provider: 'openai', baseURL: server.baseURL, every: 1 },
    });
    expect(check.mismatches).toEqual([]);
  });

  it('kernels no scenario calls, on direct inputs', async () => {
    const n = 200_003;
    const out8 = sharedArray('u8', n);
    await check.run(core.bernoulli, { out: out8, p: 0.3, key: keyOf(1, 2, 3) }, n);
    const table = sharedArray('f32', 7);
    table.set([0.5, 1, 1.5, 2, 2.5, 3, 3.5]);
    const group = sharedArray('u8', n);
    for (let i = 0; i < n; i++) group[i] = (i * 31) % 7;
    const outF = sharedArray('f32', n);
    await check.run(core.broadcast, { out: outF, table, group }, n);
    await check.run(core.fill, { out: outF, value: 0.25 }, n);
    await check.reduce(core.histogram, { x: outF, bins: 8, lo: -1, hi: 1 }, n);
    await check.reduce(core.moments, { x: outF }, n);
    // Deffuant's synchronous scheme (the deffuant scenario runs the pairwise one by default).
    const x = sharedArray('f32', n);
    const partner = sharedArray('i32', n);
    for (let i = 0; i < n; i++) {
      x[i] = Math.sin(i);
      partner[i] = i % 5 === 0 ? -1 : (i * 7919) % n;
    }
    await check.run(core.boundedStep, { x, out: outF, partner, eps: 0.5, mu: 0.3 }, n);
    // sampleNeighbor then gather, what gatherNeighbor (the voter's) does in one pass: a CSR whose
    // every fifth row has no neighbours.
    const offsets = sharedArray('i32', n + 1);
    for (let v = 0; v < n; v++) offsets[v + 1] = offsets[v] + (v % 5 === 0 ? 0 : 1 + (v % 7));
    const targets = sharedArray('i32', offsets[n]);
    for (let e = 0; e < targets.length; e++) targets[e] = (e * 104729) % n;
    await check.run(core.sampleNeighbor, { offsets, targets, out: partner, key: keyOf(4, 5, 6) }, n);
    await check.run(core.gather, { out: out8, src: group, index: partner }, n);
    // The candidate index's kernels over a full window's posts (a short scenario run has too few
    // posts to split them into chunks), under every ranker.
    const posts = 100_003;
    const stride = 8;
    const col = <T extends TypedArray>(a: T, f: (r: number) => number) => {
      for (let r = 0; r < posts; r++) a[r] = f(r);
      return a;
    };
    const post = {
      rank: col(sharedArray('f32', posts), (r) => (r % 11 === 0 ? 0.5 : 1)),
      step: col(sharedArray('i32', posts), (r) => Math.floor(r / 2000)),
      author: col(sharedArray('i32', posts), (r) => (r * 7919) % 5000),
      likes: col(sharedArray('i32', posts), (r) => (r * 31) % 17),
      dislikes: col(sharedArray('i32', posts), (r) => (r * 13) % 5),
      likesLeft: col(sharedArray('i32', posts), (r) => ((r * 31) % 17) >> 1),
      dislikesLeft: col(sharedArray('i32', posts), (r) => ((r * 13) % 5) % 3),
      treatVote: col(sharedArray('i8', posts), (r) => (r % 7) - 3 > 1 ? 1 : 0),
      kind: col(sharedArray('u8', posts), (r) => r % 4),
      flags: col(sharedArray('u8', posts), (r) => (r % 23 === 0 ? 8 : 0)),
      cluster: col(sharedArray('u8', posts), (r) => (r * 5) % 64),
    };
    const followers = col(sharedArray('i32', 5000), (v) => (v * v) % 3001);
    const prevByAuthor = col(sharedArray('i32', posts), (r) => r - 5000);
    const topic = col(sharedArray('f32', posts * 16), (i) => Math.sin(i * 0.7));
    const rec = sharedArray('i32', posts * stride);
    const recF = new Float32Array(rec.buffer);
    const recQ = new Int8Array(rec.buffer);
    const score = sharedArray('f32', posts);
    for (const ranker of [0, 1, 2, 3, 4]) {
      // Rows before 1000 are retired (not scored); static fields are written from row 40,000.
      await check.run(recsys.recordStatics, { step: post.step, author: post.author, prevByAuthor, topic, rec, recQ, from: 40_000, dim: 16, stride }, posts - 40_000, { chunkRows: 16384 });
      const { kind, flags, cluster, ...scored } = post;
      const o = { ...scored, flags, followers, recencies: sharedArray('f64', 0), factors: sharedArray('f64', 0), base: 1000, first: 1000, ranker, now: 50, stepSeconds: 3600, tauHours: 6, recency: 0, firstStep: 0 };
      // It also counts the removed live posts (FLAG.removed = 8: every 23rd row here), so the feed kernel reads flags only when some are.
      const [removed] = await check.reduce(recsys.baseScores, { ...o, out: recF, outStride: stride }, posts - 1000, { chunkRows: 16384 });
      expect(removed).toBe(Math.ceil(posts / 23) - Math.ceil(1000 / 23));
      // The webgpu backend's column of base scores gets the records' values for the live rows.
      await check.reduce(recsys.baseScores, { ...o, out: score, outStride: 1 }, posts - 1000, { chunkRows: 16384 });
      for (let r = 1000; r < posts; r += 997) expect(score[r]).toBe(recF[r * stride]);
      const { rank, likes } = post;
      // The candidate lists: 7 slices of 16,384 rows from row 2,000, each list merged from them.
      const slices = Math.ceil((posts - 2000) / 16384);
      const part = sharedArray('u32', slices * (64 * 16 + 20) * 4);
      const lists = { clusterPosts: sharedArray('i32', 64 * 16), trending: sharedArray('i32', 20) };
      const tops = { kind, flags, cluster, rank, likes, recF, score, part, base: 1000, count: posts, stride, ranker, firstRow: 2000, sliceRows: 16384 };
      await check.run(candidates.candidateTops, { ...tops, topics: 64, perCluster: 16, trending: 20, key: keyOf(3, 4, 5) }, slices, { chunkRows: 2 });
      await check.run(candidates.mergeTops, { part, ...lists, slices, topics: 64, perCluster: 16, trendingLen: 20 }, 65, { chunkRows: 8 });
      // Rows before firstRow (ids below 3,000) never enter; the even clusters hold every eligible row (kinds 0 and 2).
      expect(lists.clusterPosts.every((id) => id === -1 || id >= 3000)).toBe(true);
      expect(lists.clusterPosts.filter((id) => id >= 3000).length).toBe(32 * 16);
    }
    // The step's actions packed for reading (apply on a device executor), users without any among them.
    const users = 30_001;
    const E = 8;
    const evAction = sharedArray('u8', users * E);
    const evTarget = sharedArray('i32', users * E);
    const evStart = sharedArray('i32', users + 1);
    for (let k = 0; k < users; k++) {
      const count = k % 3 === 0 ? 0 : 1 + ((k * 7) % E);
      evStart[k + 1] = evStart[k] + count;
      for (let e = 0; e < E; e++) {
        evAction[k * E + e] = (k + e) % 11;
        evTarget[k * E + e] = e < count ? k * 100 + e : -9;
      }
    }
    const total = evStart[users];
    const packedAction = sharedArray('u32', total);
    const packedTarget = sharedArray('i32', total);
    await check.run(platform.packEvents, { evAction, evTarget, evStart, packedAction, packedTarget, users, maxEvents: E }, total);
    expect(packedTarget.every((t, i) => t >= 0 && evStart[Math.floor(t / 100)] + (t % 100) === i)).toBe(true);
    {
      // The daily rebuild's fold of new and dropped follows into the following rows, by 4 parts of rows
      // (a short scenario run never reaches a rebuild's threaded fold).
      const n = 5_000;
      const deg = Array.from({ length: n }, (_, u) => hash(31, u) % 20);
      const offsets = sharedArray('i32', n + 1);
      for (let u = 0; u < n; u++) offsets[u + 1] = offsets[u] + deg[u];
      const old = sharedArray('i32', offsets[n]);
      old.forEach((_, j) => (old[j] = hash(32, j) % n));
      const droppedList = Array.from({ length: offsets[n] }, (_, j) => j).filter((j) => hash(33, j) % 9 === 0);
      const dropped = sharedArray('f64', droppedList.length + 1);
      dropped.set([...droppedList, Infinity]);
      const adds = Array.from({ length: n }, (_, u) => u).flatMap((u) => (hash(34, u) % 3 === 0 ? [[u, hash(35, u) % n], [u, hash(36, u) % n]] : []));
      const addA = sharedArray('i32', adds.length);
      addA.set(adds.map(([u]) => u));
      const addB = sharedArray('i32', adds.length);
      addB.set(adds.map(([, v]) => v));
      const want: number[][] = Array.from({ length: n }, (_, u) => {
        const row: number[] = [];
        for (let j = offsets[u]; j < offsets[u + 1]; j++) if (hash(33, j) % 9 !== 0) row.push(old[j]);
        return [...row, ...adds.filter(([a]) => a === u).map(([, v]) => v)];
      });
      const newOffsets = sharedArray('i32', n + 1);
      for (let u = 0; u < n; u++) newOffsets[u + 1] = newOffsets[u] + want[u].length;
      const bounds = sharedArray('f64', 5);
      bounds.set([0, 1_200, 2_500, 3_100, n]);
      const out = sharedArray('i32', newOffsets[n]);
      await check.run(fold.foldRows, { offsets, targets: old, addA, addB, dropped, bounds, newOffsets, out }, 4, { parts: 4 });
      expect(Array.from(out)).toEqual(want.flat());
    }
    // writePosts and writeTopics (apply's new rows): a short scenario run makes fewer posts a step
    // than a chunk.
    // 150,000 posts of every kind after 50,000 live rows whose content reshares copy.
    {
      const live = 50_000;
      const made = 150_000;
      const dim = 4;
      const by = <T extends TypedArray>(a: T, f: (i: number) => number) => {
        for (let i = 0; i < a.length; i++) a[i] = f(i);
        return a;
      };
      const rows = live + made;
      const cols = Object.fromEntries(
        Object.entries(SCALAR_COLUMNS)
          .filter(([name]) => !(COUNTED_COLUMNS as readonly string[]).includes(name))
          .map(([name, type]) => [name, by(sharedArray(type, rows), (r) => (r < live ? (r * 2654435761) % 251 : 0))]),
      );
      const topic = sharedArray('f32', rows * dim);
      for (let i = 0; i < live * dim; i++) topic[i] = Math.cos(i);
      const base = 1_000_000;
      const kinds = [KIND.original, KIND.repost, KIND.quote, KIND.comment];
      const queued = {
        newAuthor: by(sharedArray('i32', made), (i) => (i * 7) % 9000),
        newKind: by(sharedArray('u8', made), (i) => kinds[i % 4]),
        newParent: by(sharedArray('i32', made), (i) => (i % 4 === 0 ? -1 : base + ((i * 7919) % live))),
        newRoot: by(sharedArray('i32', made), (i) => (i % 4 === 0 || i % 3 === 0 ? -1 : base + ((i * 104729) % live))),
        newRootAuthor: by(sharedArray('i32', made), (i) => (i * 13) % 9000),
        newDepth: by(sharedArray('i32', made), (i) => (i % 4 === 0 ? 0 : 1 + (i % 6))),
        newStance: by(sharedArray('f32', made), (i) => Math.sin(i)),
        newSrc: by(sharedArray('i32', made), (i) => i % 1000),
        newPrev: by(sharedArray('i32', made), (i) => (i % 5 === 0 ? -1 : base + (i % live))),
        srcCluster: by(sharedArray('u8', 1000), (i) => i % 64),
      };
      await check.run(postBatch.writePosts, { ...queued, ...cols, row0: live, base, stepNow: 7 } as never, made, { announced: true });
      const srcTopic = by(sharedArray('f32', 1000 * dim), (i) => Math.sin(i * 3));
      await check.run(postBatch.writeTopics, { newParent: queued.newParent, newSrc: queued.newSrc, srcTopic, topic, row0: live, base, dim }, made);
    }
    expect(check.mismatches).toEqual([]);
  });

  it('every declared kernel was checked, split into several chunks (one for a sequential kernel)', async () => {
    const sequential: string[] = [];
    const declared = await declaredKernels(sequential);
    expect(declared.length).toBeGreaterThan(20);
    const missing = declared.filter((k) => !check.seen.has(k));
    expect(missing).toEqual([]);
    const single = declared.filter((k) => !sequential.includes(k) && (check.seen.get(k)?.chunks ?? 0) < 2);
    expect(single).toEqual([]);
    expect(sequential).toEqual(['sim-core/kernels.ts:pairwiseBounded']);
    expect(sequential.map((k) => check.seen.get(k)?.chunks)).toEqual([1]);
  });
});
