/**
 * Loads a real follow/contact graph from a file into two dense Int32 columns (`src`, `dst`) on
 * SharedArrayBuffer.
 *
 * Formats (chosen by content, then extension):
 * - Arrow IPC (file or stream): extension `.arrow`, `.feather`, `.arrows`, `.ipc`, or the magic
 *   bytes `ARROW1` / a stream's 0xFFFFFFFF prefix. Columns `source`/`target`, else `src`/`dst`, else
 *   `from`/`to` (case-insensitive), else the first two columns: integer, float (whole numbers) or
 *   utf8 / dictionary-of-utf8 columns; under ids 'int' strings must be plain digits.
 * - gzip-compressed text (magic 1f 8b, e.g. SNAP's `.txt.gz`): decompressed while reading.
 * - Text: one edge per line, `source target [anything else]`. Fields are separated by a comma, a tab
 *   or runs of spaces/tabs (spaces around a comma are allowed); columns after the second (weights,
 *   timestamps) are ignored; `\r\n` line endings and a UTF-8 BOM are fine; fields may be
 *   "double-quoted". Blank lines and lines starting with `#` or `%` are skipped (they still count
 *   in line numbers). Read in chunks and parsed from bytes, so files of many GiB work.
 *
 * Ids (`ids`, the CLI's `--ids`; never guessed from the data):
 * - 'int' (default): every id must be plain digits (`0`, `42`, `007`), at most 2^53-1. Any other
 *   token is an error naming the file and line: `-3`, `3.5`, `1e6`, `+4` because they are not
 *   non-negative integers, `alice` or `u123` with the hint to use `--ids name`. Without `agents`,
 *   ids are renumbered to 0..n-1 in increasing numeric order (ids that already are 0..n-1 keep their
 *   values) and `externalIds` (Float64Array) gives the original id of each dense id. With `agents`,
 *   ids must be in 0..agents-1 and are used as-is (`externalIds` null).
 * - 'name': every token is a name, digits included, taken as written (quotes removed); names are
 *   numbered 0..n-1 in order of first appearance and `externalIds` is string[]. Not with `agents`.
 *
 * Header (text only): the first line that is not blank or a comment may be a header, and is
 * skipped when
 * - ids 'int': one of its first two fields is not a number at all (`source,target`,
 *   `FromNodeId ToNodeId`, `1 alice`). A number that is not a valid id (`-3`) is an error there too.
 * - ids 'name': both of its first two fields are column-like words (source/target, src/dst,
 *   from/to, node1/node2, user_id, follower/followee, ...), since `alice bob` may be a real edge.
 * Only that line: the same fields on any later line are an error ('int') or an edge ('name').
 *
 * Cleaning (directed and undirected alike): self loops are dropped; duplicate edges are dropped,
 * keeping the first occurrence in file order (directed: same src and dst; undirected: same pair in
 * either orientation). Kept edges stay in file order and orientation; for undirected graphs the
 * caller symmetrises. Counts are in `dropped`.
 *
 * Direction (`directed`, default true): a line `a b` is the edge a -> b ("a follows b"); with
 * false it is one undirected tie and the caller stores it both ways.
 *
 * The result names the file as read (`file`: format, size, SHA-256 of the bytes on disk, hashed
 * while they are read, compressed bytes for gzip); `edgeFileRecord` turns it into the manifest's
 * `graph_file`.
 *
 * Every bad input throws an InputError whose message is one line naming the file, the 1-based line
 * (text; comment and blank lines count) or row (Arrow), and the fix.
 *
 * Where things are: this file detects the format and dispatches; textSource.ts (bytes, gzip,
 * chunks), textTokens.ts (fields of a line), readText.ts (text parser, header rule),
 * readArrowEdges.ts, resolveIds.ts (ids -> 0..n-1), cleanEdges.ts, edgeErrors.ts (messages).
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { extname } from 'node:path';
import { InputError, isInputError } from '../sim-core/errors.ts';
import type { DenseEdges } from './cleanEdges.ts';
import { HARD_MAX_EDGES, I32_MAX, noEdges, oneLine, unreadable, type IdsMode, type ReadConfig } from './edgeErrors.ts';
import { readArrowEdges } from './readArrowEdges.ts';
import { readTextEdges } from './readText.ts';
import { fileSource, gzipSource } from './textSource.ts';

export type { IdsMode };

/** The file an edge list was read from. */
export interface EdgeFile {
  path: string;
  format: 'text' | 'gzip-text' | 'arrow';
  /** Size on disk. */
  bytes: number;
  /** SHA-256 (hex) of the bytes on disk (compressed bytes for gzip), taken while reading them. */
  sha256: string;
}

export interface EdgeList extends DenseEdges {
  ids: IdsMode;
  file: EdgeFile;
}

/** What a run manifest records of a loaded graph file (snake_case, like the manifest). */
export interface EdgeFileRecord {
  path: string;
  format: EdgeFile['format'];
  bytes: number;
  sha256: string;
  ids: IdsMode;
  directed: boolean;
  nodes: number;
  /** Edges kept (an undirected edge once). */
  edges: number;
  dropped: { self_loops: number; duplicates: number };
}

export function edgeFileRecord(g: EdgeList): EdgeFileRecord {
  return {
    ...g.file,
    ids: g.ids,
    directed: g.directed,
    nodes: g.nodes,
    edges: g.src.length,
    dropped: { self_loops: g.dropped.selfLoops, duplicates: g.dropped.duplicates },
  };
}

export interface LoadEdgeListOptions {
  /** How ids are read: 'int' (default; any other token is an error) or 'name' (every token). */
  ids?: IdsMode;
  /** Use file ids as agent ids; they must be integers in 0..agents-1 (`ids: 'int'` only). */
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
  const ids = options.ids ?? 'int';
  if (ids !== 'int' && ids !== 'name') {
    throw new InputError(`ids must be "int" or "name" to load ${path}, got ${JSON.stringify(options.ids)}`);
  }
  if (ids === 'name' && options.agents !== undefined) {
    throw new InputError(
      `--ids name cannot be combined with --agents for ${path}: names are numbered 0..n-1 in order of first appearance; drop --agents, or use integer ids 0..agents-1 with --ids int`,
    );
  }
  const cfg: ReadConfig = {
    path,
    ids,
    agents,
    directed: options.directed ?? true,
    maxEdges: Math.min(maxEdges, HARD_MAX_EDGES),
    chunkBytes,
  };

  const hash = createHash('sha256');
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
    if (isInputError(err)) throw err;
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
    const edges = kept(cfg, readArrowEdges(cfg, bytes));
    return { ...edges, ids, file: { path, format: 'arrow', bytes: bytes.length, sha256: hash.update(bytes).digest('hex') } };
  }
  if (magic.startsWith('PAR1')) {
    closeSync(fd);
    throw new InputError(`${path} is a Parquet file, which is not supported; convert it to Arrow IPC (.arrow) or CSV`);
  }
  const gzip = headLen >= 2 && head[0] === 0x1f && head[1] === 0x8b;
  if (gzip) closeSync(fd);
  const source = gzip ? gzipSource(path, hash) : fileSource(path, fd, hash);
  const edges = kept(cfg, await readTextEdges(cfg, source, gzip ? size * 4 : size));
  return { ...edges, ids, file: { path, format: gzip ? 'gzip-text' : 'text', bytes: size, sha256: hash.digest('hex') } };
}

/** The cleaned edges, unless cleaning left none: a graph of lone nodes is never what was meant. */
function kept<E extends { src: Int32Array; dropped: { selfLoops: number; duplicates: number } }>(cfg: ReadConfig, e: E): E {
  if (e.src.length > 0) return e;
  const { selfLoops, duplicates } = e.dropped;
  throw noEdges(cfg, `all ${selfLoops + duplicates} of its edges were dropped in cleaning: ${selfLoops} self loops (a node to itself), ${duplicates} duplicates`);
}
