import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { InputError } from '../../sim-core/errors.ts';
import { runStep, type World } from '../../sim-core/phase.ts';
import { heuristicBehaviour } from '../../platform/behaviour.ts';
import { KIND, MAX_DEPTH, MAX_POST_ID, PostTable } from '../../platform/posts.ts';
import { socialStep } from '../../platform/socialStep.ts';
import { createSocialState, socialConfig } from '../../platform/state.ts';
import { buildSociety } from '../../population/buildSociety.ts';
import { ACTIVITY_TIERS } from '../../population/synthesize.ts';
import { recommendPhase } from '../../recsys/recommend.ts';

const exec = createExecutor(1);
afterAll(() => exec.close());

const topic = new Float32Array(4).fill(0.5);
const original = (author: number, depth = 0) => ({ author, step: 0, kind: KIND.original, parent: -1, root: -1, rootAuthor: author, depth, stance: 0, cluster: 0, flags: 0, prevByAuthor: -1 });

describe('post ids (Int32)', () => {
  it('the last Int32 id is used, the next post fails with a one-line InputError and changes nothing', () => {
    const t = new PostTable(4, 2, MAX_POST_ID - 1);
    expect(t.add(original(1), topic)).toBe(MAX_POST_ID - 1);
    expect(t.add(original(2), topic)).toBe(MAX_POST_ID);
    // The largest id survives the Int32 columns: the root of an original is its own id.
    expect(t.cols.root[1]).toBe(MAX_POST_ID);
    expect(Array.from(t.columns(2)[0].values as Int32Array)).toEqual([MAX_POST_ID - 1, MAX_POST_ID]);
    const fail = () => t.add(original(3), topic);
    expect(fail).toThrow(InputError);
    expect(fail).toThrow(/^too many posts: post 2147483649 would need id 2147483648, above 2147483647 \(2\^31 - 1\).*run fewer --steps or --agents/);
    expect(fail).not.toThrow(/\n/);
    expect(t.count).toBe(2);
    expect(t.nextId).toBe(MAX_POST_ID + 1);
    // Retiring rows does not free ids: they are creation ranks.
    t.retire(2, () => {});
    expect(fail).toThrow(/too many posts/);
  });

  it('a reshare depth past the u16 depth column fails instead of wrapping', () => {
    const t = new PostTable(4);
    expect(t.add(original(1, MAX_DEPTH), topic)).toBe(0);
    expect(t.cols.depth[0]).toBe(MAX_DEPTH);
    expect(() => t.add(original(1, MAX_DEPTH + 1), topic)).toThrow(/reshare depth 65536 is above 65535/);
    expect(t.count).toBe(1);
  });

  it('a social run that reaches the id limit shows the last ids in feeds, then stops with the error', async () => {
    const society = await buildSociety(exec, { agents: 2000, seed: 2, graph: { kind: 'homophilous', meanFollowing: 20, homophily: 0.8 } });
    const behaviour = heuristicBehaviour({ ageBands: 6, leaningCentres: [-1, -0.5, 0, 0.5, 1], tiers: ACTIVITY_TIERS.length });
    const world: World = { agents: society.agents, graph: society.graph, exec, seed: 2, stepSeconds: 3600 };
    const s = createSocialState(world, socialConfig.parse({ startHour: 12 }), behaviour, society.prototypes, 64);
    // The run's post table, started 200 ids below the limit.
    s.posts = Object.assign(new PostTable(s.posts.dim, 1 << 10, MAX_POST_ID - 200).bind(exec), { latest: s.posts.latest });
    const phases = socialStep(s, { recommend: recommendPhase(s) });
    for (const p of phases) await p.init?.(world);
    let maxShown = -1;
    let error: unknown;
    for (let t = 0; t < 100 && !error; t++) {
      try {
        await runStep(world, phases, t);
      } catch (err) {
        error = err;
      }
      for (const id of s.feeds.items.subarray(0, s.feeds.active.length * s.cfg.feedSize)) maxShown = Math.max(maxShown, id);
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toMatch(/^too many posts/);
    // Every id up to the limit was handed out, and ids near it were ranked and shown.
    expect(s.posts.nextId).toBe(MAX_POST_ID + 1);
    expect(maxShown).toBeGreaterThan(MAX_POST_ID - 150);
    expect(Array.from(s.posts.latest)).toContain(MAX_POST_ID);
  });
});

describe('the window of rows', () => {
  it('rows read as a plain list through retires and growth', () => {
    const D = 4;
    const t = new PostTable(D, 64);
    let grows = 0;
    let retired = 0;
    let compactions = 0;
    let most = 0;
    let cap = t.capacity;
    const sunk: number[] = [];
    // Bursts of posts of varying size, then the oldest rows retired: the window grows, then holds.
    for (let round = 0; round < 200; round++) {
      const add = round < 40 ? 7 + (round % 5) : 3 + (round % 9);
      for (let i = 0; i < add; i++) {
        const id = t.nextId;
        t.add({ ...original(id % 1000), stance: id / 8, cluster: id % 7, likes: 0 } as never, [id, -id, id + 0.5, 1], 0);
        if (t.capacity !== cap) grows++;
        cap = t.capacity;
        t.cols.likes[t.count - 1] = 3 * id;
        most = Math.max(most, t.count);
      }
      const drop = round < 40 ? 2 : Math.max(0, t.live - 60);
      t.retire(t.first + drop, (cols, rows) => sunk.push(...Array.from(cols[0].values as Int32Array).slice(0, rows)));
      retired += drop;
      compactions += t.first === 0 ? 1 : 0;
      expect(t.first * 4).toBeLessThan(Math.max(1, t.live));
      for (let r = t.first; r < t.count; r++) {
        const id = t.base + r;
        if (t.cols.author[r] !== id % 1000 || t.cols.likes[r] !== 3 * id || t.cols.cluster[r] !== id % 7 || t.cols.stance[r] !== Math.fround(id / 8)) throw new Error(`round ${round}: row ${r} (id ${id}) holds another post`);
        if (t.topic[r * D] !== id || t.topic[r * D + 1] !== -id || t.topic[r * D + 3] !== 1) throw new Error(`round ${round}: topic of row ${r} (id ${id})`);
      }
    }
    expect(t.base + t.first).toBe(retired);
    expect(sunk).toEqual(Array.from({ length: retired }, (_, i) => i));
    // Retired rows stay until they are a quarter of the live ones; ids and rows still agree after.
    expect(compactions).toBeGreaterThan(10);
    expect(compactions).toBeLessThan(200);
    expect(t.rowOf(retired - 1)).toBe(-1);
    expect(t.rowOf(retired)).toBe(t.first);
    // The buffers grew while the window did, and not past twice its largest size.
    expect(grows).toBeGreaterThan(0);
    expect(t.capacity).toBeLessThan(2 * most);
  });
  it('the apply phase hands the columns a growth replaced back at once', async () => {
    const society = await buildSociety(exec, { agents: 3000, seed: 3, graph: { kind: 'homophilous', meanFollowing: 20, homophily: 0.8 } });
    const behaviour = heuristicBehaviour({ ageBands: 6, leaningCentres: [-1, -0.5, 0, 0.5, 1], tiers: ACTIVITY_TIERS.length });
    const world: World = { agents: society.agents, graph: society.graph, exec, seed: 3, stepSeconds: 3600 };
    const s = createSocialState(world, socialConfig.parse({ startHour: 12 }), behaviour, society.prototypes, 64);
    s.posts = Object.assign(new PostTable(s.posts.dim, 16).bind(exec), { latest: s.posts.latest });
    const phases = socialStep(s, { recommend: recommendPhase(s) });
    for (const p of phases) await p.init?.(world);
    const old = new WeakRef(s.posts.cols.likes);
    const oldTopic = new WeakRef(s.posts.topic);
    await runStep(world, phases, 0);
    expect(s.posts.capacity).toBeGreaterThan(16);
    // Cleared by the phase that grew it, after releasing the old buffers (not at a later collection).
    expect(s.posts.grew).toBe(false);
    await new Promise((r) => setImmediate(r));
    expect(old.deref()).toBeUndefined();
    expect(oldTopic.deref()).toBeUndefined();
  });
});
