/**
 * Test helpers for the edge-list readers: files in a temporary folder, loaded with loadEdgeList,
 * and the InputError a bad one gives.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { InputError } from '../../sim-core/errors.ts';
import { loadEdgeList } from '../../graph/loadEdgeList.ts';
import type { EdgeList, LoadEdgeListOptions } from '../../graph/loadEdgeList.ts';

/** A temporary folder for the calling test file (made before its tests, removed after). */
export function edgeFiles() {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'socsim-edges-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const write = (name: string, content: string | Uint8Array): string => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  return {
    dir: () => dir,
    write,
    load: (name: string, content: string | Uint8Array, options?: LoadEdgeListOptions): Promise<EdgeList> =>
      loadEdgeList(write(name, content), options),
  };
}

/** Runs `p`, expects an InputError with a one-line message, and returns the message. */
export async function inputError(p: Promise<unknown>): Promise<string> {
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

export function pairs(g: EdgeList): [number, number][] {
  return Array.from(g.src, (s, k) => [s, g.dst[k]]);
}

/** Edges with external ids, for comparing loads of the same graph. */
export function externalPairs(g: EdgeList): [number | string, number | string][] {
  const ext = g.externalIds;
  const id = (v: number): number | string => (ext === null ? v : ext[v]);
  return Array.from(g.src, (s, k) => [id(s), id(g.dst[k])]);
}
