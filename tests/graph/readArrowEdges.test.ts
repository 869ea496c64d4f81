import { Bool, Int32, Int64, Table, Utf8, tableFromArrays, tableToIPC, vectorFromArray } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { edgeFiles, externalPairs, inputError, pairs } from './edgeFiles.ts';

const { load } = edgeFiles();

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
    const g = await load('names.arrows', tableToIPC(t, 'stream'), { ids: 'name' });
    expect(g.externalIds).toEqual(['alice', 'bob', 'carol']);
    expect(pairs(g)).toEqual([
      [0, 1],
      [1, 2],
      [2, 0],
    ]);
    const dict = tableFromArrays({ a: ['x', 'y', 'x'], b: ['y', 'z', 'y'] });
    const gd = await load('dict.bin', tableToIPC(dict, 'file'), { ids: 'name' });
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

describe('Arrow ids', () => {
  it('ids int reads string columns of digits as integers and refuses names, naming row and column', async () => {
    const digits = tableFromArrays({ source: ['10', '20'], target: ['20', '30'] });
    const g = await load('digits.arrow', tableToIPC(digits, 'file'));
    expect(Array.from(g.externalIds as Float64Array)).toEqual([10, 20, 30]);
    const names = tableFromArrays({ source: ['10', 'bob'], target: ['20', '30'] });
    const msg = await inputError(load('names-int.arrow', tableToIPC(names, 'file')));
    expect(msg).toMatch(/names-int\.arrow row 2: node id "bob" in column "source" is not an integer.*use --ids name.*fix or drop the row$/);
    const neg = tableFromArrays({ source: ['1', '-2'], target: ['2', '1'] });
    expect(await inputError(load('neg-str.arrow', tableToIPC(neg, 'file')))).toContain('neg-str.arrow row 2: node id -2 is negative');
  });

  it('ids name reads integer columns as names (decimal text)', async () => {
    const t = new Table({
      source: vectorFromArray([7, 3], new Int32()),
      target: vectorFromArray([3, 9], new Int32()),
    });
    const g = await load('int-names.arrow', tableToIPC(t, 'file'), { ids: 'name' });
    expect(g.externalIds).toEqual(['7', '3', '9']);
    expect(pairs(g)).toEqual([
      [0, 1],
      [1, 2],
    ]);
  });
});
