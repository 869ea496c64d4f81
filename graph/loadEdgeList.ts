/**
 * Loads a real follow/contact graph from a file into two dense Int32 columns (`src`, `dst`) on
 * SharedArrayBuffer.
 *
 * Formats (chosen by content, then extension):
 * - Arrow IPC (file or stream): extension `.arrow`, `.feather`, `.arrows`, `.ipc`, or the magic
 *   bytes `ARROW1` / a stream's 0xFFFFFFFF prefix. Columns `source`/`target`, else `src`/`dst`, else
 *   `from`/`to` (case-insensitive), else the first two columns. Integer columns (or float columns
 *   holding whole numbers) give numeric ids; utf8 / dictionary-of-utf8 columns give names.
 * - gzip-compressed text (magic 1f 8b, e.g. SNAP's `.txt.gz`): decompressed while reading.
 * - Text: one edge per line, `source target [anything else]`. Fields are separated by a comma, a tab
 *   or runs of spaces/tabs (spaces around a comma are allowed); columns after the second (weights,
 *   timestamps) are ignored; `\r\n` line endings and a UTF-8 BOM are fine; fields may be
 *   "double-quoted". Blank lines and lines starting with `#` or `%` are skipped (they still count
 *   in line numbers). Read in chunks and parsed from bytes, so files of many GiB work.
 *
 * Token rules (each id token is judged on its own, so the result never depends on line order):
 * - plain digits (`0`, `42`, `007`) are integer ids; above 2^53-1 is an error;
 * - tokens that look like other numbers (`-3`, `3.5`, `1e6`, `+4`) are errors;
 * - anything else (`alice`, `u123`) is a name.
 * If every id in the file is an integer, ids are numeric: without `agents` they are remapped to
 * 0..n-1 in increasing numeric order (ids that already are 0..n-1 keep their values) and
 * `externalIds` (Float64Array) gives the original id of each dense id. If any id is a name, all ids
 * (digits included) are names, numbered in order of first appearance; `externalIds` is string[].
 * With `agents`, ids must be integers in 0..agents-1 and are used as-is (`externalIds` null).
 *
 * Header: the first non-comment line is skipped as a header when its first two fields are not both
 * integers and the file's ids are numeric (or `agents` is given). In a file of names it is skipped
 * only when both fields are column-like words (source/target, src/dst, from/to, node1/node2,
 * user_id, follower/followee, ...), since `alice bob` may be a real first edge.
 *
 * Cleaning (directed and undirected alike): self loops are dropped; duplicate edges are dropped,
 * keeping the first occurrence in file order (directed: same src and dst; undirected: same pair in
 * either orientation). Kept edges stay in file order and orientation; for undirected graphs the
 * caller symmetrises. Counts are in `dropped`.
 *
 * Every bad input throws an InputError whose message is one line naming the file, the 1-based line
 * (text; comment and blank lines count) or row (Arrow), and the fix.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { extname } from 'node:path';
import { InputError } from '../sim-core/errors.ts';
import type { DenseEdges } from './cleanEdges.ts';
import { HARD_MAX_EDGES, I32_MAX, oneLine, unreadable, type ReadConfig } from './edgeErrors.ts';
import { readArrowEdges } from './readArrowEdges.ts';
import { readTextEdges } from './readText.ts';
import { fileSource, gzipSource } from './textSource.ts';

export type EdgeList = DenseEdges;

export interface LoadEdgeListOptions {
  /** Use file ids as agent ids; they must be integers in 0..agents-1. */
  agents?: number;
  /** Default true. When false, (a,b) and (b,a) are the same edge (kept once, as first read). */
  directed?: boolean;
  /** Refuse files with more edge lines/rows than this. */
  maxEdges?: number;
  /** Internal (tests): bytes read per chunk from text files; default 16 MiB. */
  chunkBytes?: number;
}

const DEFAULT_CHUNK_BYTES = 16 << 20;
const ARROW_EXTENSIONS = new Set(['.arrow', '.feather', '.arrows', '.ipc']);

export async function loadEdgeList(path: string, options: LoadEdgeListOptions = {}): Promise<EdgeList> {
  try {
    return await load(path, options);
  } catch (err) {
    // Typed-array allocations for a graph too big for this machine: a resource problem, not a bug.
    if (err instanceof RangeError && /allocation failed|Invalid typed array length|Array buffer/i.test(err.message)) {
      throw new InputError(`not enough memory to load edge list ${path} (${oneLine(err.message)}); load a smaller graph or use a machine with more memory`);
    }
    throw err;
  }
}

async function load(path: string, options: LoadEdgeListOptions): Promise<EdgeList> {
  const agents = options.agents ?? 0;
  if (options.agents !== undefined && !(Number.isInteger(agents) && agents >= 1 && agents <= I32_MAX)) {
    throw new InputError(`agents must be an integer in 1..${I32_MAX} to load ${path}, got ${options.agents}`);
  }
  const maxEdges = options.maxEdges ?? HARD_MAX_EDGES;
  if (!(Number.isInteger(maxEdges) && maxEdges >= 0)) {
    throw new InputError(`maxEdges must be a non-negative integer to load ${path}, got ${options.maxEdges}`);
  }
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  if (!(Number.isInteger(chunkBytes) && chunkBytes >= 8 && chunkBytes < 2 ** 30)) {
    throw new InputError(`chunkBytes must be an integer in 8..2^30, got ${options.chunkBytes}`);
  }
  const cfg: ReadConfig = {
    path,
    agents,
    directed: options.directed ?? true,
    maxEdges: Math.min(maxEdges, HARD_MAX_EDGES),
    chunkBytes,
  };

  let fd: number;
  let size: number;
  const head = Buffer.alloc(8);
  let headLen: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw unreadable(path, err);
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new InputError(`cannot read edge list ${path}: it is a directory; pass an edge list file`);
    size = st.size;
    headLen = readSync(fd, head, 0, 8, 0);
  } catch (err) {
    closeSync(fd);
    if (err instanceof InputError) throw err;
    throw unreadable(path, err);
  }
  const magic = head.toString('latin1', 0, headLen);
  const ext = extname(path).toLowerCase();
  if (
    magic.startsWith('ARROW1') ||
    (headLen >= 4 && head.readUInt32LE(0) === 0xffffffff) ||
    ARROW_EXTENSIONS.has(ext)
  ) {
    if (magic.startsWith('FEA1')) {
      closeSync(fd);
      throw new InputError(`${path} is a Feather v1 file, which is not supported; re-save it as Feather v2 / Arrow IPC (e.g. pyarrow.feather.write_feather)`);
    }
    closeSync(fd);
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (err) {
      throw unreadable(path, err);
    }
    return readArrowEdges(cfg, bytes);
  }
  if (magic.startsWith('PAR1')) {
    closeSync(fd);
    throw new InputError(`${path} is a Parquet file, which is not supported; convert it to Arrow IPC (.arrow) or CSV`);
  }
  if (headLen >= 2 && head[0] === 0x1f && head[1] === 0x8b) {
    closeSync(fd);
    return readTextEdges(cfg, () => gzipSource(path), size * 4);
  }
  let first = true;
  return readTextEdges(
    cfg,
    () => {
      if (!first) {
        try {
          fd = openSync(path, 'r');
        } catch (err) {
          throw unreadable(path, err);
        }
      }
      first = false;
      return fileSource(path, fd);
    },
    size,
  );
}

