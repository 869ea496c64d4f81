/**
 * The diffusion patterns of `socsim validate` on hand-built post tables whose values are worked out
 * by hand, and the estimators they use on cases with known answers.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { delayCdf, diffusionPatterns, powerLawExponent, readPostColumns, structuralVirality } from '../../runner/analysis/diffusionPatterns.ts';
import { KIND, POST_KINDS } from '../../platform/posts.ts';
import { ArrowFileAppender, type ColumnData } from '../../sim-core/io/arrowFile.ts';
import { keyOf, uniform } from '../../sim-core/rng.ts';

const { original: O, repost: R, quote: Q, comment: C } = KIND;

describe('diffusion patterns', () => {
  it("reads posts.arrow's ids, kinds, parents and steps batch by batch, and names a gap or a missing column", () => {
    const dir = mkdtempSync(join(tmpdir(), 'socsim-post-columns-'));
    try {
      // As a run appends them: a batch per step (empty ones too), with columns the reader skips.
      const kinds = ['quote', 'original', 'comment', 'repost'];
      const batch = (from: number, rows: number, idAt = (i: number) => from + i, step = true): ColumnData[] => [
        { name: 'id', type: 'i32', values: Int32Array.from({ length: rows }, (_, i) => idAt(i)) },
        { name: 'author', type: 'i32', values: Int32Array.from({ length: rows }, (_, i) => 7 * (from + i)) },
        { name: 'kind', type: 'u8', values: Uint8Array.from({ length: rows }, (_, i) => POST_KINDS.indexOf(kinds[(from + i) % 4] as never)), dictionary: POST_KINDS },
        { name: 'parent', type: 'i32', values: Int32Array.from({ length: rows }, (_, i) => from + i - 1) },
        ...(step ? [{ name: 'step', type: 'i32', values: Int32Array.from({ length: rows }, (_, i) => (from + i) >> 4) } as ColumnData] : []),
        { name: 'topic', type: 'f32', values: new Float32Array(rows * 3).fill(0.5), width: 3 },
      ];
      const write = (name: string, sizes: number[], idAt?: (from: number) => (i: number) => number, step = true) => {
        const runDir = join(dir, name);
        mkdirSync(runDir);
        const app = ArrowFileAppender.open(join(runDir, 'posts.arrow'), batch(0, 0, undefined, step));
        let from = 0;
        for (const rows of sizes) {
          app.append(batch(from, rows, idAt?.(from), step), rows);
          from += rows;
        }
        app.close();
        return runDir;
      };
      const got = readPostColumns(write('ok', [5, 0, 300, 17]));
      const n = 322;
      expect(Array.from(got.kind)).toEqual(Array.from({ length: n }, (_, i) => KIND[kinds[i % 4] as keyof typeof KIND]));
      expect(Array.from(got.parent)).toEqual(Array.from({ length: n }, (_, i) => i - 1));
      expect(Array.from(got.step)).toEqual(Array.from({ length: n }, (_, i) => i >> 4));
      // A post missing in the third batch.
      const gap = write('gap', [5, 300, 17], (from) => (i) => (from === 305 && i >= 2 ? from + i + 1 : from + i));
      expect(() => readPostColumns(gap)).toThrow(/posts\.arrow: row 307 has id 308; posts\.arrow must hold every post in id order/);
      expect(() => readPostColumns(write('nostep', [5], undefined, false))).toThrow(/posts\.arrow has no column step; is it a socsim posts\.arrow\?/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a hand-built run: reshare trees only, roots of the first half, depths, virality and delays', () => {
    // id:      0  1  2  3  4  5  6  7   8
    const kind = [O, R, R, R, C, R, O, O, Q];
    const parent = [-1, 0, 0, 1, 0, 4, -1, -1, 3];
    const step = [0, 1, 1, 2, 1, 2, 0, 30, 30];
    const p = diffusionPatterns({ kind, parent, step }, { stepHours: 1, steps: 48, followHours: 24 });
    // Roots: 0 and 6 (7 is in the second half; the comment 4 and its repost 5 are not a reshare
    // cascade of an original). Cascade of 0: 1, 2 at depth 1, 3 at depth 2, 8 (a quote) at depth 3,
    // a path 2-0-1-3-8 of 5 nodes, structural virality (5 + 1) / 3 = 2.
    expect(p.roots).toBe(2);
    expect(p.reshares).toBe(4);
    expect(p.neverReshared).toBe(0.5);
    expect(p.directFromRoot).toBe(0.5);
    expect([p.depth1, p.depth2, p.depth3plus]).toEqual([0, 0, 1]);
    expect(p.atLeast10).toBe(0);
    // One tree of >= 2 nodes is below the virality and tail thresholds (10 nodes).
    expect(p.viralityTrees).toBe(0);
    expect(p.viralityPerDecade).toBeNaN();
    // Delays of 1, 1, 2, 30 steps of an hour. The last is past the 24-hour horizon, so the shares
    // are of 3 reshares: P(<= 1 h) = 1/2, 1/2, 0; P(<= 6 h) = 1, 1, 1.
    expect(p.within1h).toBeCloseTo(1 / 3, 15);
    expect(p.within6h).toBe(1);
    // Roots followed for less than the horizon: no delay shares.
    const short = diffusionPatterns({ kind, parent, step }, { stepHours: 1, steps: 40, followHours: 20 });
    expect(short.within1h).toBeNaN();
    expect(short.within6h).toBeNaN();
    const q = diffusionPatterns({ kind, parent, step }, { stepHours: 1, steps: 48, followHours: 24, viralityMin: 5 });
    expect(q.viralityTrees).toBe(1);
    expect(q.viralityMid).toBeNaN(); // 10-99 nodes
  });

  it('structural virality: a star of n nodes is 2 (n - 1) / n, a path (n + 1) / 3', () => {
    expect(structuralVirality([1, 1, 1, 1], 5)).toBeCloseTo(1.6, 12);
    // Path 0-1-2-3-4 rooted at 0: subtree sizes below the edges 4, 3, 2, 1.
    expect(structuralVirality([4, 3, 2, 1], 5)).toBeCloseTo(2, 12);
    expect(structuralVirality([], 1)).toBe(0);
  });

  it('delays between steps: a triangular law around whole steps', () => {
    expect(delayCdf(1, 1, 1)).toBe(0.5);
    expect(delayCdf(1, 1, 0.5)).toBe(0.125);
    expect(delayCdf(1, 1, 2)).toBe(1);
    expect(delayCdf(4, 0.25, 1)).toBe(0.5);
    expect(delayCdf(2, 1, 1)).toBe(0);
  });

  it('the power-law fit recovers the exponent of a sampled discrete power law', () => {
    const key = keyOf(5, 1, 0);
    for (const alpha of [1.8, 2.5]) {
      const xs: number[] = [];
      for (let i = 0; i < 200_000; i++) xs.push(Math.floor(9.5 * (1 - uniform(key, i)) ** (-1 / (alpha - 1)) + 0.5));
      const fit = powerLawExponent(xs, 10);
      expect(fit.m).toBe(200_000);
      expect(Math.abs(fit.alpha - alpha)).toBeLessThan(0.05);
    }
  });
});
