/**
 * A study's own ranker, in a plugin file of its own (public API, index.ts):
 *
 *   import { defineRanker } from 'socsim';
 *   export default defineRanker({
 *     name: 'engagement',
 *     doc: 'Likes and reposts per hour of age (a sketch of engagement ranking).',
 *     score: (post) => (post.likes + 2 * post.reposts) / (1 + post.ageHours),
 *   });
 *
 * A run loads it with `--plugin FILE` (or a scenario's or experiment's `plugins` list) and uses
 * it with `--set platform.ranker=engagement` or a setRanker intervention. The plugin's `score`
 * orders each user's feed; the candidates it orders (followees' posts, cluster and trending lists)
 * are those of the bundled ranker named by `candidates` (x-interest by default), whose base
 * scores and lists the other kernels compute as usual. Scoring runs on the CPU, in the worker
 * threads (each imports the plugin's module by its URL): it must be a pure function of what it
 * receives, so that runs are the same bytes at any thread count; with `--backend webgpu` the feed
 * kernel runs on the CPU for this ranker, and the run says so once.
 */
import { z } from 'zod';
import { kernel, type KernelDecl } from '../sim-core/kernel.ts';
import { uniform } from '../sim-core/rng.ts';
import { TOPIC_SCALE } from './recommender.ts';
import { PLUGIN_FEED, feedLoop, topicDot, type PluginFeedArgs } from './kernels.ts';
import { InputError } from '../sim-core/errors.ts';
import { BUNDLED_RANKERS, RANKER_NAMES, addPluginRanker } from './rankerRegistry.ts';

/** A candidate post, as a plugin's score function sees it: plain numbers. */
export interface PostFeatures {
  /** Post id (creation rank: larger is newer). */
  id: number;
  /** Hours since the post was created, at the current step. */
  ageHours: number;
  likes: number;
  dislikes: number;
  /** Reposts (not quotes). */
  reposts: number;
  /** The author's follower count now. */
  authorFollowers: number;
  /** The post's stance in [-1, 1]. */
  stance: number;
  /** Its topic cluster (0 .. topics - 1). */
  topic: number;
  /**
   * Its base score under the `candidates` ranker, rank multiplier (downrank) applied: e.g.
   * x-interest's recency x follower factor. A plugin that wants downranking to work multiplies by
   * it or by its own use of it.
   */
  base: number;
}

/** The user whose feed is being ordered, as a plugin's score function sees it. */
export interface UserFeatures {
  /** Agent id. */
  id: number;
  /** Its opinion in [-1, 1]. */
  opinion: number;
  /** Cosine of its interest vector and the post's topic, from their int8 forms (x-interest's), in [-1, 1]. */
  interest: number;
  /** A uniform draw in [0, 1), keyed by the step, the user and the post: the same on every thread. */
  random: number;
}

/**
 * A feed score (larger ranks higher; ties go to the newer post). It receives the features as two
 * objects that are reused from call to call: read them, never keep them. It must be a pure
 * function of them (no state, no Math.random, no clock) and return a finite number.
 */
export type ScoreFunction = (post: Readonly<PostFeatures>, user: Readonly<UserFeatures>) => number;

export interface RankerDefinition {
  /** The `platform.ranker` name: lowercase letters, digits and dashes, not a bundled ranker's. */
  name: string;
  /** One paragraph: what it orders by, and where the formula comes from (socsim describe shows it). */
  doc: string;
  /** The bundled ranker whose base scores and candidate lists it orders (default x-interest). */
  candidates?: string;
  score: ScoreFunction;
}

/** What defineRanker returns, a plugin module's default export. */
export interface RankerPlugin {
  /** The plugin type (the loader dispatches on it). */
  readonly type: 'ranker';
  readonly name: string;
  readonly doc: string;
  readonly candidates: string;
  readonly score: ScoreFunction;
  /** The feed kernel that calls `score`: worker threads find it here in the plugin's module. */
  readonly kernels: { readonly recommend: KernelDecl<typeof PLUGIN_FEED> };
}

const definition = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'use lowercase letters, digits and dashes'),
  doc: z.string().min(1, 'say in one paragraph what it orders by'),
  candidates: z.enum(RANKER_NAMES as [string, ...string[]]).default('x-interest'),
  score: z.function(),
});

/** The plugin's scorer for the feed kernel: features of (user u, post row r) into `score`. */
function scorer(score: ScoreFunction) {
  const post: PostFeatures = { id: 0, ageHours: 0, likes: 0, dislikes: 0, reposts: 0, authorFollowers: 0, stance: 0, topic: 0, base: 0 };
  const user: UserFeatures = { id: 0, opinion: 0, interest: 0, random: 0 };
  const scale = TOPIC_SCALE * TOPIC_SCALE;
  return (a: PluginFeedArgs, u: number, r: number, uq: Int32Array, base: number): number => {
    const at = r * a.stride;
    const id = a.base + r;
    const author = a.rec[at + 2];
    post.id = id;
    post.ageHours = ((a.now - a.rec[at + 1]) * a.stepSeconds) / 3600;
    post.likes = a.likes[r];
    post.dislikes = a.dislikes[r];
    post.reposts = a.reposts[r];
    post.authorFollowers = a.followers[author];
    post.stance = a.stance[r];
    post.topic = a.cluster[r];
    post.base = base;
    user.id = u;
    user.opinion = a.opinion[u];
    user.interest = topicDot(a, r, uq) / scale;
    // Draw 2^31 + id: apart from the random ranker's draws of the same key, user and post.
    user.random = uniform(a.key, u, 0x80000000 + (id & 0x7fffffff));
    return score(post, user);
  };
}

/** Declares a study's ranker; checks its shape once, at import. */
export function defineRanker(def: RankerDefinition): RankerPlugin {
  const r = definition.safeParse(def);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new Error(`invalid ranker definition${typeof def?.name === 'string' ? ` ${def.name}` : ''}: ${i.path.join('.') || '(top level)'}: ${i.message}`);
  }
  const { name, doc, candidates } = r.data;
  return Object.freeze({ type: 'ranker', name, doc, candidates, score: def.score, kernels: Object.freeze({ recommend: kernel(PLUGIN_FEED, feedLoop(scorer(def.score))) }) });
}

/**
 * Adds a plugin module's ranker (its default export, loaded from `url`; `file` as the user named
 * it) to the registry, with its feed kernel declared under the module's URL, so that worker threads
 * import that module and find the kernel in its default export's `kernels`.
 */
export function addRankerPlugin(def: object, url: string, file: string): void {
  const p = def as Partial<RankerPlugin>;
  const decl = p.kernels?.recommend;
  if (typeof p.name !== 'string' || typeof p.doc !== 'string' || typeof p.candidates !== 'string' || typeof decl?.fn !== 'function') {
    throw new InputError(`plugin ${file}: its default export has type "ranker" but not a ranker's fields; make it with defineRanker({ name, doc, score })`);
  }
  const candidates = BUNDLED_RANKERS.find((r) => r.name === p.candidates);
  if (!candidates) throw new InputError(`plugin ${file}: candidates "${p.candidates}" is not a bundled ranker (${RANKER_NAMES.join(', ')})`);
  const feed = Object.freeze({ name: 'recommend', module: url, spec: PLUGIN_FEED, fn: decl.fn });
  addPluginRanker({ name: p.name, doc: p.doc, candidates, feed, file });
}
