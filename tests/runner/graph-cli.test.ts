/**
 * `socsim run --graph FILE` end to end (the real CLI in a child process): how ids and direction are
 * read (--ids, --directed / --undirected), the manifest's record of the file, and bad input.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { tableFromIPC } from '@uwdata/flechette';
import { socsim, tempDir } from './cliHelpers.ts';

const tmp = tempDir('socsim-graph-cli-');

function edgeFile(name: string, text: string): string {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, text);
  return p;
}

/** Runs `args` plus a fresh --out, expects exit 0, returns the manifest and graph.arrow's edges. */
function run(name: string, args: string[]) {
  const out = path.join(tmp, name);
  const r = socsim(['run', ...args, '--steps', '1', '--quiet', '--out', out]);
  expect(r.code, r.stderr).toBe(0);
  const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  const g = tableFromIPC(fs.readFileSync(path.join(out, 'graph.arrow')));
  const src = Array.from(g.getChild('source')!.toArray() as Int32Array);
  const dst = Array.from(g.getChild('target')!.toArray() as Int32Array);
  return { manifest, edges: src.map((s, k) => [s, dst[k]]) };
}

/** Expects exit 2 and stderr matching `re`: one line (commander's own errors add a usage hint). */
function refused(args: string[], re: RegExp): void {
  const r = socsim(['run', ...args, '--out', path.join(tmp, 'bad')]);
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(re);
  expect(r.stderr.trim().split('\n').length).toBeLessThanOrEqual(2);
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

// 1 follows 0, 2 follows 0 and 1: directed, the CSR rows are not symmetric.
const DIRECTED3 = '# three nodes\n1 0\n2 0\n2 1\n';

describe('socsim run --graph: direction', () => {
  it('--directed reads "a b" as a follows b (asymmetric CSR) and the manifest records the file', () => {
    const f = edgeFile('directed3.txt', DIRECTED3);
    const { manifest, edges } = run('directed', ['voter', '--graph', f, '--directed']);
    expect(manifest.directed).toBe(true);
    expect(manifest.edges).toBe(3);
    expect(manifest.agents).toBe(3);
    expect(edges).toEqual([
      [1, 0],
      [2, 0],
      [2, 1],
    ]);
    expect(manifest.graph_file).toEqual({
      path: f,
      format: 'text',
      bytes: Buffer.byteLength(DIRECTED3),
      sha256: createHash('sha256').update(DIRECTED3).digest('hex'),
      ids: 'int',
      directed: true,
      nodes: 3,
      edges: 3,
      dropped: { self_loops: 0, duplicates: 0 },
    });
    // The generator spec that the file replaced is not recorded as if it had been used.
    expect(manifest.parameters.graph).toBeUndefined();
    expect(manifest.parameters.states).toBe(2);
    expect(socsim(['inspect', path.join(tmp, 'directed')]).stdout).toContain(`graph file ${f} (text, ${Buffer.byteLength(DIRECTED3)} bytes, sha256 ${manifest.graph_file.sha256}; ids int, directed;`);
  });

  it('classic models read a file undirected by default', () => {
    const f = edgeFile('default3.txt', DIRECTED3);
    const voter = run('voter-default', ['voter', '--graph', f]);
    expect(voter.manifest.directed).toBe(false);
    expect(voter.manifest.graph_file.directed).toBe(false);
    // Each undirected edge once, as u < v.
    expect(voter.edges).toEqual([
      [0, 1],
      [0, 2],
      [1, 2],
    ]);
  });

  it('opinion-cascade reads a file directed by default; --undirected overrides', () => {
    const f = edgeFile('default3-oc.txt', DIRECTED3);
    const oc = run('oc-default', ['opinion-cascade', '--graph', f]);
    expect(oc.manifest.directed).toBe(true);
    expect(oc.edges).toHaveLength(3);
    const ocU = run('oc-undirected', ['opinion-cascade', '--graph', f, '--undirected']);
    expect(ocU.manifest.directed).toBe(false);
    expect(ocU.manifest.graph_file.directed).toBe(false);
  });

  it('records a gzip file by its compressed bytes on disk', () => {
    const gz = gzipSync(Buffer.from(DIRECTED3));
    const f = path.join(tmp, 'directed3.txt.gz');
    fs.writeFileSync(f, gz);
    const { manifest } = run('gz', ['voter', '--graph', f, '--directed']);
    expect(manifest.graph_file.format).toBe('gzip-text');
    expect(manifest.graph_file.bytes).toBe(gz.length);
    expect(manifest.graph_file.sha256).toBe(createHash('sha256').update(gz).digest('hex'));
  });
});

describe('socsim run --graph: ids', () => {
  it('a line that is not an edge is an error under the default --ids int', () => {
    const f = edgeFile('garbage.txt', '0 1\n1 2\nthis is not an edge\n2 3\n');
    refused(['voter', '--graph', f], /garbage\.txt line 3: node id "this" is not an integer.*--ids name/);
  });

  it('--ids name reads every token as a name, numbered in order of first appearance', () => {
    const f = edgeFile('names.csv', 'source,target\nalice,bob\nbob,7\n7,alice\n');
    const { manifest, edges } = run('names', ['opinion-cascade', '--graph', f, '--ids', 'name']);
    expect(manifest.graph_file.ids).toBe('name');
    expect(manifest.graph_file.nodes).toBe(3);
    expect(edges).toEqual([
      [0, 1],
      [1, 2],
      [2, 0],
    ]);
  });

  it('refuses --ids, --directed and --undirected without --graph', () => {
    refused(['voter', '--directed'], /--directed.*--graph FILE/);
    refused(['voter', '--ids', 'name'], /--ids.*--graph FILE/);
  });

  it('refuses an unknown --ids mode, both directions at once, and --set graph.* with --graph', () => {
    const f = edgeFile('set.txt', DIRECTED3);
    refused(['voter', '--ids', 'names', '--graph', f], /--ids/);
    refused(['voter', '--graph', f, '--directed', '--undirected'], /--directed.*--undirected/);
    refused(['voter', '--graph', f, '--set', 'graph.kind=erdos-renyi'], /--set graph\..*--graph.*--directed/);
  });

  it('refuses --ids name with --agents', () => {
    const f = edgeFile('names-agents.txt', 'alice bob\n');
    refused(['voter', '--graph', f, '--ids', 'name', '--agents', '3'], /--ids name.*--agents/);
  });

  it('--help describes --ids, --directed and --undirected', () => {
    const r = socsim(['run', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--ids <mode>/);
    expect(r.stdout).toMatch(/--directed/);
    expect(r.stdout).toMatch(/--undirected/);
  });
});

describe('an edge list that cleaning empties', () => {
  it('is refused with the counts of what was dropped, instead of running on a graph with no edges', () => {
    const file = edgeFile('loops.txt', '1 1\n2 2\n3 3\n2 2\n');
    const out = path.join(tmp, 'loops-run');
    const r = socsim(['run', 'voter', '--graph', file, '--steps', '1', '--out', out, '--quiet']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([`socsim: edge list ${file} has no edges (all 4 of its edges were dropped in cleaning: 4 self loops (a node to itself), 0 duplicates); add one edge per line as two node ids, e.g. "0 1"`]);
    expect(fs.existsSync(out)).toBe(false);
  });
});
