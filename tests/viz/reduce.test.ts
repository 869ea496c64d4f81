/// <reference lib="dom" />
/** The dashboard's reductions (viz/src/data/reduce.ts and small helpers), on hand-worked inputs. */
import { describe, expect, it } from 'vitest';
import { archetypeGroups, ccdf, histogram, latestByRoot, moments, sampleSubgraph, topCascades } from '../../viz/src/data/reduce.ts';
import { latestDecisions } from '../../viz/src/panels/archetypes.ts';
import { simTime } from '../../viz/src/panels/header.ts';
import { valueAt } from '../../viz/src/ui/chart.ts';

describe('histogram and moments', () => {
  it('bins over [lo, hi], clamps outliers to the end bins and skips NaN', () => {
    const v = Float32Array.from([-1, -0.95, 0, 0.999, 1, NaN, 5, -5, -0.5]);
    expect(Array.from(histogram(v, 4, -1, 1))).toEqual([3, 1, 1, 3]);
    expect(moments([1, 3, NaN])).toEqual({ n: 2, mean: 2, variance: 1 });
  });
});

describe('cascades', () => {
  // Rows in step order: cascade 7 grows at steps 0, 1, 3; cascade 9 at 1, 2; cascade 4 at 2.
  const rows = {
    step: [0, 1, 1, 2, 2, 3],
    root: [7, 7, 9, 9, 4, 7],
    scale: [2, 5, 3, 9, 1, 6],
    depth: [1, 2, 1, 3, 0, 2],
    max_breadth: [1, 3, 2, 4, 1, 3],
    size: [2, 6, 3, 11, 1, 8],
  };
  it('picks the k cascades with the largest scale, with their series', () => {
    const top = topCascades(rows, 2);
    expect(top.map((s) => s.root)).toEqual([9, 7]);
    expect(top[0]).toEqual({ root: 9, steps: [1, 2], scale: [3, 9], depth: [1, 3], max_breadth: [2, 4] });
    expect(top[1]!.steps).toEqual([0, 1, 3]);
    expect(top[1]!.scale).toEqual([2, 5, 6]);
  });
  it('takes the latest size of every cascade up to a step, and its CCDF', () => {
    expect(latestByRoot(rows, rows.size, 1).sort((a, b) => a - b)).toEqual([3, 6]);
    expect(latestByRoot(rows, rows.size, 3).sort((a, b) => a - b)).toEqual([1, 8, 11]);
    expect(latestByRoot(rows, rows.size, -1)).toEqual([]);
    expect(ccdf([3, 1, 1, 2, 0, -1])).toEqual({ x: [1, 2, 3], p: [1, 0.5, 0.25] });
    expect(ccdf([])).toEqual({ x: [], p: [] });
  });
});

describe('archetypes', () => {
  it('counts members and labels each archetype from its first member', () => {
    const arch = Uint16Array.from([2, 0, 2, 2, 5]);
    const age = { codes: Int8Array.from([1, 0, 1, 1, 2]), labels: ['18-24', '25-34', '65+'] };
    const lean = { codes: Int8Array.from([0, 1, 0, 0, 1]), labels: ['left', 'right'] };
    expect(archetypeGroups(arch, [age, lean])).toEqual([
      { archetype: 0, members: 1, label: '18-24 · right' },
      { archetype: 2, members: 3, label: '25-34 · left' },
      { archetype: 5, members: 1, label: '65+ · right' },
    ]);
  });
  it('finds the latest decision of every archetype before a step', () => {
    const step = [0, 0, 3, 3, 6];
    const archetype = [1, 2, 1, 2, 1];
    expect([...latestDecisions(step, archetype, 0)]).toEqual([]);
    expect([...latestDecisions(step, archetype, 1)]).toEqual([[1, 0], [2, 1]]);
    expect([...latestDecisions(step, archetype, 4)]).toEqual([[1, 2], [2, 3]]);
    expect([...latestDecisions(step, archetype, 7)]).toEqual([[1, 4], [2, 3]]);
  });
});

describe('sampleSubgraph', () => {
  // Source-ordered follow lists; in-degree: 5 <- 0,1,2,4 (4); 6 <- 0,1,4 (3); 7 <- 0,4 (2); 1 <- 3; 2 <- 4.
  const source = Int32Array.from([0, 0, 0, 1, 1, 2, 3, 4, 4, 4, 4]);
  const target = Int32Array.from([5, 6, 7, 5, 6, 5, 1, 5, 6, 7, 2]);
  it('keeps the top hubs and up to perSource follows of each source into them', () => {
    const g = sampleSubgraph(source, target, 8, 100, 100, 2, 2);
    expect(Array.from(g.nodes)).toEqual([5, 6, 0, 1, 2, 4]);
    expect(Array.from(g.source)).toEqual([2, 2, 3, 3, 4, 5, 5]);
    expect(Array.from(g.target)).toEqual([0, 1, 0, 1, 0, 0, 1]);
  });
  it('respects the node and edge caps', () => {
    const n = sampleSubgraph(source, target, 8, 4, 100, 2, 2);
    expect(Array.from(n.nodes)).toEqual([5, 6, 0, 1]);
    expect(Array.from(n.source)).toEqual([2, 2, 3, 3]);
    const e = sampleSubgraph(source, target, 8, 100, 3, 2, 2);
    expect(Array.from(e.source)).toEqual([2, 2, 3]);
    expect(Array.from(e.target)).toEqual([0, 1, 0]);
  });
  it('fills but stays within 2,000 nodes and 8,000 edges on a large skewed edge list', () => {
    const m = 200_000;
    const s = new Int32Array(m);
    const t = new Int32Array(m);
    for (let e = 0; e < m; e++) {
      s[e] = Math.floor(e / 40);
      const u = (e * 0.6180339887498949) % 1; // low-discrepancy, cubed: a few popular targets
      t[e] = Math.floor(100_000 * u * u * u);
    }
    const g = sampleSubgraph(s, t, 100_000);
    expect(g.nodes.length).toBe(2000);
    expect(new Set(g.nodes).size).toBe(2000);
    expect(g.source.length).toBeLessThanOrEqual(8000);
    for (let e = 0; e < g.source.length; e++) expect(g.source[e]).not.toBe(g.target[e]);
  });
});

describe('formatting helpers', () => {
  it('formats simulated time and reads a series at a step', () => {
    expect(simTime(0)).toBe('00:00');
    expect(simTime(3600 * 5 + 180)).toBe('05:03');
    expect(simTime(3600 * 49)).toBe('2 d 01:00');
    expect(valueAt({ x: [1, 2, 3], y: [10, 20, 30] }, 2)).toBe(20);
    expect(valueAt({ x: [1, 2, 3], y: [10, 20, 30] }, 0)).toBeNaN();
    expect(valueAt({ x: [1, 2, 3], y: [10, 20, 30] }, 9)).toBe(30);
  });
});
