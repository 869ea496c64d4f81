/**
 * Notes and their ratings as growable columns, and the log of status changes. Note ids are row
 * numbers (notes are few next to posts and are kept for the whole run). Everything here is plain
 * fields, typed arrays and pair sets, so a checkpoint (sim-core/checkpoint.ts) saves and restores
 * it. Three Arrow files come from it: notes.arrow (one row per note, at the end), note-ratings.arrow
 * and note-status.arrow (rows appended as they accrue: takeRatings, takeChanges).
 */
import type { ColumnData } from '../../sim-core/io/arrowFile.ts';
import { createPairSet, pairSetAdd, type PairSet } from '../../sim-core/pairSet.ts';
import { sharedArray, type ColumnType } from '../../sim-core/table.ts';
import { StateTable } from '../../sim-core/stateTable.ts';
import { NOTE_STATUS, STATUS, type RatingColumns } from './noteStatus.ts';

const NOTE = { post: 'i32', writer: 'i32', step: 'i32', status: 'u8', status_step: 'i32', intercept: 'f32', factor: 'f32', helpful: 'i32', ratings: 'i32' } as const;
const RATING = { rater: 'i32', note: 'i32', value: 'f32', step: 'i32' } as const;
const CHANGE = { note: 'i32', step: 'i32', status: 'u8', intercept: 'f32', factor: 'f32' } as const;

type Schema = Record<string, ColumnType>;
type Cols<S extends Schema> = { [K in keyof S]: ReturnType<typeof sharedArray<S[K]>> };

/** A growable table: rows [0, count) of `cols`; growing doubles the arrays (new ones: old views go stale). */
export class Rows<S extends Schema> {
  count = 0;
  capacity: number;
  cols: Cols<S>;
  private readonly schema: S;
  constructor(schema: S, capacity: number) {
    this.schema = schema;
    this.capacity = capacity;
    this.cols = Rows.alloc(schema, capacity);
  }
  private static alloc<S extends Schema>(schema: S, capacity: number): Cols<S> {
    return Object.fromEntries(Object.entries(schema).map(([k, t]) => [k, sharedArray(t, capacity)])) as Cols<S>;
  }
  /** Appends a row (its values left 0 for the caller to fill); returns its index. */
  push(): number {
    if (this.count === this.capacity) {
      const cols = Rows.alloc(this.schema, this.capacity * 2);
      for (const k of Object.keys(cols) as (keyof S)[]) cols[k].set(this.cols[k]);
      this.cols = cols;
      this.capacity *= 2;
    }
    return this.count++;
  }
  /** Arrow columns of rows [from, to), with `dictionaries` for coded columns. */
  columns(from: number, to: number, dictionaries: Partial<Record<keyof S, readonly string[]>> = {}): ColumnData[] {
    return Object.entries(this.schema).map(([name, type]) => ({ name, type, values: this.cols[name].subarray(from, to), dictionary: dictionaries[name] }));
  }
}

export class NotesTable extends StateTable {
  /** 1 for the accounts enrolled as contributors (notesPhase.ts fills it at init). */
  contributors = new Uint8Array(0);
  /** Each post's notes, by post id, in the order written. */
  byPost = new Map<number, number[]>();
  /** Notes now rated helpful, and posts now showing one (after the last scoring). */
  shownNotes = 0;
  notedPosts = 0;
  notes = new Rows(NOTE, 256);
  ratings = new Rows(RATING, 1024);
  changes = new Rows(CHANGE, 256);
  /** (writer, post) pairs with a note, and (rater, note) pairs with a rating: one each, as on X. */
  written: PairSet = createPairSet(256);
  rated: PairSet = createPairSet(1024);
  /** Rows of ratings and changes already handed out (takeRatings, takeChanges). */
  ratingsOut = 0;
  changesOut = 0;

  /** Adds `writer`'s note on `post` at `step` (Needs More Ratings); returns its id, or -1 when the writer already has a note on the post. */
  addNote(post: number, writer: number, step: number): number {
    if (!pairSetAdd(this.written, writer, post)) return -1;
    const r = this.notes.push();
    const c = this.notes.cols;
    c.post[r] = post;
    c.writer[r] = writer;
    c.step[r] = step;
    c.status[r] = STATUS.needsMoreRatings;
    c.status_step[r] = step;
    const list = this.byPost.get(post);
    if (list) list.push(r);
    else this.byPost.set(post, [r]);
    return r;
  }

  /** Adds `rater`'s rating `value` (1, 0.5 or 0) of `note` at `step`; false when it had rated the note already. */
  addRating(rater: number, note: number, value: number, step: number): boolean {
    if (note < 0 || note >= this.notes.count) throw new Error(`note ${note} does not exist (${this.notes.count} notes)`);
    if (!pairSetAdd(this.rated, rater, note)) return false;
    const r = this.ratings.push();
    const c = this.ratings.cols;
    c.rater[r] = rater;
    c.note[r] = note;
    c.value[r] = value;
    c.step[r] = step;
    this.notes.cols.ratings[note]++;
    if (value === 1) this.notes.cols.helpful[note]++;
    return true;
  }

  /** Every rating so far, as the scorers take them (views: valid until the next rating). */
  ratingColumns(): RatingColumns {
    const c = this.ratings.cols;
    return { rater: c.rater, note: c.note, value: c.value, count: this.ratings.count };
  }

  /** Current status of every note (a copy), e.g. bridgingScore's `previous`. */
  statuses(): Uint8Array {
    return this.notes.cols.status.slice(0, this.notes.count);
  }

  /**
   * Takes a scoring's results for notes [0, status.length) at `step`: intercepts and factors are
   * stored, and each note whose status changed is logged. Returns the rows [from, to) of the log
   * added (changes.cols.note gives the notes, .status their new status).
   */
  applyScores(step: number, status: Uint8Array, intercept?: Float64Array, factor?: Float64Array): { from: number; to: number } {
    const c = this.notes.cols;
    const from = this.changes.count;
    const n = Math.min(status.length, this.notes.count);
    for (let k = 0; k < n; k++) {
      if (intercept) c.intercept[k] = intercept[k];
      if (factor) c.factor[k] = factor[k];
      if (status[k] === c.status[k]) continue;
      c.status[k] = status[k];
      c.status_step[k] = step;
      const r = this.changes.push();
      const g = this.changes.cols;
      g.note[r] = k;
      g.step[r] = step;
      g.status[r] = status[k];
      g.intercept[r] = c.intercept[k];
      g.factor[r] = c.factor[k];
    }
    return { from, to: this.changes.count };
  }

  /** notes.arrow's columns: id, post, writer, step, status, status_step, intercept, factor, helpful, ratings. */
  notesColumns(): { columns: ColumnData[]; rows: number } {
    const rows = this.notes.count;
    const id = sharedArray('i32', rows);
    for (let r = 0; r < rows; r++) id[r] = r;
    return { columns: [{ name: 'id', type: 'i32', values: id }, ...this.notes.columns(0, rows, { status: NOTE_STATUS })], rows };
  }

  /** note-ratings.arrow's rows since the last call: rater, note, value, step. */
  takeRatings(): { columns: ColumnData[]; rows: number } {
    const from = this.ratingsOut;
    this.ratingsOut = this.ratings.count;
    return { columns: this.ratings.columns(from, this.ratings.count), rows: this.ratings.count - from };
  }

  /** note-status.arrow's rows since the last call: note, step, status, intercept, factor. */
  takeChanges(): { columns: ColumnData[]; rows: number } {
    const from = this.changesOut;
    this.changesOut = this.changes.count;
    return { columns: this.changes.columns(from, this.changes.count, { status: NOTE_STATUS }), rows: this.changes.count - from };
  }
}
