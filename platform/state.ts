/**
 * The social platform's configuration and its state next to the agent table: the named tables the
 * phases share (posts, behaviour, feeds, events, readers, follows, moderation, cascades, stories;
 * tables.ts). The recommender (recsys/) fills the feeds.
 */
import { z } from 'zod';
import { sharedArray } from '../sim-core/table.ts';
import { bindTables, type Written } from '../sim-core/stateTable.ts';
import type { World } from '../sim-core/phase.ts';
import { BEHAVIOUR_PARAMS, type BehaviourTable } from './behaviour.ts';
import { PostTable } from './posts.ts';
import { EventTable, FeedTable, FollowTable, ModerationTable, ReaderTable } from './tables.ts';
import { notesConfig } from './notes/notesConfig.ts';
import { NotesTable } from './notes/notesTable.ts';
import { CascadeTracker } from './cascades.ts';
import { StoryTracker } from './stories.ts';
import { maxEventsFor } from './events.ts';

export const socialConfig = z
  .strictObject({
    feedSize: z.number().int().min(1).max(64).default(10).describe('items per feed'),
    inNetwork: z.number().int().min(0).default(5).describe('at most this many feed items come from followed accounts; the rest from out-of-network'),
    /**
     * The feed's ranker, by name. The rankers are recsys/'s (its ranker registry, which a study's
     * plugins extend), a layer above this one: the scenario checks the name against it
     * (recsys/rankerRegistry.ts rankerName).
     */
    ranker: z.string().min(1).default('x-interest').describe('how feeds are ordered: a ranker by name (bundled: chronological, random, reddit-hot, x-interest, bridging; plugins add more)'),
    recency: z.enum(['exp', 'oasis']).default('exp').describe("x-interest recency: exp(-age/tauHours), or OASIS's ln((271.8 - age)/100) clipped at 0"),
    tauHours: z.number().positive().default(6).describe('x-interest recency time scale in hours (recency exp)'),
    windowHours: z.number().positive().default(48).describe('posts older than this leave the candidates (and memory) and go to posts.arrow'),
    /**
     * In-network candidates: newest posts per followee, and followees scanned per session (a
     * window that rotates every step, like a platform sampling its in-network source; 0 scans
     * every followee, as a timeline of followed accounts does).
     */
    perAuthor: z.number().int().min(1).max(16).default(2).describe('in-network candidates: newest posts kept per followed account'),
    maxScan: z.number().int().min(0).default(32).describe('in-network candidates: followed accounts scanned per session, a window rotating every step (0: all)'),
    /**
     * Out-of-network: clusters probed per user, posts kept per cluster, trending list length.
     * perCluster 0 and trending 0 leave no out-of-network candidates: a timeline of followed
     * accounts only, as on Twitter before its 2016 algorithmic timeline (with the chronological
     * ranker: the reverse-chronological timeline the classic diffusion studies measured).
     */
    probe: z.number().int().min(1).max(8).default(3).describe('out-of-network candidates: interest clusters probed per user'),
    perCluster: z.number().int().min(0).max(256).default(16).describe('out-of-network candidates: posts kept per interest cluster (0: none)'),
    trending: z.number().int().min(0).max(1024).default(20).describe('out-of-network candidates: length of the trending list (0: none)'),
    seenSize: z.number().int().min(1).max(64).default(16).describe('recent impressions remembered per user (the already-seen filter)'),
    backfireDistance: z.number().min(0).max(2).default(1).describe("content farther than this from a user's opinion pushes it away (backfire), where backfire is on"),
    rebuildEvery: z.number().int().min(1).default(24).describe('follows and unfollows take effect when the graph is rebuilt, every this many steps'),
    /**
     * Original posts per session are min(1, post x (activity / median activity)^postExponent):
     * more active users post more per session, not only in more sessions. 1 with the population's
     * default activity levels matches Pew's 2019 Twitter figures (population/synthesize.ts): with
     * 0, the most active 10% write ~60% of posts instead of 80%.
     */
    postExponent: z.number().min(0).max(4).default(1).describe('original posts per session: min(1, post x (activity / median activity)^postExponent)'),
    /**
     * Attention to an item decays with its age t in hours: every per-item action probability is
     * x exp(-scale x t^exponent). Defaults: Wu and Huberman ("Novelty and collective attention",
     * PNAS 2007, 104:17599) fit the decay of attention to Digg stories with this stretched
     * exponential, scale 0.4 and exponent 0.4 (time in hours; half-life about 69 minutes). scale 0
     * turns it off.
     */
    attention: z
      .strictObject({
        scale: z.number().min(0).default(0.4).describe('attention decay scale (0: no decay)'),
        exponent: z.number().positive().max(2).default(0.4).describe('attention decay exponent on the age in hours'),
      })
      .default({ scale: 0.4, exponent: 0.4 })
      .describe('every per-item action probability x exp(-scale x age^exponent), age in hours (Wu and Huberman 2007)'),
    behaviour: z
      .partialRecord(z.enum(BEHAVIOUR_PARAMS), z.number().nonnegative())
      .default({})
      .describe(`multipliers on the heuristic behaviour parameters, e.g. {"post": 2}; keys: ${BEHAVIOUR_PARAMS.join(', ')}`),
    startHour: z.number().int().min(0).max(23).default(0).describe("hour of the day (0-23) at which the run's clock starts"),
    reportThreshold: z.number().int().min(1).default(5).describe('reports at which a post gets the reported flag'),
    /**
     * Multipliers on the probabilities of reacting to a labelled (fact-checked) or much-reported
     * post. Defaults from Martel and Rand's meta-analysis of 21 warning-label experiments (Nature
     * Human Behaviour 2024, 8:1957-1967): labels cut sharing of false headlines by 24.7% (reshare
     * 0.75) and belief in them by 27.6% (like 0.72, belief standing in for approval). Reports: no
     * published figure, so no effect by default (1).
     */
    labels: z
      .strictObject({
        reshare: z.number().min(0).default(0.75).describe('reshare (repost, quote) probability multiplier on a labelled or reported post'),
        like: z.number().min(0).default(0.72).describe('like probability multiplier on a labelled or reported post'),
        report: z.number().min(0).default(1).describe('report probability multiplier on a labelled or reported post'),
      })
      .default({ reshare: 0.75, like: 0.72, report: 1 })
      .describe('multipliers on reacting to a post labelled (fact-checked) or reported (reportThreshold reached); Martel and Rand 2024'),
    /**
     * Votes: likes are up-votes and dislikes down-votes; the displayed score is likes - dislikes +
     * a treatment's artificial vote. With g = clamp(score / scale, -1, 1): P(up-vote) x (1 + herding
     * max(g, 0) + correction max(-g, 0)) and P(down-vote) x (1 + herding max(-g, 0)).
     * herding 0.32: Muchnik, Aral and Taylor (Science 2013, 341:647) measured that one positive
     * vote raised the next rater's probability of a positive rating by 32%; the response to larger
     * scores was not measured, so it saturates at |score| >= scale (1). correction 0.32: they report
     * that a negative score drew more positive votes as well as more negative ones; the two
     * probabilities are not published separately, so correction is set equal to herding (an
     * assumption: the down-vote result of experiments/herding.ts depends on it).
     */
    votes: z
      .strictObject({
        herding: z.number().min(0).default(0.32).describe('vote herding: relative rise of a vote in the direction of the score (Muchnik et al. 2013)'),
        correction: z.number().min(0).default(0.32).describe('relative rise of up-votes on a negative score'),
        scale: z.number().positive().default(1).describe('score at which the herding effect saturates'),
      })
      .default({ herding: 0.32, correction: 0.32, scale: 1 })
      .describe('likes are up-votes, dislikes down-votes; the displayed score sways the next votes'),
    /**
     * Reshare (repost, quote) probability x exp(noveltyWeight x novelty), novelty in standard
     * deviations above ordinary content (organic posts: 0). ln(1.14): Berger and Milkman (Journal of
     * Marketing Research 2012, 49:192) found one standard deviation more surprise raises the odds
     * of an article being among the most shared by 14%.
     */
    noveltyWeight: z.number().min(0).default(Math.log(1.14)).describe('reshare probability x exp(noveltyWeight x novelty), novelty in standard deviations (Berger and Milkman 2012)'),
    /**
     * Social statistics: shown (the default), or hidden, one of the prosocial interventions Larooij
     * and Tornberg (arXiv 2508.03385, 2025) test ("hiding social statistics"). Hidden, an item's
     * counts no longer sway reactions to it: no social proof from likes and reposts (SOCIAL_PROOF
     * in platform/kernels.ts) and no herding or correction from its displayed score (votes). The
     * counts are still kept, and rankers still use them; who-to-follow still ranks candidates by
     * follower count (the platform's suggestion, not a number the user weighs). setParam
     * platform.counts switches it from a step on.
     */
    counts: z.enum(['shown', 'hidden']).default('shown').describe('social statistics (like, repost counts and vote scores): shown, or hidden so they no longer sway reactions (Larooij and Tornberg 2025)'),
    /**
     * Feed score multiplier on out-partisan posts, whose stance is on the other side of 0 from the
     * reader's opinion (recsys/prosocial.ts; a negative score is divided by it): 1, the default,
     * leaves feeds as they are. "Boosting out-partisan content", one of the prosocial interventions
     * Larooij and Tornberg (arXiv 2508.03385, 2025) test; they give no multiplier, so a study
     * chooses one (e.g. 2). At most 1000, which keeps every ranker's scores finite in float32. With
     * the webgpu backend the feed kernel runs on the CPU while it is not 1. setParam
     * platform.outPartisan switches it from a step on.
     */
    outPartisan: z.number().positive().max(1000).default(1).describe("feed score multiplier on posts whose stance is on the other side of the reader's opinion (1: off; Larooij and Tornberg 2025)"),
    /**
     * Downranking dominant voices, one of the prosocial interventions Larooij and Tornberg (arXiv
     * 2508.03385, 2025) test: the feed score of a post by one of the top `share` of accounts by
     * follower count (recomputed every step) x `factor` (recsys/prosocial.ts; a negative score is
     * divided by it). factor 1, the default, is off. share 0.1: the size of the "small elite" their
     * baseline platform forms (about a tenth of the accounts holding about three quarters of the
     * followers, as summaries of the paper report it; its tables were not at hand). With the
     * webgpu backend the feed kernel runs on the CPU while factor is not 1. setParam
     * platform.dominant.factor switches it from a step on.
     */
    dominant: z
      .strictObject({
        share: z.number().gt(0).max(1).default(0.1).describe('the top share of accounts by follower count whose posts are downranked'),
        factor: z.number().min(0).max(1).default(1).describe("feed score multiplier on their posts (1: off; 0 puts them last)"),
      })
      .default({ share: 0.1, factor: 1 })
      .describe('downranking dominant voices: posts of the most-followed accounts get a feed score multiplier (off at factor 1; Larooij and Tornberg 2025)'),
    /** Community Notes: crowd-written notes, scored by X's bridging algorithm (notes/). Off by default. */
    notes: notesConfig.prefault({}).describe('Community Notes: who writes and rates notes, how they are scored, what a shown note does (off by default)'),
  })
  .superRefine((c, ctx) => {
    if (c.inNetwork > c.feedSize) {
      ctx.addIssue({ code: 'custom', path: ['inNetwork'], message: `in-network count ${c.inNetwork} is larger than feedSize ${c.feedSize}; lower inNetwork or raise feedSize` });
    }
  });
export type SocialConfig = z.output<typeof socialConfig>;

/**
 * The social platform's state: set-up constants (cfg, topic prototypes) and the named tables the
 * phases declare (Phase.tables; sim-core/stateTable.ts). Every field that is a table is bound to
 * the world's executor at creation.
 */
export interface SocialState {
  cfg: SocialConfig;
  /** Topic cluster centres (topics x dim) and their number. */
  prototypes: Float32Array;
  topics: number;
  posts: PostTable;
  behaviour: BehaviourTable;
  feeds: FeedTable;
  events: EventTable;
  readers: ReaderTable;
  follows: FollowTable;
  moderation: ModerationTable;
  /** Reshare cascades (reposts and quotes) and conversations (comments), newPost.ts. */
  cascades: CascadeTracker;
  conversations: CascadeTracker;
  /** Injected stories and their reach (stories.ts), and the scenario story's seed accounts. */
  stories: StoryTracker;
  /** Community Notes, their ratings and status changes (empty unless cfg.notes.enabled). */
  notes: NotesTable;
}

/**
 * Rows per chunk for per-active-user kernels (feeds, actions, exposure): each row is microseconds
 * of work, so chunks are small enough to spread a 10%-active step over every thread.
 */
export const USER_CHUNK = 2048;

export function windowSteps(cfg: SocialConfig, stepSeconds: number): number {
  return Math.max(1, Math.ceil((cfg.windowHours * 3600) / stepSeconds));
}

export function createSocialState(world: World, cfg: SocialConfig, behaviour: BehaviourTable, prototypes: Float32Array, topics: number): SocialState {
  const n = world.agents.length;
  const dim = prototypes.length / topics;
  const followers = sharedArray('i32', n);
  const F = world.graph.followers.offsets;
  for (let v = 0; v < n; v++) followers[v] = F[v + 1] - F[v];
  const posts = new PostTable(dim);
  posts.latest = sharedArray('i32', n).fill(-1);
  behaviour.activityRef = medianActivity(world.agents.columns.activity as Float32Array);
  const s: SocialState = {
    // A copy: interventions change it during the run, and the manifest records the parameters given.
    cfg: structuredClone(cfg),
    prototypes,
    topics,
    posts,
    behaviour,
    feeds: new FeedTable(n, cfg.feedSize),
    events: new EventTable(maxEventsFor(cfg.feedSize)),
    readers: new ReaderTable(n, cfg.probe, cfg.seenSize),
    follows: new FollowTable(followers),
    moderation: new ModerationTable(n),
    cascades: new CascadeTracker(),
    conversations: new CascadeTracker(),
    stories: new StoryTracker(),
    notes: new NotesTable(),
  };
  bindTables(s, world.exec);
  return s;
}

/**
 * The median of the activity column, from an evenly strided sample of at most 100,001 rows (exact
 * below that): cheap at 10M agents, and a pure function of the column.
 */
export function medianActivity(activity: Float32Array): number {
  const n = activity.length;
  if (n === 0) return 1;
  const m = Math.min(n, 100_001);
  const sample = new Float32Array(m);
  for (let i = 0; i < m; i++) sample[i] = activity[Math.floor((i * n) / m)];
  sample.sort();
  const med = sample[m >> 1];
  return med > 0 ? med : 1;
}

/** Grows the per-active-user buffers (feeds, events) to hold `active` users. */
export function reserveActive(s: SocialState, active: number): void {
  if (s.feeds.holds(active)) return;
  const cap = Math.max(1024, Math.ceil(active * 1.25));
  s.feeds.reserve(cap);
  s.events.reserve(cap);
}

/** The kernel arguments every per-active-user kernel shares: who is active and what it was shown. */
export function feedArgs(s: SocialState) {
  const f = s.feeds;
  return { active: f.active, feed: f.items, feedFlags: f.flags, feedLen: f.len, feedSize: f.size, base: s.posts.base };
}

/**
 * What a phase wrote besides the post rows it added or moved (which PostTable.takeChanged knows):
 * the changing columns of older live posts (indices are post ids, which a compaction does not
 * change, unlike rows), authors' latest posts and follower counts (indices are users), and the
 * slots of the mute set (none when absent: only apply mutes).
 */
export interface HostWrites {
  posts: Written;
  latest: Written;
  followers: Written;
  mutes?: Written;
  /**
   * The last rows added whose topics a kernel wrote (apply's writeTopics), not the host; when
   * nonzero, the writer announced the topics of the rows added before them (postBatch.ts).
   */
  kernelTopics?: number;
}

const ANY: HostWrites = { posts: 'any', latest: 'any', followers: 'any' };

/**
 * Tells the tables what a phase wrote in plain JavaScript, so that an executor that keeps device
 * copies (sim-core/gpu/executor.ts) uploads only that before the next kernel: the post table's
 * changes (PostTable.announceChanges), and what `wrote` says of the rest (by default, any live
 * row of the changing columns and any author's latest post and follower count). Phases that write
 * any of these on the host call it before the next kernel: apply (which lists the rows and users
 * it touched), maintain (compaction, the follower counts of a rebuilt graph) and the interventions.
 */
export function announceHostWrites(s: SocialState, wrote: HostWrites = ANY): void {
  const P = s.posts;
  P.announceChanges(wrote.posts, wrote.kernelTopics);
  if (!P.onDevice) return;
  P.wroteWhere(P.latest, wrote.latest);
  const f = s.follows;
  f.wroteWhere(f.followers, wrote.followers);
  if (wrote.mutes) for (const keys of [f.mutes.keysA, f.mutes.keysB]) f.wroteWhere(keys, wrote.mutes);
}
