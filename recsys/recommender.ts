/**
 * What a ranker is: its name (`platform.ranker`), its documentation, and how each kernel that
 * scores posts uses it. A ranker lives in one file of recsys/rankers/ (the bundled ones) or in a
 * study's plugin file (defineRanker.ts); rankerRegistry.ts lists them.
 *
 * Scores come in three layers, each computed by the ranker's functions:
 * - the base score of a post (user-independent, recomputed every step for every post in the
 *   window: records.ts keeps it as float32 in the packed post records);
 * - the list score that orders the candidate index's cluster and trending lists (candidates.ts);
 * - the feed score of a post for one user, which orders the feed: one of the feed kernel's
 *   user terms (FEED_TERM) applied to the base score, or a plugin's own function.
 *
 * Contract: the arithmetic, operation order included, is what runs produce; a change to a
 * bundled ranker's functions changes every run's output, so it must be a deliberate one.
 */

/**
 * How the feed kernel turns a post's base score into a user's score (kernels.ts scoreOf; its
 * WGSL twin in gpuKernels.ts):
 * - base: the base score itself (the same order for every user);
 * - hash: (a keyed hash of (user, post) + 1) x the base, both rounded to float32;
 * - interest: the base x the int8 dot product of the user's interest and the post's topic;
 * - plugin: a study's score function (CPU only).
 */
export const FEED_TERM = { base: 0, hash: 1, interest: 2, plugin: 3 } as const;
export type FeedTerm = Exclude<keyof typeof FEED_TERM, 'plugin'>;

/** The post columns a base score reads (the post table's, by row). */
export interface ScoreColumns {
  rank: ArrayLike<number>;
  step: ArrayLike<number>;
  author: ArrayLike<number>;
  likes: ArrayLike<number>;
  dislikes: ArrayLike<number>;
  /**
   * The likes and dislikes by accounts of opinion below 0 (platform/posts.ts): filled only for a
   * ranker whose `bySide` is set, empty otherwise (the webgpu backend then leaves them on the device).
   */
  likes_left: ArrayLike<number>;
  dislikes_left: ArrayLike<number>;
  treat_vote: ArrayLike<number>;
}

/** What a base score may read besides the post's columns. */
export interface ScoreOptions {
  /** The ranker's code (rankerRegistry.ts: its place in the bundled list). */
  ranker: number;
  /** The current step. */
  step: number;
  stepSeconds: number;
  /** x-interest's recency: its time constant and form (RECENCY_CODE). */
  tauHours: number;
  recency: number;
  followers: Int32Array;
  /** Memo of a per-creation-step factor (x-interest's recency); start with step NaN. */
  recencyMemo?: { step: number; value: number };
}

/**
 * WGSL pieces of a ranker, for the webgpu executor's kernels; a ranker without one has that
 * kernel run on the CPU (the same bytes, slower).
 */
export interface RankerWgsl {
  /**
   * Statements of baseScores.wgsl.ts's main that set `d` (a softf64 D) to the base score of row
   * `r` times the rank multiplier, whose f32 bits are `m`, rounded to f64 as the CPU's product is.
   * In scope: `p` (base, first_step, o_recencies, o_factors, factors), `step`, `author`,
   * `followers`, `table(w)`, `missing`.
   */
  base?: string;
  /**
   * An expression of candidateKernels.wgsl.ts's candidateTops for the list key of row `r`
   * (`list_key(f32 bits, u32)`, the f64 product's key). In scope: `rank`, `score` (the base
   * scores' f32 bits), `likes`, `id`, `p.key_lo`, `p.key_hi`.
   */
  listKey?: string;
}

export interface Recommender {
  /** The `platform.ranker` name: lowercase letters, digits and dashes. */
  readonly name: string;
  /** One paragraph: what it orders by, and where the formula comes from. */
  readonly doc: string;
  /**
   * The user-independent score of post row r (`id` is its post id), before the rank multiplier
   * (records.ts applies it); a ranker without one returns 1, and the records then hold the
   * multiplier alone.
   */
  baseScore(c: ScoreColumns, id: number, r: number, o: ScoreOptions): number;
  /**
   * The order of the candidate lists: from the record's base score `base` (rank multiplier
   * applied), the post's id, its rank multiplier m, likes, and the step's key.
   */
  listScore(base: number, id: number, m: number, likes: number, key: number): number;
  /** How the feed kernel scores a candidate for a user, from its base score (FEED_TERM). */
  readonly feed: FeedTerm;
  /**
   * Where out-of-network candidates come from: the topic clusters nearest the user's interests
   * (and trending), or posts drawn uniformly from the window (and trending).
   */
  readonly outOfNetwork: 'clusters' | 'window';
  /** Whether its base score reads the per-side vote counts (ScoreColumns likes_left, dislikes_left). */
  readonly bySide?: boolean;
  readonly wgsl?: RankerWgsl;
}

/** The base score of post row r with its rank multiplier (1 for most posts, which keeps them exact). */
export function rankedBase(R: Recommender, c: ScoreColumns, id: number, r: number, o: ScoreOptions): number {
  const m = c.rank[r];
  const b = R.baseScore(c, id, r, o);
  return m === 1 ? b : b * m;
}

/**
 * Post topics are stored as int8 round(TOPIC_SCALE x component) (quantise), and so are the users'
 * interests the feed kernel reads: their dot product is TOPIC_SCALE^2 x the cosine.
 */
export const TOPIC_SCALE = 127;

/** A unit vector's component as int8: round(TOPIC_SCALE x x), x clamped to [-1, 1]. */
export function quantise(x: number): number {
  return Math.round(TOPIC_SCALE * Math.max(-1, Math.min(1, x)));
}
