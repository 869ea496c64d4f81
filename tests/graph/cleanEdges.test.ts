import { describe, expect, it } from 'vitest';
import { edgeFiles, externalPairs, pairs } from './edgeFiles.ts';

const { load } = edgeFiles();

describe('cleaning', () => {
  it('drops self loops and duplicates of an undirected graph, keeping the first orientation read', async () => {
    const text = '1 2\n2 1\n1 2\n3 3\n2 3\n3 2\n';
    const u = await load('undirected.txt', text, { directed: false });
    expect(u.directed).toBe(false);
    expect(externalPairs(u)).toEqual([
      [1, 2],
      [2, 3],
    ]);
    expect(u.dropped).toEqual({ selfLoops: 1, duplicates: 3 });
    expect(u.nodes).toBe(3);
    const d = await load('directed.txt', text);
    expect(externalPairs(d)).toEqual([
      [1, 2],
      [2, 1],
      [2, 3],
      [3, 2],
    ]);
    expect(d.dropped).toEqual({ selfLoops: 1, duplicates: 1 });
  });

  it('matches a naive dedupe on a large random graph (hashed buckets) and a sorted one', async () => {
    const m = 150_000;
    const nodes = 400;
    const lines: string[] = [];
    let x = 12345;
    for (let i = 0; i < m; i++) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      lines.push(`${x % nodes} ${(x >>> 12) % nodes}`);
    }
    const text = lines.join('\n');
    for (const directed of [true, false]) {
      const g = await load(`random-${directed}.txt`, text, { directed });
      const seen = new Set<string>();
      const expected: [number, number][] = [];
      let loops = 0;
      for (const line of lines) {
        const [a, b] = line.split(' ').map(Number);
        if (a === b) {
          loops++;
          continue;
        }
        const key = directed || a < b ? `${a},${b}` : `${b},${a}`;
        if (seen.has(key)) continue;
        seen.add(key);
        expected.push([a, b]);
      }
      // Compared as strings: deep equality on 10^5 pairs is slow.
      expect(externalPairs(g).join(';')).toBe(expected.join(';'));
      expect(g.dropped).toEqual({ selfLoops: loops, duplicates: m - loops - expected.length });
    }
    const sorted = await load('sorted.txt', '0 1\n0 2\n1 1\n1 0\n2 0\n2 1\n');
    expect(sorted.dropped).toEqual({ selfLoops: 1, duplicates: 0 });
    expect(sorted.src.length).toBe(5);
  });
});
