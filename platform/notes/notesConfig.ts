/**
 * Community Notes' parameters: who writes and rates notes, how raters judge them, how often they are
 * scored, and what a shown note does to resharing and liking. Opinions and stances are in [-1, 1].
 * Where a default is a published figure its source is beside it; where none is published the
 * comment says so and the default is a neutral value of a free parameter, not a calibration.
 */
import { z } from 'zod';
import { InputError } from '../../sim-core/errors.ts';
import { MAJORITY_THRESHOLD } from './majorityScore.ts';

export const notesConfig = z.strictObject({
  enabled: z.boolean().default(false).describe('write, rate, score and show Community Notes'),
  /**
   * bridging: the matrix factorisation X publishes (bridgingScore.ts); majority: the mean rating
   * (majorityScore.ts), for comparison.
   */
  scoring: z.enum(['bridging', 'majority']).default('bridging').describe('how notes are scored: bridging (matrix factorisation) or majority (mean rating)'),
  /**
   * Share of accounts enrolled as contributors (they write and rate notes). X told the Canadian
   * House of Commons ethics committee of 800,000 contributors (44th Parliament, ETHI meeting 135),
   * and announced about 1 million in 2025 (press reports), against about 600 million monthly users
   * X claims (its own figure, not independently checked): 0.13% to 0.17%. A small population may
   * need more contributors to rate enough notes; that is a choice of the study.
   */
  contributors: z.number().min(0).max(1).default(0.0015).describe('share of accounts that are Community Notes contributors (write and rate notes)'),
  /**
   * Probability that a contributor writes a note on a post it is shown. No per-impression rate is
   * published: a free parameter.
   */
  write: z.number().min(0).max(1).default(0.01).describe('probability that a contributor writes a note on a post it is shown'),
  /**
   * Multiplier on `write` for posts known false. Most notes flag posts as misleading (Pröllochs,
   * "Community-based fact-checking on Twitter's Birdwatch platform", ICWSM 2022), but how much more
   * often a false post draws a note than a true one depends on how many posts are false, so no
   * multiplier is published: a free parameter, neutral by default.
   */
  falseMultiplier: z.number().min(0).default(1).describe('multiplier on the writing probability for false posts'),
  /**
   * Partisan writing: `write` x exp(partisan (|opinion - stance| - 1)), more notes on posts whose
   * stance is far from the writer's opinion. Allen, Martel and Rand (CHI 2022, "Birds of a feather
   * don't fact-check each other") found contributors flag counter-partisans' posts more often; no
   * coefficient on this scale is published: a free parameter, off by default.
   */
  partisan: z.number().min(0).default(0).describe('writing probability x exp(partisan (|opinion - post stance| - 1)): more notes on opposed posts'),
  /**
   * Probability that a contributor rates a note on a post it is shown (the note is among those
   * still needing ratings, or shown). No per-impression rate is published: a free parameter.
   */
  rate: z.number().min(0).max(1).default(0.1).describe('probability that a contributor rates a note on a post it is shown'),
  /**
   * Notes still needing ratings that each active contributor is asked to rate per step besides
   * those on its feed (X asks contributors to rate notes that need ratings on the Community Notes
   * home page, not only under posts they come across: ranking-notes guide). The requests are drawn
   * uniformly from those notes; each is rated with probability `rate`. No per-session count is
   * published: a free parameter.
   */
  queue: z.number().int().min(0).max(100).default(3).describe('notes needing ratings that each active contributor is asked to rate per step (each rated with probability rate)'),
  /**
   * How a rater judges a note (which says its post is misleading): with z = base + veracity v +
   * stance (|opinion - post stance| - 1), v = +1 for a false post, -1 for a true one, 0 unrated, the
   * rating is Yes with probability sigmoid(z - somewhat), No with probability 1 - sigmoid(z +
   * somewhat), else Somewhat (an ordered logit). Published work shows raters judge notes on posts
   * they agree with as less helpful (Allen, Martel and Rand 2022) but gives no coefficients on this
   * scale: all four are free parameters (unit log-odds by default).
   */
  helpfulness: z
    .strictObject({
      base: z.number().default(0).describe('log-odds of a Yes at a neutral rater on an unrated post'),
      veracity: z.number().default(1).describe('log-odds added for a false post, taken away for a true one'),
      stance: z.number().default(1).describe('log-odds per unit of |rater opinion - post stance| above 1'),
      somewhat: z.number().min(0).default(0.5).describe('half-width of the Somewhat band in log-odds (0: only Yes and No)'),
    })
    .default({ base: 0, veracity: 1, stance: 1, somewhat: 0.5 })
    .describe('how raters judge a note: an ordered logit on veracity and on their distance from the post'),
  /**
   * Hours between scorings. X's matrix factorisation "is re-trained from scratch every hour"
   * (ranking-notes guide, Matrix Factorization), and every note waits at least 30 minutes before it
   * can show (guide, Supervised Confidence Modeling): 1.
   */
  scoringHours: z.number().positive().default(1).describe('hours between scorings (X scores every hour)'),
  /** majority scoring's share of helpful ratings for a shown note: a free parameter (majorityScore.ts). */
  majorityThreshold: z.number().gt(0.5).max(1).default(MAJORITY_THRESHOLD).describe('majority scoring: mean rating at which a note is shown'),
  /**
   * Multipliers on resharing and liking a post with a shown note. Slaughter, Peytavin, Ugander and
   * Saveski ("Community notes reduce engagement with and diffusion of false information online",
   * PNAS 2025, 122(38):e2503413122; synthetic controls on 40,078 posts) estimate 46.1% fewer
   * reposts and 44.1% fewer likes after a note is attached: 0.539 and 0.559.
   */
  shown: z
    .strictObject({
      reshare: z.number().min(0).default(0.539).describe('reshare (repost, quote) probability multiplier on a post with a shown note'),
      like: z.number().min(0).default(0.559).describe('like probability multiplier on a post with a shown note'),
    })
    .default({ reshare: 0.539, like: 0.559 })
    .describe('what a shown note does to resharing and liking its post (Slaughter et al. 2025)'),
});
export type NotesConfig = z.output<typeof notesConfig>;

/** The field names of the object at `path` inside notesConfig (defaults unwrapped). */
function fieldsAt(path: readonly PropertyKey[]): string[] {
  const unwrap = (t: z.ZodType): z.ZodType => (t instanceof z.ZodDefault ? unwrap(t.unwrap() as z.ZodType) : t);
  let at: z.ZodType = notesConfig;
  for (const k of path) at = (unwrap(at) as z.ZodObject).shape[String(k)];
  return Object.keys((unwrap(at) as z.ZodObject).shape);
}

/**
 * Parses `input` (undefined: the defaults); bad input throws an InputError of one line naming the
 * field by its path from `prefix` (where the caller's parameters hold the notes settings).
 */
export function parseNotesConfig(input: unknown, prefix = 'notes'): NotesConfig {
  const r = notesConfig.safeParse(input ?? {});
  if (r.success) return r.data;
  const i = r.error.issues[0];
  const at = [prefix, ...i.path.map(String)].join('.');
  if (i.code === 'unrecognized_keys') throw new InputError(`unknown field ${at}.${i.keys[0]}; fields: ${fieldsAt(i.path).join(', ')}`);
  throw new InputError(`${at}: ${i.message}; set it with --set ${at}=VALUE`);
}
