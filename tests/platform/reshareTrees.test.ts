/**
 * The records of a real run keep the two kinds of tree apart: reshare cascades (reposts and quotes,
 * as retweet cascades are measured) in cascades.arrow, conversations (comments) in
 * conversations.arrow; and, as on X, a user reshares a cascade at most once and never its own root.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tableFromIPC, type Table } from 'apache-arrow';
import { beforeAll, describe, expect, it } from 'vitest';
import { socsim, tempDir } from '../runner/cliHelpers.ts';

const tmp = tempDir('socsim-trees-');
const dir = path.join(tmp, 'run');
const read = (f: string) => tableFromIPC(fs.readFileSync(path.join(dir, f)));
const ints = (t: Table, c: string) => Array.from(t.getChild(c)!.toArray() as Int32Array);

let kind: string[];
let author: number[];
let parent: number[];
let root: number[];
let rootAuthor: number[];
let depth: number[];
const isReshare = (k: string) => k === 'repost' || k === 'quote';

beforeAll(() => {
  const r = socsim(['run', 'social-feed', '--agents', '8000', '--steps', '24', '--seed', '3', '--quiet', '--out', dir]);
  expect(r.code, r.stderr).toBe(0);
  const p = read('posts.arrow');
  kind = Array.from({ length: p.numRows }, (_, i) => String(p.getChild('kind')!.get(i)));
  author = ints(p, 'author');
  parent = ints(p, 'parent');
  root = ints(p, 'root');
  rootAuthor = ints(p, 'root_author');
  depth = Array.from(p.getChild('depth')!.toArray() as Uint16Array);
});

describe('reshare cascades and conversations', () => {
  it('a reshare continues its parent reshare tree; a comment its parent conversation; otherwise the parent is the root', () => {
    let reshares = 0;
    let comments = 0;
    let rootedAtOther = 0;
    for (let i = 0; i < kind.length; i++) {
      if (kind[i] === 'original') {
        expect([root[i], depth[i], rootAuthor[i]]).toEqual([i, 0, author[i]]);
        continue;
      }
      const q = parent[i];
      const same = kind[q] !== 'original' && isReshare(kind[q]) === isReshare(kind[i]);
      expect([root[i], depth[i], rootAuthor[i]]).toEqual(same ? [root[q], depth[q] + 1, rootAuthor[q]] : [q, 1, author[q]]);
      if (isReshare(kind[i])) reshares++;
      else comments++;
      if (!same && kind[q] !== 'original') rootedAtOther++;
    }
    // The run exercises every case: reshares, comments, and trees rooted at a comment or a reshare.
    expect(reshares).toBeGreaterThan(100);
    expect(comments).toBeGreaterThan(100);
    expect(rootedAtOther).toBeGreaterThan(0);
  });

  it('nobody reshares a cascade twice, and no root author reshares its own cascade', () => {
    const pairs = new Set<string>();
    for (let i = 0; i < kind.length; i++) {
      if (!isReshare(kind[i])) continue;
      expect(author[i]).not.toBe(rootAuthor[i]);
      const key = `${author[i]}:${root[i]}`;
      expect(pairs.has(key), `user ${author[i]} reshared the cascade of ${root[i]} twice`).toBe(false);
      pairs.add(key);
    }
  });

  it('cascades.arrow counts only reshares, conversations.arrow only comments', () => {
    for (const [file, member] of [
      ['cascades.arrow', isReshare],
      ['conversations.arrow', (k: string) => k === 'comment'],
    ] as const) {
      const t = read(file);
      const rows = ints(t, 'root');
      const size = ints(t, 'size');
      const scale = ints(t, 'scale');
      // The last row of a root is its final size: the root plus its members.
      const last = new Map<number, number>();
      rows.forEach((r, i) => last.set(r, i));
      const members = new Map<number, Set<number>>();
      const count = new Map<number, number>();
      for (let i = 0; i < kind.length; i++) {
        if (!member(kind[i])) continue;
        count.set(root[i], (count.get(root[i]) ?? 0) + 1);
        if (!members.has(root[i])) members.set(root[i], new Set([rootAuthor[i]]));
        members.get(root[i])!.add(author[i]);
      }
      expect(last.size, file).toBe(count.size);
      for (const [r, i] of last) {
        expect(size[i], `${file} root ${r}`).toBe(count.get(r)! + 1);
        expect(scale[i], `${file} root ${r}`).toBe(members.get(r)!.size);
      }
    }
  });
});
