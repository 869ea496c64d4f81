import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadEdgeList } from '../../graph/loadEdgeList.ts';
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
