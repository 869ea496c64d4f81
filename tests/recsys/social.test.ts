import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { runStep, type Phase, type StepContext, type World } from '../../sim-core/phase.ts';
import { buildGraph } from '../../sim-core/csr.ts';
import { pairSetHas } from '../../sim-core/pairSet.ts';
import { sharedArray } from '../../sim-core/table.ts';
import { heuristicBehaviour } from '../../platform/behaviour.ts';
import { buildSociety } from '../../population/buildSociety.ts';
import { synthesizePopulation, ACTIVITY_TIERS } from '../../population/synthesize.ts';
import { activatePhase, actPhase, maintainPhase, updatePhase } from '../../platform/phases.ts';
import { applyPhase } from '../../platform/applyPhase.ts';
import { createSocialState, reserveActive, socialConfig, type SocialState } from '../../platform/state.ts';
import { KIND } from '../../platform/posts.ts';
import { recommendPhase } from '../../recsys/recommend.ts';
import { scoreOf } from '../../recsys/kernels.ts';
import { randomScore } from '../../recsys/rankers/random.ts';
import { MAX_DOT } from '../../recsys/rankers/xInterest.ts';
import { baseScore, PostRecords } from '../../recsys/records.ts';
import { quantise } from '../../recsys/recommender.ts';

const exec = createExecutor(1);
afterAll(() => exec.close());

const CENTRES = [-1, -0.5, 0, 0.5, 1];

async function socialWorld(agents: number, seed: number, platform: Record<string, unknown>, story?: { seeds: 'hubs' | 'leaves' | 'random'; count: number }) {
  const society = await buildSociety(exec, { agents, seed, graph: { kind: 'homophilous', meanFollowing: 20, homophily: 0.8 } });
  const behaviour = heuristicBehaviour({ ageBands: 6, leaningCentres: CENTRES, tiers: ACTIVITY_TIERS.length, scale: (platform.behaviour as object) ?? {} });
  const world: World = { agents: society.agents, graph: society.graph, exec, seed, stepSeconds: 3600 };
  const s = createSocialState(world, socialConfig.parse(platform), behaviour, society.prototypes, 64);
  const storyOpts = story ? { ...story, step: 0, stance: 0.8, topic: 0 } : undefined;
  return { world, s, phases: (check?: Phase): Phase[] => [activatePhase(s), recommendPhase(s), ...(check ? [check] : []), actPhase(s), applyPhase(s, storyOpts), updatePhase(s), maintainPhase(s)] };
}

async function run(world: World, phases: Phase[], steps: number) {
  for (const p of phases) await p.init?.(world);
  const rows: Array<Map<string, number>> = [];
  for (let t = 0; t < steps; t++) rows.push(await runStep(world, phases, t));
  return rows;
}

function ctxAt(step: number): StepContext {
  return { step, time: step * 3600, key: () => 12345, metric: () => {}, later: () => {} };
}

/** One user (row 0) and hand-made posts by other users, all in the user's probed clusters. */
async function handWorld(ranker: string, trending = 20) {
  const n = 8;
  const pop = synthesizePopulation(n, 1);
  const graph = await buildGraph(exec, n, sharedArray('i32', 0), sharedArray('i32', 0), true);
  const world: World = { agents: pop.agents, graph, exec, seed: 1, stepSeconds: 3600 };
  const behaviour = heuristicBehaviour({ ageBands: 6, leaningCentres: CENTRES, tiers: 3 });
  const s = createSocialState(world, socialConfig.parse({ ranker, feedSize: 4, inNetwork: 0, trending }), behaviour, pop.prototypes, 64);
  const rec = recommendPhase(s);
  await rec.init!(world);
  const D = 16;
  const interest = pop.agents.columns.interest as Float32Array;
  const addPost = (author: number, step: number, likes: number, dislikes: number, topic: Float32Array) => {
    const id = s.posts.add({ author, step, kind: KIND.original, parent: -1, root: -1, rootAuthor: author, depth: 0, stance: 0, cluster: s.readers.clusters[0], flags: 0, prevByAuthor: s.posts.latest[author] }, topic);
    s.posts.latest[author] = id;
    const r = s.posts.rowOf(id);
    s.posts.cols.likes[r] = likes;
    s.posts.cols.dislikes[r] = dislikes;
    return id;
  };
  const feedAt = async (step: number) => {
    s.feeds.active = Int32Array.from([0]);
    reserveActive(s, 1);
    s.readers.seen.fill(-1);
    await rec.run(world, ctxAt(step));
    return Array.from(s.feeds.items.subarray(0, s.feeds.len[0]));
  };
  const mix = (w: number) => {
    // A unit vector with cosine w to user 0's interest.
    const u = interest.subarray(0, D);
    const o = new Float32Array(D);
    o[0] = u[1];
    o[1] = -u[0];
    const on = Math.hypot(...o);
    const v = new Float32Array(D);
    for (let d = 0; d < D; d++) v[d] = w * u[d] + Math.sqrt(1 - w * w) * (o[d] / on);
    return v;
  };
  return { s, addPost, feedAt, mix, interest };
}

describe('recommend kernel', () => {
  it('reddit-hot orders a feed exactly as the formula says', async () => {
    const h = await handWorld('reddit-hot');
    const t = h.mix(0.5);
    // [author, step, likes, dislikes]; hot score sign(s) log10(max(|s|, 1)) + step x 3600 / 45000:
    const [a, b, c, d] = [
      [1, 0, 100, 0], // 2 + 0 = 2
      [2, 10, 5, 0], // 0.699 + 0.8 = 1.499
      [3, 20, 0, 0], // 0 + 1.6 = 1.6
      [4, 30, 0, 10], // -1 + 2.4 = 1.4
    ].map(([au, step, l, dl]) => h.addPost(au, step, l, dl, t));
    // Neither chronological (d, c, b, a) nor by likes (a, b, c, d).
    expect(await h.feedAt(30)).toEqual([a, c, b, d]);
  });

  it('chronological shows the newest first; random orders by the per-user hash of the step key', async () => {
    const c = await handWorld('chronological');
    const ids = [0, 10, 20, 30].map((step, i) => c.addPost(i + 1, step, 100 - step, 0, c.mix(0.5)));
    expect(await c.feedAt(30)).toEqual([...ids].reverse());
    const r = await handWorld('random');
    const rids = [0, 10, 20, 30].map((step, i) => r.addPost(i + 1, step, 0, 0, r.mix(0.5)));
    const feed = await r.feedAt(30);
    expect([...feed].sort((x, y) => x - y)).toEqual(rids);
    // ctxAt's key is 12345; user 0's feed descends in randomScore (float32: equal scores by id, larger first).
    for (let i = 1; i < feed.length; i++) {
      const [x, y] = [randomScore(12345, 0, feed[i - 1]), randomScore(12345, 0, feed[i])];
      expect(x > y || (x === y && feed[i - 1] > feed[i])).toBe(true);
    }
  });

  it('x-interest recomputes recency every step: an old well-matched post drops below a new one', async () => {
    const h = await handWorld('x-interest', 0);
    const old = h.addPost(1, 0, 0, 0, h.mix(0.9));
    expect(await h.feedAt(0)).toEqual([old]);
    const fresh = h.addPost(2, 6, 0, 0, h.mix(0.5));
    // At step 6 the old post scores 0.9 e^-1 = 0.33 < 0.5 (OASIS would keep its first-sight recency).
    expect(await h.feedAt(6)).toEqual([fresh, old]);
    // The score of one post decays by e^(-1/tau) per hour; the kernel multiplies by the cosine.
    const s = h.s;
    const r = s.posts.rowOf(old);
    const o = { ranker: 3, stepSeconds: 3600, tauHours: 6, recency: 0, followers: s.follows.followers };
    const b1 = baseScore(s.posts, r, { ...o, step: 1 });
    const b2 = baseScore(s.posts, r, { ...o, step: 2 });
    expect(b2 / b1).toBeCloseTo(Math.exp(-1 / 6), 6);
    const records = new PostRecords(16).bind(exec);
    await records.update(s.posts, { ...o, step: 1 });
    const user = scoreOf({ ranker: 3, dim: 16, interestQ: Int8Array.from(h.interest, quantise), rec: records.rec, recF: records.recF, recQ: records.recQ, stride: records.stride, base: s.posts.base } as never, 0, r);
    // Topics are stored as int8 for ranking: the cosine is exact to about 1%.
    expect(user / MAX_DOT / (0.9 * Math.exp(-1 / 6))).toBeCloseTo(1, 1);
    // OASIS's recency: ln((271.8 - age) / 100), clipped at 0.
    expect(baseScore(s.posts, r, { ...o, recency: 1, step: 10 })).toBeCloseTo(Math.log(2.618), 6);
    expect(baseScore(s.posts, r, { ...o, recency: 1, step: 200 })).toBe(0);
  });
});

describe('in-network candidates', () => {
  it('maxScan bounds the followees scanned per step; 0 scans every followee', async () => {
    // User 0 follows users 1..7, each with one post; a chronological feed with room for all.
    const n = 8;
    const pop = synthesizePopulation(n, 1);
    const src = sharedArray('i32', 7).fill(0);
    const dst = sharedArray('i32', 7);
    for (let i = 0; i < 7; i++) dst[i] = i + 1;
    const graph = await buildGraph(exec, n, src, dst, true);
    const world: World = { agents: pop.agents, graph, exec, seed: 1, stepSeconds: 3600 };
    const behaviour = heuristicBehaviour({ ageBands: 6, leaningCentres: CENTRES, tiers: 3 });
    const feedOf = async (maxScan: number) => {
      const cfg = { ranker: 'chronological', feedSize: 8, inNetwork: 8, perCluster: 0, trending: 0, maxScan };
      const s = createSocialState(world, socialConfig.parse(cfg), behaviour, pop.prototypes, 64);
      const topic = new Float32Array(16).fill(0.25);
      for (let a = 1; a <= 7; a++) {
        s.posts.latest[a] = s.posts.add({ author: a, step: 0, kind: KIND.original, parent: -1, root: -1, rootAuthor: a, depth: 0, stance: 0, cluster: 0, flags: 0, prevByAuthor: -1 }, topic);
      }
      const rec = recommendPhase(s);
      await rec.init!(world);
      s.feeds.active = Int32Array.from([0]);
      reserveActive(s, 1);
      await rec.run(world, ctxAt(1));
      return Array.from(s.feeds.items.subarray(0, s.feeds.len[0]));
    };
    expect((await feedOf(3)).length).toBe(3);
    expect((await feedOf(7)).length).toBe(7);
    const all = await feedOf(0);
    expect(all.length).toBe(7);
    // Newest first: every followee's post.
    expect(all).toEqual([...all].sort((x, y) => y - x));
  });
});

describe('social platform', () => {
  it('feeds: no duplicates, in/out mix respected, in-network items from followees, muted authors never shown', async () => {
    for (const seed of [1, 2]) {
      const { world, s, phases } = await socialWorld(4000, seed, { feedSize: 8, inNetwork: 3, behaviour: { mute: 40 } });
      let feeds = 0;
      let violations = 0;
      let inNet = 0;
      let full = 0;
      const check: Phase = {
        name: 'check',
        reads: [],
        writes: [],
        run(w) {
          const F = s.cfg.feedSize;
          const G = w.graph.following;
          for (let k = 0; k < s.feeds.active.length; k++) {
            const u = s.feeds.active[k];
            const len = s.feeds.len[k];
            const ids = Array.from(s.feeds.items.subarray(k * F, k * F + len));
            feeds++;
            if (len === F) full++;
            if (new Set(ids).size !== ids.length) violations++;
            let nIn = 0;
            const followees = new Set(G.targets.subarray(G.offsets[u], G.offsets[u + 1]));
            ids.forEach((id, i) => {
              const r = s.posts.rowOf(id);
              const a = s.posts.cols.author[r];
              if (a === u) violations++;
              if (pairSetHas(s.follows.mutes.keysA, s.follows.mutes.keysB, u, a) || pairSetHas(s.follows.mutes.keysA, s.follows.mutes.keysB, u, s.posts.cols.root_author[r])) violations++;
              const flagged = s.feeds.flags[k * F + i] === 1;
              if (flagged) nIn++;
              if (flagged !== followees.has(a)) violations++;
            });
            if (nIn > s.cfg.inNetwork) violations++;
            inNet += nIn;
          }
        },
      };
      const rows = await run(world, phases(check), 10);
      const mutes = rows.reduce((t, r) => t + (r.get('actions_mute') ?? 0), 0);
      expect(mutes, 'the test needs mutes to happen').toBeGreaterThan(100);
      expect(feeds).toBeGreaterThan(1000);
      expect(full).toBeGreaterThan(feeds / 2);
      expect(inNet).toBeGreaterThan(0);
      expect(violations).toBe(0);
    }
  });

  it('perCluster 0 and trending 0 give feeds of followed accounts only, under every ranker', async () => {
    for (const ranker of ['chronological', 'random', 'reddit-hot', 'x-interest', 'bridging']) {
      const counts = async (platform: Record<string, unknown>) => {
        const { world, s, phases } = await socialWorld(2000, 1, { ranker, feedSize: 10, inNetwork: 10, ...platform });
        let items = 0;
        let outside = 0;
        const check: Phase = {
          name: 'check',
          reads: [],
          writes: [],
          run(w) {
            const G = w.graph.following;
            for (let k = 0; k < s.feeds.active.length; k++) {
              const u = s.feeds.active[k];
              const followees = new Set(G.targets.subarray(G.offsets[u], G.offsets[u + 1]));
              for (let i = 0; i < s.feeds.len[k]; i++) {
                items++;
                if (!followees.has(s.posts.cols.author[s.posts.rowOf(s.feeds.items[k * s.cfg.feedSize + i])])) outside++;
              }
            }
          },
        };
        await run(world, phases(check), 8);
        return { items, outside };
      };
      const timeline = await counts({ perCluster: 0, trending: 0 });
      expect(timeline.items, ranker).toBeGreaterThan(300);
      expect(timeline.outside, ranker).toBe(0);
      // The same platform with its out-of-network sources fills slots its followees leave empty.
      expect((await counts({})).outside, ranker).toBeGreaterThan(0);
    }
  });

  /** Asserts every difference is positive and their mean exceeds 4 standard errors. */
  const expectPositive = (diffs: number[], what: string) => {
    const m = diffs.reduce((a, b) => a + b, 0) / diffs.length;
    const sd = Math.sqrt(diffs.reduce((a, b) => a + (b - m) ** 2, 0) / (diffs.length - 1));
    for (const d of diffs) expect(d, `${what}: ${diffs.join(', ')}`).toBeGreaterThan(0);
    expect(m, `${what}: mean ${m}, sd ${sd}`).toBeGreaterThan((4 * sd) / Math.sqrt(diffs.length));
  };

  // Over 16 steps the difference is about 0.007 with a seed-to-seed spread of 0.005 (seeds 3-6,
  // since candidate-list ties break by a keyed hash rather than by age); six seeds over 24 steps.
  it('switching random -> x-interest raises the echo-chamber index on a homophilous graph', async () => {
    const diffs: number[] = [];
    for (const seed of [3, 4, 5, 6, 7, 8]) {
      const mean = async (ranker: string) => {
        const { world, phases } = await socialWorld(4000, seed, { ranker, inNetwork: 0 });
        const rows = await run(world, phases(), 24);
        const xs = rows.slice(2).map((r) => r.get('echo_chamber_index')!);
        return xs.reduce((a, b) => a + b, 0) / xs.length;
      };
      diffs.push((await mean('x-interest')) - (await mean('random')));
    }
    expectPositive(diffs, 'echo-chamber index, x-interest minus random');
  });

  // With the trending list off, a story travels only through follows and interest clusters, where
  // seeding matters; with it on (the default), the list shows the story to users whoever posted
  // it, and at this small size the seeding effect drowns in that.
  it('a story seeded at hubs reaches a larger cascade than one seeded at leaves', async () => {
    const diffs: number[] = [];
    for (const seed of [6, 7, 8, 9]) {
      const scale = async (seeds: 'hubs' | 'leaves') => {
        const { world, phases } = await socialWorld(4000, seed, { trending: 0 }, { seeds, count: 5 });
        const rows = await run(world, phases(), 8);
        return rows[rows.length - 1].get('story_scale')!;
      };
      diffs.push(Math.log((await scale('hubs')) / (await scale('leaves'))));
    }
    expectPositive(diffs, 'log story scale, hubs over leaves');
  });
});
