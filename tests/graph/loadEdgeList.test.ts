import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { edgeFileRecord, loadEdgeList } from '../../graph/loadEdgeList.ts';
import { buildGraph, type Csr } from '../../sim-core/csr.ts';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { edgeFiles, inputError } from './edgeFiles.ts';

const { load, write, dir } = edgeFiles();

describe('loadEdgeList', () => {
  it('names a missing file', async () => {
    const path = join(dir(), 'nope.txt');
    const msg = await inputError(loadEdgeList(path));
    expect(msg).toContain(`cannot read edge list ${path}:`);
    expect(msg).toContain('ENOENT');
    expect(await inputError(loadEdgeList(dir()))).toContain('is a directory');
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
    expect(await inputError(loadEdgeList(path, { ids: 'names' as 'name' }))).toContain('ids must be "int" or "name"');
    const both = await inputError(loadEdgeList(path, { ids: 'name', agents: 3 }));
    expect(both).toContain('--ids name cannot be combined with --agents');
  });
});

describe('the file record', () => {
  const sha256 = (b: string | Uint8Array) => createHash('sha256').update(b).digest('hex');

  it('gives path, format, size and SHA-256 of the bytes on disk, also when read in small chunks', async () => {
    const text = '# c\nsource target\n3 4\n4 5\n5 3\n5 3\n';
    const path = write('rec.txt', text);
    for (const chunkBytes of [8, 1 << 20]) {
      const g = await loadEdgeList(path, { chunkBytes, directed: false });
      expect(g.file).toEqual({ path, format: 'text', bytes: text.length, sha256: sha256(text) });
      expect(edgeFileRecord(g)).toEqual({
        path,
        format: 'text',
        bytes: text.length,
        sha256: sha256(text),
        ids: 'int',
        directed: false,
        nodes: 3,
        edges: 3,
        dropped: { self_loops: 0, duplicates: 1 },
      });
    }
    const gz = gzipSync(Buffer.from(text));
    const gzPath = write('rec.txt.gz', gz);
    const g = await loadEdgeList(gzPath, { ids: 'name' });
    expect(g.file).toEqual({ path: gzPath, format: 'gzip-text', bytes: gz.length, sha256: sha256(gz) });
    expect(g.ids).toBe('name');
    const ipc = tableToIPC(tableFromArrays({ source: new Int32Array([0, 1]), target: new Int32Array([1, 2]) }), 'file');
    const arrowPath = write('rec.arrow', ipc);
    expect((await loadEdgeList(arrowPath)).file).toEqual({ path: arrowPath, format: 'arrow', bytes: ipc.length, sha256: sha256(ipc) });
  });
});

describe('direction', () => {
  it('a directed 3-node file gives an asymmetric CSR; undirected, a symmetric one', async () => {
    const exec = createExecutor(1);
    try {
      // 1 follows 0; 2 follows 0 and 1.
      const path = write('dir3.txt', '1 0\n2 0\n2 1\n');
      const d = await loadEdgeList(path, { directed: true });
      const gd = await buildGraph(exec, d.nodes, d.src, d.dst, d.directed);
      const row = (c: Csr, v: number) => Array.from(c.targets.subarray(c.offsets[v], c.offsets[v + 1]));
      expect([0, 1, 2].map((v) => row(gd.following, v))).toEqual([[], [0], [0, 1]]);
      expect([0, 1, 2].map((v) => row(gd.followers, v))).toEqual([[1, 2], [2], []]);
      const u = await loadEdgeList(path, { directed: false });
      const gu = await buildGraph(exec, u.nodes, u.src, u.dst, u.directed);
      expect(gu.following).toBe(gu.followers);
      expect([0, 1, 2].map((v) => row(gu.following, v).sort())).toEqual([[1, 2], [0, 2], [0, 1]]);
    } finally {
      await exec.close();
    }
  });
});
