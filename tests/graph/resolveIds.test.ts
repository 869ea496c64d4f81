import { describe, expect, it } from 'vitest';
import { edgeFiles, externalPairs, inputError, pairs } from './edgeFiles.ts';

const { load } = edgeFiles();

describe('integer ids', () => {
  it('remaps sparse numeric ids to dense ids in numeric order', async () => {
    const g = await load('sparse.txt', '10 5\n1000 10\n5 1000\n');
    expect(g.nodes).toBe(3);
    expect(Array.from(g.externalIds as Float64Array)).toEqual([5, 10, 1000]);
    expect(pairs(g)).toEqual([
      [1, 0],
      [2, 1],
      [0, 2],
    ]);
    // Ids far apart (hashed remapping rather than a bitmap over 0..max id).
    const far = await load('far.txt', '2000000000 5\n5 7\n');
    expect(Array.from(far.externalIds as Float64Array)).toEqual([5, 7, 2000000000]);
    expect(pairs(far)).toEqual([
      [2, 0],
      [0, 1],
    ]);
  });

  it('keeps ids above 2^31 exactly, up to 2^53-1', async () => {
    const g = await load('big.txt', '7 8\n9007199254740991 3\n3 4294967296\n');
    expect(Array.from(g.externalIds as Float64Array)).toEqual([3, 7, 8, 4294967296, 9007199254740991]);
    expect(externalPairs(g)).toEqual([
      [7, 8],
      [9007199254740991, 3],
      [3, 4294967296],
    ]);
  });

  it('uses ids as-is when agents is given', async () => {
    const g = await load('agents.txt', 'src dst\n0 5\n5 9\n9 0\n', { agents: 10 });
    expect(g.nodes).toBe(10);
    expect(g.externalIds).toBeNull();
    expect(pairs(g)).toEqual([
      [0, 5],
      [5, 9],
      [9, 0],
    ]);
  });
});

describe('names', () => {
  it('loads string ids in order of first appearance', async () => {
    const g = await load('names.txt', 'alice bob\nbob carol\ncarol alice\ndave alice\n', { ids: 'name' });
    expect(g.externalIds).toEqual(['alice', 'bob', 'carol', 'dave']);
    expect(g.nodes).toBe(4);
    expect(pairs(g)).toEqual([
      [0, 1],
      [1, 2],
      [2, 0],
      [3, 0],
    ]);
  });

  it('skips a column-name header in a file of names, and reads digits and numbers as names', async () => {
    const g = await load('names.csv', 'from,to\n"alice","bob"\nbob,"o""neil"\n12,bob\n', { ids: 'name' });
    expect(g.externalIds).toEqual(['alice', 'bob', 'o"neil', '12']);
    expect(pairs(g)).toEqual([
      [0, 1],
      [1, 2],
      [3, 1],
    ]);
    const mixed = await load('mixed.txt', '1 2\n2 3\nu9 1\n-3 1.5\n', { ids: 'name' });
    expect(mixed.externalIds).toEqual(['1', '2', '3', 'u9', '-3', '1.5']);
    // A first line of names that are not column words is an edge, not a header.
    const first = await load('first.txt', 'alice bob\nbob carol\n', { ids: 'name' });
    expect(first.externalIds).toEqual(['alice', 'bob', 'carol']);
  });

  it('tells apart many long names that share a prefix', async () => {
    const lines: string[] = [];
    const expectedIds = new Map<string, number>();
    const expected: [number, number][] = [];
    const id = (s: string): number => {
      if (!expectedIds.has(s)) expectedIds.set(s, expectedIds.size);
      return expectedIds.get(s) as number;
    };
    for (let i = 0; i < 6000; i++) {
      const a = `user_with_a_long_shared_prefix_${(i * 7919) % 5003}`;
      const b = i % 2 === 0 ? `ü${i % 13}` : `user_with_a_long_shared_prefix_${(i * 104729) % 4999}x`;
      lines.push(`${a}\t${b}`);
      expected.push([id(a), id(b)]);
    }
    const g = await load('long-names.tsv', lines.join('\n'), { ids: 'name', chunkBytes: 4096 });
    expect(g.externalIds).toEqual([...expectedIds.keys()]);
    // No self loops or duplicates by construction except repeats of the same pair.
    const seen = new Set<string>();
    const kept = expected.filter(([a, b]) => {
      const key = `${a},${b}`;
      if (a === b || seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    expect(pairs(g).join(';')).toBe(kept.join(';'));
  });
});

describe('agent ids', () => {
  it('reports ids out of range for agents', async () => {
    const msg = await inputError(load('range.txt', '0 1\n\n# c\n1200 3\n', { agents: 1000 }));
    expect(msg).toContain(
      'range.txt line 4: node id 1200 is out of range 0..999 for --agents 1000; drop --agents to number nodes from the file',
    );
    const named = await inputError(load('range-name.txt', '0 1\nalice 3\n', { agents: 1000 }));
    expect(named).toContain('line 2: node id "alice" is not an integer');
    expect(named).toContain('drop --agents');
  });
});
