import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NOTE_STATUS, STATUS } from '../../../platform/notes/noteStatus.ts';
import { NotesTable } from '../../../platform/notes/notesTable.ts';
import { readCheckpoint, writeCheckpoint } from '../../../sim-core/checkpoint.ts';
import { ArrowFileAppender, readArrowFile, writeArrowFile } from '../../../sim-core/io/arrowFile.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-notes-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** 300 notes (past the first capacity) on posts 1000 + k by writer k % 7, each rated by 5 raters. */
function filled(): NotesTable {
  const t = new NotesTable();
  for (let k = 0; k < 300; k++) expect(t.addNote(1000 + k, k % 7, k >> 4)).toBe(k);
  for (let k = 0; k < 300; k++) for (let u = 0; u < 5; u++) t.addRating(50 + u, k, u < 3 ? 1 : u === 3 ? 0.5 : 0, 20 + (k >> 4));
  return t;
}

describe('NotesTable', () => {
  it('grows, keeps one note per writer and post and one rating per rater and note', () => {
    const t = filled();
    expect(t.notes.count).toBe(300);
    expect(t.notes.capacity).toBeGreaterThanOrEqual(300);
    expect(t.ratings.count).toBe(1500);
    expect(t.addNote(1000, 0, 30)).toBe(-1);
    expect(t.addRating(50, 3, 0, 30)).toBe(false);
    expect([t.notes.cols.post[3], t.notes.cols.writer[3], t.notes.cols.post[299]]).toEqual([1003, 3, 1299]);
    expect(t.notes.cols.helpful[7]).toBe(3);
    expect(t.notes.cols.ratings[7]).toBe(5);
    const r = t.ratingColumns();
    expect(r.count).toBe(1500);
    expect([r.rater[1499], r.note[1499], r.value[1499]]).toEqual([54, 299, 0]);
    expect([r.rater[2], r.note[2], r.value[2]]).toEqual([52, 0, 1]);
    expect(() => t.addRating(1, 300, 1, 0)).toThrow(/note 300 does not exist/);
  });

  it('logs status changes only', () => {
    const t = filled();
    const status = new Uint8Array(300);
    status[4] = STATUS.helpful;
    status[9] = STATUS.notHelpful;
    const icpt = new Float64Array(300).fill(0.1);
    icpt[4] = 0.5;
    expect(t.applyScores(40, status, icpt, new Float64Array(300))).toEqual({ from: 0, to: 2 });
    expect(t.applyScores(41, status, icpt, new Float64Array(300))).toEqual({ from: 2, to: 2 });
    status[4] = STATUS.needsMoreRatings;
    expect(t.applyScores(42, status)).toEqual({ from: 2, to: 3 });
    expect(Array.from(t.changes.cols.note.subarray(0, 3))).toEqual([4, 9, 4]);
    expect(Array.from(t.changes.cols.step.subarray(0, 3))).toEqual([40, 40, 42]);
    expect(t.changes.cols.intercept[0]).toBeCloseTo(0.5, 6);
    expect(t.notes.cols.status_step[4]).toBe(42);
    expect(t.notes.cols.status_step[5]).toBe(0);
  });

  it('survives a checkpoint round trip and goes on growing', () => {
    const t = filled();
    t.applyScores(40, Uint8Array.from({ length: 300 }, (_, k) => k % 3));
    t.takeRatings();
    const file = path.join(tmp, 'notes.ckpt');
    writeCheckpoint(file, { notes: t }, { step: 40 });
    const fresh = { notes: new NotesTable() };
    readCheckpoint(file).restoreInto(fresh);
    const u = fresh.notes;
    expect(u.notes.count).toBe(300);
    expect(u.ratingsOut).toBe(1500);
    expect(Array.from(u.statuses())).toEqual(Array.from(t.statuses()));
    expect(Array.from(u.ratingColumns().value.subarray(0, 1500))).toEqual(Array.from(t.ratingColumns().value.subarray(0, 1500)));
    expect(u.addNote(1000, 0, 50)).toBe(-1);
    expect(u.addRating(50, 0, 1, 50)).toBe(false);
    expect(u.addNote(5000, 1, 50)).toBe(300);
    expect(u.changes.count).toBe(t.changes.count);
  });

  it('writes notes.arrow, note-ratings.arrow and note-status.arrow', () => {
    const t = filled();
    t.applyScores(40, Uint8Array.from({ length: 300 }, (_, k) => (k === 2 ? STATUS.helpful : 0)));
    const n = t.notesColumns();
    writeArrowFile(path.join(tmp, 'notes.arrow'), n.columns, n.rows);
    const notes = readArrowFile(path.join(tmp, 'notes.arrow'));
    expect(notes.numRows).toBe(300);
    expect(notes.schema.fields.map((f) => f.name)).toEqual(['id', 'post', 'writer', 'step', 'status', 'status_step', 'intercept', 'factor', 'helpful', 'ratings']);
    expect(notes.getChild('status')!.get(2)).toBe(NOTE_STATUS[STATUS.helpful]);

    const first = t.takeRatings();
    const ratings = ArrowFileAppender.open(path.join(tmp, 'note-ratings.arrow'), first.columns);
    ratings.append(first.columns, first.rows);
    t.addRating(60, 0, 1, 41);
    const more = t.takeRatings();
    expect(more.rows).toBe(1);
    ratings.append(more.columns, more.rows);
    ratings.close();
    const back = readArrowFile(path.join(tmp, 'note-ratings.arrow'));
    expect(back.numRows).toBe(1501);
    expect(back.getChild('rater')!.get(1500)).toBe(60);

    const ch = t.takeChanges();
    writeArrowFile(path.join(tmp, 'note-status.arrow'), ch.columns, ch.rows);
    const status = readArrowFile(path.join(tmp, 'note-status.arrow'));
    expect(status.numRows).toBe(1);
    expect(status.getChild('note')!.get(0)).toBe(2);
    expect(t.takeChanges().rows).toBe(0);
  });
});
