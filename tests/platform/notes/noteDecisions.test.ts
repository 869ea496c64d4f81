import { describe, expect, it } from 'vitest';
import { isContributor, noteParams, rateNote, writeProbability, writesNote } from '../../../platform/notes/noteDecisions.ts';
import { parseNotesConfig } from '../../../platform/notes/notesConfig.ts';
import { VERACITY } from '../../../platform/posts.ts';

const TRUE = VERACITY.indexOf('true');
const FALSE = VERACITY.indexOf('false');
const p = noteParams(parseNotesConfig({ write: 0.2, falseMultiplier: 3, partisan: 1, rate: 0.5 }));

describe('note decisions', () => {
  it('are pure functions of key, agent and post or note', () => {
    const a = Array.from({ length: 200 }, (_, k) => [writesNote(11, k, 7 * k, 1, 0.3, -0.2, FALSE, p), rateNote(12, k, k >> 2, 1, 0.3, -0.2, FALSE, p)]);
    const b = Array.from({ length: 200 }, (_, k) => [writesNote(11, k, 7 * k, 1, 0.3, -0.2, FALSE, p), rateNote(12, k, k >> 2, 1, 0.3, -0.2, FALSE, p)]);
    expect(a).toEqual(b);
    expect(writesNote(11, 3, 21, 0, 0.3, -0.2, FALSE, p)).toBe(false);
    expect(rateNote(12, 3, 0, 0, 0.3, -0.2, FALSE, p)).toBe(-1);
  });

  it('write more on false posts and on posts far from the writer', () => {
    expect(writeProbability(p, 0, 0, FALSE) / writeProbability(p, 0, 0, TRUE)).toBeCloseTo(3, 12);
    expect(writeProbability(p, -1, 1, TRUE) / writeProbability(p, 0, 0, TRUE)).toBeCloseTo(Math.exp(2), 12);
    const share = (veracity: number) => {
      let n = 0;
      for (let a = 0; a < 20000; a++) if (writesNote(5, a, 99, 1, 0.5, 0.5, veracity, p)) n++;
      return n / 20000;
    };
    expect(share(TRUE)).toBeCloseTo(0.2 * Math.exp(-1), 1);
    expect(share(FALSE)).toBeCloseTo(0.6 * Math.exp(-1), 1);
  });

  it('rate notes on false posts and on opposed posts more helpful, at the rating rate', () => {
    const tally = (opinion: number, veracity: number) => {
      let rated = 0;
      let sum = 0;
      const values = new Set<number>();
      for (let a = 0; a < 20000; a++) {
        const v = rateNote(8, a, 3, 1, opinion, 0.8, veracity, p);
        if (v < 0) continue;
        values.add(v);
        rated++;
        sum += v;
      }
      expect([...values].sort()).toEqual([0, 0.5, 1]);
      return { rated: rated / 20000, mean: sum / rated };
    };
    const near = tally(0.8, TRUE);
    expect(near.rated).toBeCloseTo(0.5, 1);
    expect(tally(0.8, FALSE).mean).toBeGreaterThan(near.mean + 0.2);
    expect(tally(-0.8, TRUE).mean).toBeGreaterThan(near.mean + 0.2);
  });

  it('draws contributors at the configured share', () => {
    let n = 0;
    for (let a = 0; a < 50000; a++) if (isContributor(4, a, 0.1)) n++;
    expect(n / 50000).toBeCloseTo(0.1, 2);
  });
});
