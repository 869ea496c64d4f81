/**
 * The notes phase: Community Notes in the social step (after apply, before update; socialStep.ts).
 * Each step, every active contributor goes through the feed it was shown, in user order and feed
 * order: it rates the notes other contributors wrote on each post (rateNote) and may write one of
 * its own (writesNote); then it is asked to rate `queue` notes drawn from those still needing
 * ratings (as X's contributors are on the Community Notes home page). Every `scoringHours` the notes are scored from all ratings so far, by the
 * bridging matrix factorisation (bridgingScore.ts) or by majority (majorityScore.ts); a post shows
 * a note (FLAG.noted, which the act kernel reads: platform.notes.shown) while one of its notes is
 * rated helpful. Decisions draw from the counter RNG keyed by step, agent and post or note, and the
 * walk is on the main thread in a fixed order, so the files are the same on every thread count and
 * backend (no kernel: contributors are a small share of the active users).
 *
 * Files: note-ratings.arrow and note-status.arrow (appended each step), notes.arrow (one row per
 * note, written when the run ends).
 */
import type { ArrowFileAppender } from '../../sim-core/io/arrowFile.ts';
import { IndexList } from '../../sim-core/indexList.ts';
import type { Phase } from '../../sim-core/phase.ts';
import { hash, keyOf, streamOf } from '../../sim-core/rng.ts';
import { FLAG } from '../posts.ts';
import { announceHostWrites, type SocialState } from '../state.ts';
import { bridgingScore } from './bridgingScore.ts';
import { majorityScore } from './majorityScore.ts';
import { isContributor, noteParams, rateNote, writesNote } from './noteDecisions.ts';
import { STATUS } from './noteStatus.ts';

const NOTHING = new IndexList();

/** Steps between scorings: scoringHours in whole steps, at least 1. */
export function scoringSteps(hours: number, stepSeconds: number): number {
  return Math.max(1, Math.round((hours * 3600) / stepSeconds));
}

export function notesPhase(s: SocialState): Phase {
  const T = s.notes;
  let ratingsFile: ArrowFileAppender | undefined;
  let statusFile: ArrowFileAppender | undefined;
  /** Post ids whose flags a scoring changed (announced to a device executor). */
  const changed = new IndexList();
  return {
    name: 'notes',
    state: s,
    reads: ['opinion'],
    writes: [],
    tables: { reads: ['feeds', 'posts', 'notes'], writes: ['notes', 'posts'] },
    metrics: { notes_written: 'i32', note_ratings: 'i32', notes_shown: 'i32', posts_noted: 'i32' },
    init(world) {
      const n = world.agents.length;
      T.contributors = new Uint8Array(n);
      const key = keyOf(world.seed, streamOf('notes.contributors'), 0);
      for (let a = 0; a < n; a++) T.contributors[a] = isContributor(key, a, s.cfg.notes.contributors) ? 1 : 0;
      if (world.out) {
        ratingsFile = world.out.appender('note-ratings.arrow', T.takeRatings().columns);
        statusFile = world.out.appender('note-status.arrow', T.takeChanges().columns);
      }
    },
    async run(world, ctx) {
      const cfg = s.cfg.notes;
      const P = s.posts;
      const F = s.feeds;
      const users = F.active.length;
      const size = F.size;
      const opinion = world.agents.columns.opinion as Float32Array;
      // The walk reads the feeds, the opinions and the shown posts' stances in plain JavaScript.
      await F.forHost([F.active, { array: F.items, length: users * size }, { array: F.len, length: users }, opinion, { array: P.cols.stance, length: P.count }]);
      const params = noteParams(cfg);
      const keyWrite = ctx.key('notes.write');
      const keyRate = ctx.key('notes.rate');
      const keyAsk = ctx.key('notes.queue');
      const notesBefore = T.notes.count;
      const ratingsBefore = T.ratings.count;
      // The notes contributors are asked to rate this step: those needing ratings at its start, on
      // posts still in the window (a post past it can no longer show a note).
      const pending: number[] = [];
      for (let k = 0; k < notesBefore; k++) if (T.notes.cols.status[k] === STATUS.needsMoreRatings && P.rowOf(T.notes.cols.post[k]) >= 0) pending.push(k);
      const rate = (u: number, x: number, note: number) => {
        if (T.notes.cols.writer[note] === u) return;
        const r = P.rowOf(T.notes.cols.post[note]);
        const value = rateNote(keyRate, u, note, 1, x, P.cols.stance[r], P.cols.veracity[r], params);
        if (value >= 0) T.addRating(u, note, value, ctx.step);
      };
      for (let k = 0; k < users; k++) {
        const u = F.active[k];
        if (T.contributors[u] === 0) continue;
        const x = opinion[u];
        for (let i = 0; i < F.len[k]; i++) {
          const id = F.items[k * size + i];
          const r = P.rowOf(id);
          if (r < 0) continue;
          for (const note of T.byPost.get(id) ?? []) rate(u, x, note);
          if (writesNote(keyWrite, u, id, 1, x, P.cols.stance[r], P.cols.veracity[r], params)) T.addNote(id, u, ctx.step);
        }
        for (let q = 0; q < cfg.queue && pending.length > 0; q++) rate(u, x, pending[hash(keyAsk, u, q) % pending.length]);
      }
      if ((ctx.step + 1) % scoringSteps(cfg.scoringHours, world.stepSeconds) === 0 && T.notes.count > 0) score(ctx.step, ctx.key('notes.score'));
      const ratings = T.takeRatings();
      if (ratings.rows > 0) ratingsFile?.append(ratings.columns, ratings.rows);
      const changes = T.takeChanges();
      if (changes.rows > 0) statusFile?.append(changes.columns, changes.rows);
      ctx.metric('notes_written', T.notes.count - notesBefore);
      ctx.metric('note_ratings', T.ratings.count - ratingsBefore);
      ctx.metric('notes_shown', T.shownNotes);
      ctx.metric('posts_noted', T.notedPosts);
    },
    finish(world) {
      if (!world.out) return;
      const { columns, rows } = T.notesColumns();
      world.out.writeFile('notes.arrow', columns, rows);
    },
  };

  /** Scores every note, logs the status changes, and sets or clears the posts' noted flag. */
  function score(step: number, key: number): void {
    const cfg = s.cfg.notes;
    const count = T.notes.count;
    const ratings = T.ratingColumns();
    let status: Uint8Array;
    let intercept: Float64Array | undefined;
    let factor: Float64Array | undefined;
    if (cfg.scoring === 'bridging') {
      const b = bridgingScore(ratings, T.contributors.length, count, { key, previous: T.statuses() });
      ({ status, noteIntercept: intercept, noteFactor: factor } = b);
    } else {
      status = majorityScore(ratings, count, cfg.majorityThreshold).status;
    }
    const { from, to } = T.applyScores(step, status, intercept, factor);
    const P = s.posts;
    const C = T.notes.cols;
    changed.clear();
    for (let c = from; c < to; c++) {
      const post = C.post[T.changes.cols.note[c]];
      const r = P.rowOf(post);
      if (r < 0) continue;
      const shown = (T.byPost.get(post) ?? []).some((note) => C.status[note] === STATUS.helpful);
      const flags = shown ? P.cols.flags[r] | FLAG.noted : P.cols.flags[r] & ~FLAG.noted;
      if (flags === P.cols.flags[r]) continue;
      P.cols.flags[r] = flags;
      changed.push(post);
    }
    let shownNotes = 0;
    for (let k = 0; k < count; k++) if (C.status[k] === STATUS.helpful) shownNotes++;
    let notedPosts = 0;
    for (const list of T.byPost.values()) if (list.some((note) => C.status[note] === STATUS.helpful)) notedPosts++;
    T.shownNotes = shownNotes;
    T.notedPosts = notedPosts;
    announceHostWrites(s, { posts: changed, latest: NOTHING, followers: NOTHING });
  }
}
