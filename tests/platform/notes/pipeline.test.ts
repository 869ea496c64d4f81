/**
 * The notes pieces together, as the social step will use them: contributors on two sides rate
 * notes with rateNote, the NotesTable keeps the ratings, bridgingScore and majorityScore score them
 * and applyScores logs the changes.
 */
import { describe, expect, it } from 'vitest';
import { bridgingScore } from '../../../platform/notes/bridgingScore.ts';
import { majorityScore } from '../../../platform/notes/majorityScore.ts';
import { noteParams, rateNote } from '../../../platform/notes/noteDecisions.ts';
import { NotesTable } from '../../../platform/notes/notesTable.ts';
import { parseNotesConfig } from '../../../platform/notes/notesConfig.ts';
import { STATUS } from '../../../platform/notes/noteStatus.ts';
import { VERACITY } from '../../../platform/posts.ts';
import { uniform } from '../../../sim-core/rng.ts';

const A = 2000;
const P = 200;
/** Post q: stance +0.8 or -0.8 (q % 4 < 2), false when q is odd; contributor a: opinion +0.8 (odd) or -0.8. */
const stance = (q: number) => (q % 4 < 2 ? 0.8 : -0.8);
const veracity = (q: number) => VERACITY.indexOf(q % 2 ? 'false' : 'true');

/** One note per post, rated by every contributor but its writer with rateNote under `helpfulness`. */
function rated(helpfulness: object): NotesTable {
  const p = noteParams(parseNotesConfig({ rate: 0.1, helpfulness }));
  const t = new NotesTable();
  for (let q = 0; q < P; q++) t.addNote(q, Math.floor(uniform(1, q) * A), 0);
  for (let a = 0; a < A; a++) {
    for (let n = 0; n < P; n++) {
      if (t.notes.cols.writer[n] === a) continue;
      const v = rateNote(2, a, n, 1, a % 2 ? 0.8 : -0.8, stance(n), veracity(n), p);
      if (v >= 0) t.addRating(a, n, v, 1);
    }
  }
  return t;
}

/** Notes of each status among posts with `odd` parity (false posts: 1, true posts: 0). */
function count(status: Uint8Array, odd: number): number[] {
  const c = [0, 0, 0];
  for (let n = 0; n < P; n++) if (n % 2 === odd) c[status[n]]++;
  return c;
}

describe('notes pipeline', () => {
  it('shows notes on false posts and no note on a true post when raters judge by veracity', () => {
    const t = rated({ veracity: 3, stance: 1 });
    const b = bridgingScore(t.ratingColumns(), A, P);
    expect(b.converged).toBe(true);
    expect(count(b.status, 1)[STATUS.helpful]).toBeGreaterThan(50);
    expect(count(b.status, 0)[STATUS.helpful]).toBe(0);
    expect(count(b.status, 0)[STATUS.notHelpful]).toBeGreaterThan(50);
    const { from, to } = t.applyScores(2, b.status, b.noteIntercept, b.noteFactor);
    expect(to - from).toBe(P - count(b.status, 0)[0] - count(b.status, 1)[0]);
  });

  it('shows no note that only one side finds helpful, where a majority vote shows them', () => {
    const t = rated({ veracity: 2, stance: 2 });
    const b = bridgingScore(t.ratingColumns(), A, P);
    const m = majorityScore(t.ratingColumns(), P);
    expect(count(m.status, 1)[STATUS.helpful]).toBeGreaterThan(90);
    expect(count(b.status, 1)[STATUS.helpful]).toBe(0);
    expect(count(b.status, 0)[STATUS.helpful]).toBe(0);
    // The factor carries the split: nearly every note's |f_n| is past the factor bound.
    expect(b.noteFactor.filter((f) => Math.abs(f) > 0.5).length).toBeGreaterThan(0.9 * P);
  });
});
