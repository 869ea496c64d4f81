import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Bool, Int32, Int64, Table, Utf8, tableFromArrays, tableToIPC, vectorFromArray } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../sim-core/errors.ts';
import { loadEdgeList } from '../../graph/loadEdgeList.ts';
import type { EdgeList, LoadEdgeListOptions } from '../../graph/loadEdgeList.ts';

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'socsim-edges-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, content: string | Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

async function load(name: string, content: string | Uint8Array, options?: LoadEdgeListOptions): Promise<EdgeList> {
  return loadEdgeList(write(name, content), options);
}

/** Runs `p`, expects an InputError with a one-line message, and returns the message. */
async function inputError(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    const msg = (err as Error).message;
    expect(msg).not.toMatch(/[\r\n]/);
    return msg;
  }
  throw new Error('expected an InputError');
}

function pairs(g: EdgeList): [number, number][] {
  return Array.from(g.src, (s, k) => [s, g.dst[k]]);
}

/** Edges with external ids, for comparing loads of the same graph. */
function externalPairs(g: EdgeList): [number | string, number | string][] {
  const ext = g.externalIds;
  const id = (v: number): number | string => (ext === null ? v : ext[v]);
  return Array.from(g.src, (s, k) => [id(s), id(g.dst[k])]);
}

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

  it('loads string ids in order of first appearance', async () => {
    const g = await load('names.txt', 'alice bob\nbob carol\ncarol alice\ndave alice\n');
    expect(g.externalIds).toEqual(['alice', 'bob', 'carol', 'dave']);
    expect(g.nodes).toBe(4);
    expect(pairs(g)).toEqual([
      [0, 1],
      [1, 2],
      [2, 0],
      [3, 0],
    ]);
  });

  it('skips a column-name header in a file of names, and treats digits as names once any id is a name', async () => {
    const g = await load('names.csv', 'from,to\n"alice","bob"\nbob,"o""neil"\n12,bob\n');
    expect(g.externalIds).toEqual(['alice', 'bob', 'o"neil', '12']);
    expect(pairs(g)).toEqual([
      [0, 1],
      [1, 2],
      [3, 1],
    ]);
    const mixed = await load('mixed.txt', '1 2\n2 3\nu9 1\n');
    expect(mixed.externalIds).toEqual(['1', '2', '3', 'u9']);
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
    const g = await load('long-names.tsv', lines.join('\n'), { chunkBytes: 4096 });
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
    // Names, where the loader restarts in name mode after a numeric prefix.
    const named = `${text}\nzed yan\n`;
    const namePath = write('chunks-names.txt', named);
    const n1 = await loadEdgeList(namePath);
    const n2 = await loadEdgeList(namePath, { chunkBytes: 16 });
    expect(n2.externalIds).toEqual(n1.externalIds);
    expect(pairs(n2)).toEqual(pairs(n1));
    expect((n1.externalIds as string[]).slice(-2)).toEqual(['zed', 'yan']);
    // Error line numbers stay right across chunks.
    const bad = `${text}\n1 2\n-5 3\n`;
    const msg = await inputError(loadEdgeList(write('chunks-bad.txt', bad), { chunkBytes: 16 }));
    expect(msg).toContain(`line ${lines.length + 2}:`);
  });
});

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

describe('errors', () => {
  it('names a missing file', async () => {
    const path = join(dir, 'nope.txt');
    const msg = await inputError(loadEdgeList(path));
    expect(msg).toContain(`cannot read edge list ${path}:`);
    expect(msg).toContain('ENOENT');
    expect(await inputError(loadEdgeList(dir))).toContain('is a directory');
  });

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

  it('reports ids out of range for agents', async () => {
    const msg = await inputError(load('range.txt', '0 1\n\n# c\n1200 3\n', { agents: 1000 }));
    expect(msg).toContain(
      'range.txt line 4: node id 1200 is out of range 0..999 for --agents 1000; drop --agents to number nodes from the file',
    );
    const named = await inputError(load('range-name.txt', '0 1\nalice 3\n', { agents: 1000 }));
    expect(named).toContain('line 2: node id "alice" is not an integer');
    expect(named).toContain('drop --agents');
  });

  it('reports files without edges', async () => {
    expect(await inputError(load('empty.txt', ''))).toContain('has no edges (the file is empty)');
    const msg = await inputError(load('comments.txt', '# a\n\n# b\nsource target\n'));
    expect(msg).toContain('comments.txt has no edges (4 lines');
  });

  it('enforces maxEdges', async () => {
    const msg = await inputError(load('max.txt', '# c\n0 1\n1 2\n2 3\n3 4\n', { maxEdges: 3 }));
    expect(msg).toContain('max.txt line 5: more than 3 edges (maxEdges 3)');
    const ok = await load('max-ok.txt', '0 1\n1 2\n2 3\n', { maxEdges: 3 });
    expect(ok.src.length).toBe(3);
  });

  it('rejects bad options', async () => {
    const path = write('opts.txt', '0 1\n');
    expect(await inputError(loadEdgeList(path, { agents: 0 }))).toContain('agents must be');
    expect(await inputError(loadEdgeList(path, { maxEdges: -1 }))).toContain('maxEdges must be');
  });
});

describe('Arrow edge lists', () => {
  it('reads integer columns named src/dst (not first) and int64 source/target', async () => {
    const t = tableFromArrays({
      weight: new Float64Array([0.5, 1, 2]),
      src: new Int32Array([10, 20, 30]),
      dst: new Int32Array([20, 30, 10]),
    });
    const g = await load('edges.arrow', tableToIPC(t, 'file'));
    expect(Array.from(g.externalIds as Float64Array)).toEqual([10, 20, 30]);
    expect(pairs(g)).toEqual([
      [0, 1],
      [1, 2],
      [2, 0],
    ]);
    const t64 = tableFromArrays({
      source: BigInt64Array.from([5n, 9007199254740991n, 5n]),
      target: BigInt64Array.from([9007199254740991n, 7n, 5n]),
    });
    const g64 = await load('edges64.feather', tableToIPC(t64, 'file'));
    expect(externalPairs(g64)).toEqual([
      [5, 9007199254740991],
      [9007199254740991, 7],
    ]);
    expect(g64.dropped.selfLoops).toBe(1);
  });

  it('reads utf8 and dictionary columns, stream format, and detects Arrow by content', async () => {
    const t = new Table({
      from: vectorFromArray(['alice', 'bob', 'carol'], new Utf8()),
      to: vectorFromArray(['bob', 'carol', 'alice'], new Utf8()),
    });
    const g = await load('names.arrows', tableToIPC(t, 'stream'));
    expect(g.externalIds).toEqual(['alice', 'bob', 'carol']);
    expect(pairs(g)).toEqual([
      [0, 1],
      [1, 2],
      [2, 0],
    ]);
    const dict = tableFromArrays({ a: ['x', 'y', 'x'], b: ['y', 'z', 'y'] });
    const gd = await load('dict.bin', tableToIPC(dict, 'file'));
    expect(gd.externalIds).toEqual(['x', 'y', 'z']);
    expect(gd.dropped.duplicates).toBe(1);
    expect(pairs(gd)).toEqual([
      [0, 1],
      [1, 2],
    ]);
  });

  it('uses Arrow ids as-is with agents and reports bad rows', async () => {
    const t = new Table({
      source: vectorFromArray([0, 3], new Int32()),
      target: vectorFromArray([3, 1], new Int32()),
    });
    const g = await load('agents.arrow', tableToIPC(t, 'file'), { agents: 4 });
    expect(g.externalIds).toBeNull();
    expect(g.nodes).toBe(4);
    expect(pairs(g)).toEqual([
      [0, 3],
      [3, 1],
    ]);
    const range = await inputError(load('agents-bad.arrow', tableToIPC(t, 'file'), { agents: 3 }));
    expect(range).toContain('agents-bad.arrow row 1: node id 3 is out of range 0..2 for --agents 3');
    const neg = new Table({
      source: vectorFromArray([1n, -2n], new Int64()),
      target: vectorFromArray([2n, 1n], new Int64()),
    });
    expect(await inputError(load('neg.arrow', tableToIPC(neg, 'file')))).toContain('neg.arrow row 2: node id -2 is negative');
    const nulls = new Table({
      source: vectorFromArray([1, null], new Int32()),
      target: vectorFromArray([2, 1], new Int32()),
    });
    expect(await inputError(load('null.arrow', tableToIPC(nulls, 'file')))).toContain('null.arrow row 2: node id in column "source" is missing');
  });

  it('reports Arrow files without usable columns', async () => {
    const one = new Table({ source: vectorFromArray([1, 2], new Int32()) });
    const msg = await inputError(load('one.arrow', tableToIPC(one, 'file')));
    expect(msg).toContain('Arrow file');
    expect(msg).toContain('one.arrow has no usable edge columns');
    const bools = new Table({
      source: vectorFromArray([true, false], new Bool()),
      target: vectorFromArray([1, 2], new Int32()),
    });
    const msg2 = await inputError(load('bool.arrow', tableToIPC(bools, 'file')));
    expect(msg2).toContain('no usable edge columns: column "source" is Bool');
    expect(await inputError(load('junk.arrow', 'this is not arrow'))).toMatch(/junk\.arrow/);
  });
});
