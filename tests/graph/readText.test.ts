import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadEdgeList } from '../../graph/loadEdgeList.ts';
import { edgeFiles, externalPairs, inputError, pairs } from './edgeFiles.ts';

const { load, write } = edgeFiles();

describe('text edge lists', () => {
  it('reads a SNAP file with # comments and tabs', async () => {
    const g = await load(
      'snap.txt',
      '# Directed graph (each unordered pair of nodes is saved once): test.txt\n# Nodes: 3 Edges: 4\n# FromNodeId\tToNodeId\n0\t1\n0\t2\n1\t2\n2\t0\n',
    );
    expect(g.nodes).toBe(3);
    expect(g.directed).toBe(true);
    expect(pairs(g)).toEqual([
      [0, 1],
      [0, 2],
      [1, 2],
      [2, 0],
    ]);
    expect(Array.from(g.externalIds as Float64Array)).toEqual([0, 1, 2]);
    expect(g.externalIds).toBeInstanceOf(Float64Array);
    expect(g.src.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(g.dst.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(g.src.length).toBe(4);
    expect(g.dropped).toEqual({ selfLoops: 0, duplicates: 0 });
  });

  it('skips a CSV header', async () => {
    const g = await load('header.csv', 'source,target\n3,4\n4,5\n5,3\n');
    expect(g.nodes).toBe(3);
    expect(pairs(g)).toEqual([
      [0, 1],
      [1, 2],
      [2, 0],
    ]);
    expect(Array.from(g.externalIds as Float64Array)).toEqual([3, 4, 5]);
  });

  it('ignores extra columns, accepts CRLF, runs of spaces, spaces around commas, quotes and a BOM', async () => {
    const g = await load(
      'extra.txt',
      '\uFEFF1   2   0.5   1700000000\r\n2 3 1.0 17\r\n  3\t1 x\r\n\r\n4 , 1,w\r\n"5","4"\r\n6\t5\t\r\n7 6',
    );
    expect(externalPairs(g)).toEqual([
      [1, 2],
      [2, 3],
      [3, 1],
      [4, 1],
      [5, 4],
      [6, 5],
      [7, 6],
    ]);
  });

  it('reads gzip-compressed text', async () => {
    const text = '# gz\n10 20\n20 30\n30 10\n';
    const g = await load('edges.txt.gz', gzipSync(Buffer.from(text)));
    const plain = await load('edges-plain.txt', text);
    expect(externalPairs(g)).toEqual(externalPairs(plain));
  });

  it('parses lines that span chunk boundaries, and lines longer than a chunk', async () => {
    const lines: string[] = ['# generated'];
    let x = 7;
    for (let i = 0; i < 3000; i++) {
      x = (x * 1103515245 + 12345) % 2147483648;
      const a = x % 5000;
      const b = (x >>> 8) % 5000;
      if (i % 97 === 0) lines.push(`# comment ${'z'.repeat(i % 300)}`);
      if (i % 89 === 0) lines.push('');
      lines.push(i % 3 === 0 ? `${a}\t${b}\t${i}\r` : i % 3 === 1 ? `${a},${b}` : `${a}  ${b} 0.25`);
    }
    const text = lines.join('\n');
    const path = write('chunks.txt', text);
    const whole = await loadEdgeList(path);
    expect(whole.src.length + whole.dropped.selfLoops + whole.dropped.duplicates).toBe(3000);
    for (const chunkBytes of [8, 13, 64, 1000, 4096]) {
      const g = await loadEdgeList(path, { chunkBytes });
      expect(pairs(g)).toEqual(pairs(whole));
      expect(g.externalIds).toEqual(whole.externalIds);
      expect(g.dropped).toEqual(whole.dropped);
    }
    // The same file read as names, across chunks: digits are names in order of first appearance.
    const named = `${text}\nzed yan\n`;
    const namePath = write('chunks-names.txt', named);
    const n1 = await loadEdgeList(namePath, { ids: 'name' });
    const n2 = await loadEdgeList(namePath, { ids: 'name', chunkBytes: 16 });
    expect(n2.externalIds).toEqual(n1.externalIds);
    expect(pairs(n2)).toEqual(pairs(n1));
    expect((n1.externalIds as string[]).slice(-2)).toEqual(['zed', 'yan']);
    expect(n1.src.length).toBe(whole.src.length + 1);
    // Error line numbers stay right across chunks, for both kinds of bad id.
    const bad = `${text}\n1 2\n-5 3\n`;
    const msg = await inputError(loadEdgeList(write('chunks-bad.txt', bad), { chunkBytes: 16 }));
    expect(msg).toContain(`line ${lines.length + 2}:`);
    const msg2 = await inputError(loadEdgeList(namePath, { chunkBytes: 16 }));
    expect(msg2).toContain(`line ${lines.length + 1}: node id "zed" is not an integer`);
  });
});

describe('text errors', () => {
  it('reports a line with one field', async () => {
    const msg = await inputError(load('one.csv', '# c\n1,2\n12\n3,4\n'));
    expect(msg).toMatch(/one\.csv line 3: expected two node ids separated by comma, tab or spaces, got "12"; fix or remove the line$/);
  });

  it('reports an empty field', async () => {
    const msg = await inputError(load('empty-field.csv', '1,2\n3,,4\n'));
    expect(msg).toContain('empty-field.csv line 2: empty node id in "3,,4"');
    expect(await inputError(load('empty-field2.csv', '1,2\n\n3,\n'))).toContain('line 3: empty node id');
  });

  it('reports negative and non-integer ids', async () => {
    expect(await inputError(load('neg.txt', '1 2\n-3 4\n'))).toContain('neg.txt line 2: node id -3 is negative');
    expect(await inputError(load('frac.txt', '1 2\n# x\n3.5 4\n'))).toContain('frac.txt line 3: node id 3.5 is not an integer');
    expect(await inputError(load('frac2.txt', 'a b\nc 1e6\n'))).toContain('line 2: node id 1e6 is not an integer');
  });

  it('reports ids above 2^53-1', async () => {
    const msg = await inputError(load('huge.txt', '1 2\n2 9007199254740992\n'));
    expect(msg).toContain('huge.txt line 2: node id 9007199254740992 is above 2^53-1');
  });

  it('reports files without edges', async () => {
    expect(await inputError(load('empty.txt', ''))).toContain('has no edges (the file is empty)');
    const msg = await inputError(load('comments.txt', '# a\n\n# b\nsource target\n'));
    expect(msg).toContain('comments.txt has no edges (4 lines');
  });
});

describe('ids and the header line', () => {
  it('refuses a line that is not an edge under the default ids int (it used to flip the file to names)', async () => {
    const msg = await inputError(load('garbage.txt', '0 1\n1 2\nthis is not an edge\n2 3\n'));
    expect(msg).toMatch(
      /garbage\.txt line 3: node id "this" is not an integer \(ids are read as integers\); use --ids name if ids are names, or fix or remove the line$/,
    );
    expect(await inputError(load('garbage2.txt', '0 1\n1 x\n'))).toContain('garbage2.txt line 2: node id "x" is not an integer');
    // Quoted names are not integers either.
    expect(await inputError(load('garbage3.csv', '0,1\n"a""b",1\n'))).toContain('line 2: node id "a\\"b" is not an integer');
  });

  it('ids int: only the first data line may be a header, when one of its fields is not a number', async () => {
    const g = await load('hdr.txt', '# c\n\nFromNodeId\tToNodeId\n5\t6\n6\t7\n');
    expect(externalPairs(g)).toEqual([
      [5, 6],
      [6, 7],
    ]);
    // The documented rule, exactly: one non-number field is enough.
    const half = await load('hdr-half.txt', '1 alice\n2 3\n');
    expect(externalPairs(half)).toEqual([[2, 3]]);
    // Not on a later line, even when no edge came before (a comment is not a data line).
    expect(await inputError(load('hdr-late.txt', 'source target\nsource target\n0 1\n'))).toContain('hdr-late.txt line 2: node id "source"');
    expect(await inputError(load('hdr-after.txt', '0 1\nsource target\n'))).toContain('hdr-after.txt line 2: node id "source" is not an integer');
    // A malformed number is an error even on the first line.
    expect(await inputError(load('hdr-neg.txt', '-1 2\n0 1\n'))).toContain('hdr-neg.txt line 1: node id -1 is negative');
  });

  it('ids name: the first line is a header only when both fields are column words', async () => {
    const g = await load('names-hdr.tsv', '# c\nsource\ttarget\nalice\tbob\n', { ids: 'name' });
    expect(g.externalIds).toEqual(['alice', 'bob']);
    const h = await load('names-hdr2.tsv', 'node_1\tnode_2\nnode_1\tbob\n', { ids: 'name' });
    expect(h.externalIds).toEqual(['node_1', 'bob']);
    const noHdr = await load('names-nohdr.tsv', 'source\tbob\nbob\tcarol\n', { ids: 'name' });
    expect(noHdr.externalIds).toEqual(['source', 'bob', 'carol']);
  });
});
