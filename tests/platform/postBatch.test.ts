/**
 * The apply phase's posts written on the threads (postBatch.ts) hold the same rows as addPost
 * writing them one at a time (newPost.ts): every column, the topics, the authors' latest posts and
 * the post-level assignment, for originals, reposts, quotes and comments of labelled, tagged and
 * downranked parents, in more than one chunk, with the table growing and compacting on the way.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { hash, uniform } from '../../sim-core/rng.ts';
import { sharedArray } from '../../sim-core/table.ts';
import { CascadeTracker } from '../../platform/cascades.ts';
import { addPost, treeOf } from '../../platform/newPost.ts';
import { PostBatch } from '../../platform/postBatch.ts';
import { FLAG, KIND, MAX_POST_ID, PostTable, type PostColumn } from '../../platform/posts.ts';
import type { SocialState } from '../../platform/state.ts';
import { StoryTracker } from '../../platform/stories.ts';

const pool = createExecutor(3);
afterAll(() => pool.close());

const D = 4;
const USERS = 5000;
const TOPICS = 3;
const prototypes = Float32Array.from({ length: TOPICS * D }, (_, i) => ((i * 7) % 5) / 5 - 0.4);

function state(firstId = 0): SocialState {
  const posts = new PostTable(D, 1024, firstId).bind(pool);
  posts.latest = sharedArray('i32', USERS).fill(-1);
  return {
    posts,
    cascades: new CascadeTracker(),
    conversations: new CascadeTracker(),
    stories: new StoryTracker(),
    prototypes,
    topics: TOPICS,
    moderation: { assign: { key: 99, kinds: (1 << KIND.original) | (1 << KIND.quote), codes: [1, 2], cumulative: [0.3, 0.7], votes: [1, -1], until: 5, assigned: 0 } },
  } as unknown as SocialState;
}

/** A step's content rows as postContent leaves them: topic, stance and cluster per active row. */
const ROWS = 4000;
const filled = <T extends Float32Array | Uint8Array>(a: T, f: (i: number) => number): T => {
  for (let i = 0; i < a.length; i++) a[i] = f(i);
  return a;
};
const srcTopic = filled(sharedArray('f32', ROWS * D), (i) => (hash(5, i, 0) / 2 ** 32) * 2 - 1);
const srcStance = filled(sharedArray('f32', ROWS), (i) => hash(6, i, 0) / 2 ** 32 - 0.5);
const srcCluster = filled(sharedArray('u8', ROWS), (i) => i % TOPICS);

/** Step 1: originals, some labelled, tagged, downranked, rated (as interventions leave them). */
function seed(s: SocialState): void {
  for (let i = 0; i < 3000; i++) {
    addPost(s, { author: i % USERS, step: 1, kind: KIND.original, parent: -1, stance: srcStance[i], topic: srcTopic, topicOffset: i * D, cluster: srcCluster[i], flags: i % 5 === 0 ? FLAG.story : 0 });
    const c = s.posts.cols;
    const r = s.posts.count - 1;
    if (i % 3 === 0) c.flags[r] |= FLAG.factCheck | FLAG.reported;
    c.veracity[r] = i % 3;
    c.novelty[r] = i / 1000;
    c.tag[r] = i % 4 === 0 ? 1 : 0;
    c.rank[r] = i % 7 === 0 ? 0.5 : 1;
  }
}

/**
 * A step's posts, each (user, kind, parent id or -1, source row), parents among the live posts
 * before the step (reshares of reshares and comments too; a post planned in the same step is not
 * yet a row in the batch).
 */
function plan(s: SocialState, n: number, salt: number): Array<[number, number, number, number]> {
  const out: Array<[number, number, number, number]> = [];
  const lo = s.posts.base + s.posts.first;
  const live = s.posts.nextId - lo;
  for (let i = 0; i < n; i++) {
    const kind = hash(salt, i, 0) % 4;
    out.push([hash(salt, i, 2) % USERS, kind, kind === KIND.original ? -1 : lo + (hash(salt, i, 1) % live), i % ROWS]);
  }
  return out;
}

function columnsOf(s: SocialState): Record<string, number[]> {
  const P = s.posts;
  const out: Record<string, number[]> = {};
  for (const [name, col] of Object.entries(P.cols) as Array<[PostColumn, ArrayLike<number>]>) out[name] = Array.from(col).slice(P.first, P.count);
  out.topic = Array.from(P.topic.subarray(P.first * D, P.count * D));
  out.latest = Array.from(s.posts.latest);
  return out;
}

describe('posts written on the threads (PostBatch)', () => {
  it('hold the rows addPost writes one at a time, in several chunks, across a compaction and a doubling', async () => {
    const one = state();
    const batched = state();
    seed(one);
    seed(batched);
    // Retire 200 rows: the batch's reserve compacts them away before the table doubles.
    for (const s of [one, batched]) s.posts.retire(200, () => {});
    for (const salt of [7, 8]) {
      const part = plan(one, 75_000, salt);
      for (const [u, kind, parent, src] of part) {
        addPost(one, { author: u, step: 2, kind, parent, stance: srcStance[src], topic: kind === KIND.original ? srcTopic : undefined, topicOffset: src * D, cluster: kind === KIND.original ? srcCluster[src] : undefined, flags: 0 });
      }
      const batch = new PostBatch();
      for (const [u, kind, parent, src] of part) {
        if (parent < 0) batch.queue(batched, u, kind, -1, -1, u, 0, srcStance[src], src);
        else {
          const t = treeOf(batched, batched.posts.rowOf(parent), kind);
          batch.queue(batched, u, kind, parent, t.root, t.rootAuthor, t.depth, srcStance[src], -1);
        }
      }
      await batch.write(pool, batched, 2, srcTopic, srcCluster);
      expect(batch.n).toBe(0);
    }
    expect(batched.posts.base).toBe(200);
    expect(batched.posts.base).toBe(one.posts.base);
    expect(batched.posts.capacity).toBe(one.posts.capacity);
    expect(batched.moderation.assign!.assigned).toBe(one.moderation.assign!.assigned);
    expect(one.moderation.assign!.assigned).toBeGreaterThan(10_000);
    const [a, b] = [columnsOf(one), columnsOf(batched)];
    for (const name of Object.keys(a)) {
      const i = a[name].findIndex((v, k) => !Object.is(v, b[name][k]));
      expect(i, `${name}: first difference at ${i}: ${a[name][i]} vs ${b[name][i]}`).toBe(-1);
    }
    // Every kind and parent family took part.
    const kinds = new Set(a.kind);
    expect(kinds.size).toBe(4);
    expect(a.flags.some((f) => (f & FLAG.factCheck) !== 0)).toBe(true);
    expect(a.depth.some((d) => d === 2)).toBe(true);
    // A quote under assignment got its group from its id's draw.
    const r = a.kind.findIndex((k) => k === KIND.quote);
    const x = uniform(99, one.posts.base + one.posts.first + r);
    expect(a.group[r]).toBe(x < 0.3 ? 1 : x < 0.7 ? 2 : 0);
  });

  it('refuses a post past the last Int32 id when it is queued, naming the limit', async () => {
    const s = state(MAX_POST_ID - 1);
    const batch = new PostBatch();
    expect(batch.queue(s, 1, KIND.original, -1, -1, 1, 0, 0, 0)).toBe(MAX_POST_ID - 1);
    expect(batch.queue(s, 2, KIND.original, -1, -1, 2, 0, 0, 0)).toBe(MAX_POST_ID);
    expect(() => batch.queue(s, 3, KIND.original, -1, -1, 3, 0, 0, 0)).toThrow(/too many posts: .*above 2147483647/);
    await batch.write(pool, s, 0, srcTopic, srcCluster);
    expect(Array.from(s.posts.cols.root.subarray(0, 2))).toEqual([MAX_POST_ID - 1, MAX_POST_ID]);
    expect(s.posts.latest[2]).toBe(MAX_POST_ID);
  });
});
