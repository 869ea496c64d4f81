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
import { closeSync, createReadStream, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { extname } from 'node:path';
import { createGunzip } from 'node:zlib';
import { DataType, Precision, tableFromIPC } from 'apache-arrow';
import type { Table as ArrowTable, Vector } from 'apache-arrow';
import { InputError } from '../sim-core/errors.ts';
import { sharedArray } from '../sim-core/table.ts';

export interface EdgeList {
  /** Number of distinct nodes after remapping, or the given agent count. */
  nodes: number;
  /** Edge k is src[k] -> dst[k], dense ids 0..nodes-1; on SharedArrayBuffer. */
  src: Int32Array;
  dst: Int32Array;
  /** externalIds[dense] = id in the file; null when ids were used as-is (`agents` given). */
  externalIds: Float64Array | string[] | null;
  directed: boolean;
  /** Edges removed while loading. */
  dropped: { selfLoops: number; duplicates: number };
}

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

const MAX_ID = Number.MAX_SAFE_INTEGER;
const I32_MAX = 0x7fffffff;
const HARD_MAX_EDGES = 0x7fffffff;
const DEFAULT_CHUNK_BYTES = 16 << 20;
const BATCH = 256;
const ARROW_EXTENSIONS = new Set(['.arrow', '.feather', '.arrows', '.ipc']);

// Token kinds.
const K_INT = 0;
const K_NAME = 1;
const K_NEG = 2;
const K_FRAC = 3;
const K_BIG = 4;

// Tokenizer results.
const T_OK = 0;
const T_ONE_FIELD = 1;
const T_EMPTY = 2;
const T_QUOTE = 3;

/** Column-like words: a first line of two of these is a header even in a file of names. */
const HEADER_WORD = new RegExp(
  `^(${[
    'source', 'target', 'src', 'dst', 'dest', 'destination', 'from', 'to', 'u', 'v', 'head', 'tail',
    'sender', 'receiver', 'recipient', 'follower', 'followee', 'following', 'followed', 'user', 'friend',
    'node', 'vertex', 'id', 'name', 'caller', 'callee', 'origin', 'start', 'end', 'in', 'out', 'left',
    'right', 'ego', 'alter', 'actor', 'subject', 'object', 'parent', 'child',
  ].join('|')})s?([ _.-]?(id|ids|name|node|user|vertex|key|idx|index))?([ _.-]?([12]|a|b))?$`,
  'i',
);

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
  const cfg: Config = {
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
    return loadArrow(cfg);
  }
  if (magic.startsWith('PAR1')) {
    closeSync(fd);
    throw new InputError(`${path} is a Parquet file, which is not supported; convert it to Arrow IPC (.arrow) or CSV`);
  }
  if (headLen >= 2 && head[0] === 0x1f && head[1] === 0x8b) {
    closeSync(fd);
    return loadText(cfg, () => gzipSource(path), size * 4);
  }
  let first = true;
  return loadText(
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

// ---------------------------------------------------------------------------------------------
// Shared helpers

interface Config {
  path: string;
  agents: number;
  directed: boolean;
  maxEdges: number;
  chunkBytes: number;
}

function oneLine(s: string): string {
  return s.replace(/\s*[\r\n]+\s*/g, ' ').trim().replace(/\.$/, '');
}

function unreadable(path: string, err: unknown): InputError {
  const msg = err instanceof Error ? err.message : String(err);
  return new InputError(`cannot read edge list ${path}: ${oneLine(msg)}; check the path and permissions`);
}

function quoteSnippet(s: string): string {
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}...` : s);
}

function tooManyEdges(cfg: Config, where: string): InputError {
  if (cfg.maxEdges >= HARD_MAX_EDGES) {
    return new InputError(`${cfg.path} ${where}: more than ${HARD_MAX_EDGES} edges, the most one edge list can hold; split or sample the graph`);
  }
  return new InputError(`${cfg.path} ${where}: more than ${cfg.maxEdges} edges (maxEdges ${cfg.maxEdges}); raise maxEdges or load a smaller graph`);
}

function noEdges(cfg: Config, what: string): InputError {
  return new InputError(`edge list ${cfg.path} has no edges (${what}); add one edge per line as two node ids, e.g. "0 1"`);
}

function outOfRange(cfg: Config, where: string, id: number | string): InputError {
  return new InputError(
    `${cfg.path} ${where}: node id ${id} is out of range 0..${cfg.agents - 1} for --agents ${cfg.agents}; drop --agents to number nodes from the file`,
  );
}

function notInteger(cfg: Config, where: string, token: string): InputError {
  return new InputError(
    `${cfg.path} ${where}: node id ${quoteSnippet(token)} is not an integer, but --agents ${cfg.agents} needs ids 0..${cfg.agents - 1}; drop --agents to number nodes from the file`,
  );
}

function badNumber(cfg: Config, where: string, kind: number, token: string): InputError {
  if (kind === K_BIG) {
    return new InputError(
      `${cfg.path} ${where}: node id ${token} is above 2^53-1 (${MAX_ID}); renumber the ids, or prefix them with a letter to load them as names`,
    );
  }
  const what = kind === K_NEG ? 'is negative' : 'is not an integer';
  const fix = where.startsWith('row') ? 'fix or drop the row' : 'fix or remove the line';
  return new InputError(
    `${cfg.path} ${where}: node id ${token} ${what}; ids must be non-negative integers (plain digits) or names; ${fix}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Growable raw edge arrays (Int32 while every id fits, Float64 once an id exceeds 2^31-1).

class EdgeBuffer {
  src: Int32Array | Float64Array;
  dst: Int32Array | Float64Array;
  m = 0;
  wide = false;
  constructor(
    private readonly cfg: Config,
    initial: number,
  ) {
    const cap = Math.max(0, Math.min(initial, cfg.maxEdges));
    this.src = new Int32Array(cap);
    this.dst = new Int32Array(cap);
  }

  /** Makes room for one more edge; `where` names the line/row being added. */
  grow(where: string): void {
    if (this.m >= this.cfg.maxEdges) throw tooManyEdges(this.cfg, where);
    const cap = Math.min(Math.max(1024, this.src.length * 2), this.cfg.maxEdges);
    this.src = this.resize(this.src, cap);
    this.dst = this.resize(this.dst, cap);
  }

  private resize(a: Int32Array | Float64Array, cap: number): Int32Array | Float64Array {
    const b = this.wide ? new Float64Array(cap) : new Int32Array(cap);
    b.set(a.subarray(0, this.m));
    return b;
  }

  widen(): void {
    if (this.wide) return;
    this.wide = true;
    this.src = this.resize(this.src, this.src.length);
    this.dst = this.resize(this.dst, this.dst.length);
  }

  reset(): void {
    this.m = 0;
    if (this.wide) {
      this.wide = false;
      this.src = new Int32Array(this.src.length);
      this.dst = new Int32Array(this.dst.length);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Name interning keyed by bytes: a string is decoded once per distinct name.

function hashBytes(u8: Uint8Array, s: number, e: number): number {
  let h = 0x811c9dc5 | 0;
  for (let i = s; i < e; i++) h = Math.imul(h ^ u8[i], 0x01000193);
  // FNV's low bits mix poorly and the table is indexed by them: finish with murmur3's fmix32.
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * Open-addressing table of names. A slot is 8 ints: hash, id (-1 empty), byte length, offset of
 * bytes 16.. in `tail`, then the first 16 bytes packed in four words, so most names are found and
 * verified with one memory access. Callers that can should `touch` the slots of a batch of hashes
 * first: the independent loads overlap, which matters once the table outgrows the caches.
 */
class NameTable {
  names: string[] = [];
  n = 0;
  slots = new Int32Array(8 << 12).fill(-1);
  mask = (1 << 12) - 1;
  private tail = new Uint8Array(1 << 12);
  private used = 0;

  /** Loads the slots for `count` hashes (returns a value only so the loads are not dropped). */
  touch(hashes: Int32Array, count: number): number {
    const slots = this.slots;
    const mask = this.mask;
    let acc = 0;
    for (let j = 0; j < count; j++) acc ^= slots[(hashes[j] & mask) << 3];
    return acc;
  }

  /** Id of the name in bytes u8[s, e) (buf: the same bytes as a Buffer); h = hashBytes(u8, s, e). */
  intern(u8: Uint8Array, buf: Buffer, s: number, e: number, h: number): number {
    const len = e - s;
    let w0 = 0;
    let w1 = 0;
    let w2 = 0;
    let w3 = 0;
    const head = len < 16 ? len : 16;
    for (let k = 0; k < head; k++) {
      const v = u8[s + k] << ((k & 3) << 3);
      const q = k >> 2;
      if (q === 0) w0 |= v;
      else if (q === 1) w1 |= v;
      else if (q === 2) w2 |= v;
      else w3 |= v;
    }
    const slots = this.slots;
    const mask = this.mask;
    let idx = h & mask;
    for (;;) {
      const p = idx << 3;
      const id = slots[p + 1];
      if (id < 0) break;
      if (
        slots[p] === h &&
        slots[p + 2] === len &&
        slots[p + 4] === w0 &&
        slots[p + 5] === w1 &&
        slots[p + 6] === w2 &&
        slots[p + 7] === w3
      ) {
        if (len <= 16) return id;
        const o = slots[p + 3] - 16;
        const tail = this.tail;
        let k = 16;
        while (k < len && tail[o + k] === u8[s + k]) k++;
        if (k === len) return id;
      }
      idx = (idx + 1) & mask;
    }
    const id = this.n;
    let o = 0;
    if (len > 16) {
      o = this.used;
      const need = o + len - 16;
      if (need > this.tail.length) {
        let cap = this.tail.length * 2;
        while (need > cap) cap *= 2;
        const t = new Uint8Array(cap);
        t.set(this.tail.subarray(0, o));
        this.tail = t;
      }
      this.tail.set(u8.subarray(s + 16, e), o);
      this.used = need;
    }
    const p = idx << 3;
    slots[p] = h;
    slots[p + 1] = id;
    slots[p + 2] = len;
    slots[p + 3] = o;
    slots[p + 4] = w0;
    slots[p + 5] = w1;
    slots[p + 6] = w2;
    slots[p + 7] = w3;
    this.names.push(buf.toString('utf8', s, e));
    this.n = id + 1;
    if (this.n * 2 > mask + 1) this.rehash();
    return id;
  }

  /** Interns a JS string (Arrow input). */
  internString(str: string): number {
    const b = Buffer.from(str, 'utf8');
    return this.intern(b, b, 0, b.length, hashBytes(b, 0, b.length));
  }

  private rehash(): void {
    const old = this.slots;
    const size = (this.mask + 1) * 2;
    const slots = new Int32Array(8 * size).fill(-1);
    const mask = size - 1;
    for (let p = 0; p < old.length; p += 8) {
      if (old[p + 1] < 0) continue;
      let idx = old[p] & mask;
      while (slots[(idx << 3) + 1] >= 0) idx = (idx + 1) & mask;
      slots.set(old.subarray(p, p + 8), idx << 3);
    }
    this.slots = slots;
    this.mask = mask;
  }
}

// ---------------------------------------------------------------------------------------------
// Text input

interface ByteSource {
  read(buf: Buffer, offset: number, length: number): number | Promise<number>;
  close(): void;
}

function fileSource(path: string, fd: number): ByteSource {
  let pos = 0;
  return {
    read(buf, offset, length) {
      let n: number;
      try {
        n = readSync(fd, buf, offset, length, pos);
      } catch (err) {
        throw unreadable(path, err);
      }
      pos += n;
      return n;
    },
    close() {
      closeSync(fd);
    },
  };
}

function gzipSource(path: string): ByteSource {
  const raw = createReadStream(path);
  const gz = createGunzip();
  raw.on('error', (err) => gz.destroy(err));
  raw.pipe(gz);
  const it = gz[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let pending: Buffer | null = null;
  let pendingOff = 0;
  return {
    async read(buf, offset, length) {
      let written = 0;
      while (written < length) {
        if (pending === null || pendingOff >= pending.length) {
          let r: IteratorResult<Buffer>;
          try {
            r = await it.next();
          } catch (err) {
            throw new InputError(
              `cannot read edge list ${path}: gzip data is damaged (${oneLine((err as Error).message)}); re-download or re-compress the file`,
            );
          }
          if (r.done) break;
          pending = r.value;
          pendingOff = 0;
          continue;
        }
        const k = Math.min(length - written, pending.length - pendingOff);
        pending.copy(buf, offset + written, pendingOff, pendingOff + k);
        pendingOff += k;
        written += k;
      }
      return written;
    },
    close() {
      raw.destroy();
      gz.destroy();
    },
  };
}

class TextParser {
  readonly edges: EdgeBuffer;
  names: NameTable | null = null;
  /** Lines fully consumed so far (the current line is line + 1). */
  line = 0;
  /** Whether a data line (edge or header) has been seen: only the first can be a header. */
  seenData = false;
  maxId = -1;
  /** Ids above this leave the fast path (range check or widening). */
  fastLimit: number;
  // Token scratch: [s, e) byte ranges and whether the token had "" escapes.
  private s1 = 0;
  private e1 = 0;
  private x1 = false;
  private s2 = 0;
  private e2 = 0;
  private x2 = false;
  private val = 0;
  // Name mode queues the tokens of up to BATCH lines and interns them together (see NameTable).
  private readonly batchStart = new Int32Array(2 * BATCH);
  private readonly batchEnd = new Int32Array(2 * BATCH);
  private readonly batchHash = new Int32Array(2 * BATCH);
  private readonly batchSide = new Uint8Array(2 * BATCH);
  private readonly batchLine = new Int32Array(BATCH);
  private batched = 0;
  private touched = 0;
  /** Unescaped bytes of quoted names with "" escapes in the batch. */
  private side = Buffer.allocUnsafe(256);
  private sideUsed = 0;

  constructor(
    private readonly cfg: Config,
    initialEdges: number,
  ) {
    this.edges = new EdgeBuffer(cfg, initialEdges);
    this.fastLimit = cfg.agents > 0 ? cfg.agents - 1 : I32_MAX;
  }

  switchToNames(): void {
    this.names = new NameTable();
    this.edges.reset();
    this.line = 0;
    this.seenData = false;
    this.maxId = -1;
  }

  /**
   * Parses the complete lines in u8[i, end) (u8[end-1] is '\n'). Returns false when a name was
   * found in a numeric file: the caller restarts from the beginning in name mode.
   */
  run(u8: Uint8Array, buf: Buffer, i: number, end: number): boolean {
    if (this.names !== null) {
      while (i < end) i = this.slowLine(u8, buf, i);
      this.flush(u8, buf);
      return true;
    }
    return this.runNumeric(u8, buf, i, end);
  }

  /** Fast path for `digits SEP digits [SEP ...] [\r] \n`; anything else goes to slowLine. */
  private runNumeric(u8: Uint8Array, buf: Buffer, i: number, end: number): boolean {
    const eb = this.edges;
    let src = eb.src;
    let dst = eb.dst;
    let cap = src.length;
    let m = eb.m;
    let line = this.line;
    let maxId = this.maxId;
    let lim = this.fastLimit;
    while (i < end) {
      let a = u8[i] - 48;
      if (a >>> 0 < 10) {
        let j = i + 1;
        let d = u8[j] - 48;
        while (d >>> 0 < 10) {
          a = a * 10 + d;
          d = u8[++j] - 48;
        }
        // d + 48 is the byte after the first id: tab, comma or space.
        if (d === -39 || d === -4 || d === -16) {
          let b = u8[++j] - 48;
          if (b >>> 0 < 10) {
            d = u8[++j] - 48;
            while (d >>> 0 < 10) {
              b = b * 10 + d;
              d = u8[++j] - 48;
            }
            // After the second id: '\n', '\r', tab, space or comma.
            if ((d === -38 || d === -35 || d === -39 || d === -16 || d === -4) && a <= lim && b <= lim) {
              while (d !== -38) d = u8[++j] - 48;
              if (m === cap) {
                eb.m = m;
                eb.grow(`line ${line + 1}`);
                src = eb.src;
                dst = eb.dst;
                cap = src.length;
              }
              src[m] = a;
              dst[m] = b;
              m++;
              if (a > maxId) maxId = a;
              if (b > maxId) maxId = b;
              line++;
              i = j + 1;
              continue;
            }
          }
        }
      }
      eb.m = m;
      this.line = line;
      this.maxId = maxId;
      const next = this.slowLine(u8, buf, i);
      if (next < 0) return false;
      i = next;
      src = eb.src;
      dst = eb.dst;
      cap = src.length;
      m = eb.m;
      line = this.line;
      maxId = this.maxId;
      lim = this.fastLimit;
    }
    eb.m = m;
    this.line = line;
    this.maxId = maxId;
    return true;
  }

  /** General parser for one line starting at ls; returns the next line's start, or -1 (restart). */
  private slowLine(u8: Uint8Array, buf: Buffer, ls: number): number {
    const nl = buf.indexOf(10, ls);
    let e = nl;
    if (e > ls && u8[e - 1] === 13) e--;
    const lineNo = this.line + 1;
    let p = ls;
    while (p < e && (u8[p] === 32 || u8[p] === 9)) p++;
    if (p === e || u8[p] === 35 || u8[p] === 37) {
      this.line = lineNo;
      return nl + 1;
    }
    const status = this.tokenize(u8, p, e);
    const cfg = this.cfg;
    const where = `line ${lineNo}`;
    if (status !== T_OK) {
      const text = quoteSnippet(buf.toString('utf8', ls, e));
      if (status === T_EMPTY) throw new InputError(`${cfg.path} ${where}: empty node id in ${text}; fix or remove the line`);
      if (status === T_QUOTE) throw new InputError(`${cfg.path} ${where}: unclosed quote in ${text}; fix or remove the line`);
      throw new InputError(
        `${cfg.path} ${where}: expected two node ids separated by comma, tab or spaces, got ${text}; fix or remove the line`,
      );
    }
    const k1 = this.x1 ? K_NAME : this.classify(u8, this.s1, this.e1);
    const v1 = this.val;
    const k2 = this.x2 ? K_NAME : this.classify(u8, this.s2, this.e2);
    const v2 = this.val;
    if (k1 >= K_NEG) throw badNumber(cfg, where, k1, buf.toString('utf8', this.s1, this.e1));
    if (k2 >= K_NEG) throw badNumber(cfg, where, k2, buf.toString('utf8', this.s2, this.e2));
    const firstDataLine = !this.seenData && this.edges.m === 0; // fast-path lines only add edges
    this.seenData = true;
    const eb = this.edges;

    if (this.names !== null) {
      if (
        firstDataLine &&
        HEADER_WORD.test(this.tokenText(buf, 1)) &&
        HEADER_WORD.test(this.tokenText(buf, 2))
      ) {
        this.line = lineNo;
        return nl + 1;
      }
      if (this.batched === BATCH) this.flush(u8, buf);
      this.queue(u8, 2 * this.batched, this.s1, this.e1, this.x1);
      this.queue(u8, 2 * this.batched + 1, this.s2, this.e2, this.x2);
      this.batchLine[this.batched++] = lineNo;
      this.line = lineNo;
      return nl + 1;
    }

    if (k1 !== K_INT || k2 !== K_INT) {
      if (firstDataLine) {
        this.line = lineNo;
        return nl + 1;
      }
      if (cfg.agents > 0) throw notInteger(cfg, where, this.tokenText(buf, k1 !== K_INT ? 1 : 2));
      return -1;
    }
    if (cfg.agents > 0) {
      if (v1 >= cfg.agents) throw outOfRange(cfg, where, v1);
      if (v2 >= cfg.agents) throw outOfRange(cfg, where, v2);
    } else if ((v1 > I32_MAX || v2 > I32_MAX) && !eb.wide) {
      eb.widen();
      this.fastLimit = MAX_ID;
    }
    if (eb.m === eb.src.length) eb.grow(where);
    eb.src[eb.m] = v1;
    eb.dst[eb.m] = v2;
    eb.m++;
    if (v1 > this.maxId) this.maxId = v1;
    if (v2 > this.maxId) this.maxId = v2;
    this.line = lineNo;
    return nl + 1;
  }

  /** Splits the first two fields of u8[p, e) into s1/e1 and s2/e2. */
  private tokenize(u8: Uint8Array, p: number, e: number): number {
    let q = this.field(u8, p, e, 1);
    if (q < 0) return T_QUOTE;
    if (this.e1 === this.s1) return T_EMPTY;
    let r = q;
    while (r < e && (u8[r] === 32 || u8[r] === 9)) r++;
    let comma = false;
    if (r < e && u8[r] === 44) {
      comma = true;
      r++;
      while (r < e && (u8[r] === 32 || u8[r] === 9)) r++;
    }
    if (r === q) return T_ONE_FIELD; // end of line, or junk right after a closing quote
    if (r === e) return comma ? T_EMPTY : T_ONE_FIELD;
    if (u8[r] === 44) return T_EMPTY;
    q = this.field(u8, r, e, 2);
    if (q < 0) return T_QUOTE;
    if (this.e2 === this.s2) return T_EMPTY;
    if (q < e && u8[q] !== 32 && u8[q] !== 9 && u8[q] !== 44) return T_ONE_FIELD;
    return T_OK;
  }

  private field(u8: Uint8Array, p: number, e: number, which: 1 | 2): number {
    let s = p;
    let t: number;
    let next: number;
    let escaped = false;
    if (u8[p] === 34) {
      s = p + 1;
      let q = s;
      for (;;) {
        if (q >= e) return -1;
        if (u8[q] === 34) {
          if (q + 1 < e && u8[q + 1] === 34) {
            escaped = true;
            q += 2;
            continue;
          }
          break;
        }
        q++;
      }
      t = q;
      next = q + 1;
    } else {
      let q = p;
      while (q < e) {
        const c = u8[q];
        if (c === 32 || c === 9 || c === 44) break;
        q++;
      }
      t = q;
      next = q;
    }
    if (which === 1) {
      this.s1 = s;
      this.e1 = t;
      this.x1 = escaped;
    } else {
      this.s2 = s;
      this.e2 = t;
      this.x2 = escaped;
    }
    return next;
  }

  /** Kind of the non-empty token u8[s, e); sets `val` for integers. */
  private classify(u8: Uint8Array, s: number, e: number): number {
    let v = 0;
    let i = s;
    while (i < e) {
      const d = u8[i] - 48;
      if (d < 0 || d > 9) break;
      v = v * 10 + d;
      i++;
    }
    if (i === e) {
      this.val = v;
      return v > MAX_ID ? K_BIG : K_INT;
    }
    // Looks like a number: [+-] digits [. digits] [e [+-] digits], at least one mantissa digit.
    i = s;
    if (u8[i] === 43 || u8[i] === 45) i++;
    let digits = 0;
    while (i < e && u8[i] >= 48 && u8[i] <= 57) {
      i++;
      digits++;
    }
    if (i < e && u8[i] === 46) {
      i++;
      while (i < e && u8[i] >= 48 && u8[i] <= 57) {
        i++;
        digits++;
      }
    }
    if (digits === 0) return K_NAME;
    if (i < e && (u8[i] === 101 || u8[i] === 69)) {
      i++;
      if (i < e && (u8[i] === 43 || u8[i] === 45)) i++;
      let ed = 0;
      while (i < e && u8[i] >= 48 && u8[i] <= 57) {
        i++;
        ed++;
      }
      if (ed === 0) return K_NAME;
    }
    if (i !== e) return K_NAME;
    return u8[s] === 45 ? K_NEG : K_FRAC;
  }

  private tokenText(buf: Buffer, which: 1 | 2): string {
    const s = which === 1 ? this.s1 : this.s2;
    const e = which === 1 ? this.e1 : this.e2;
    const escaped = which === 1 ? this.x1 : this.x2;
    const t = buf.toString('utf8', s, e);
    return escaped ? t.replaceAll('""', '"') : t;
  }

  /** Puts a name token into batch slot t (escaped ones are unescaped into `side`). */
  private queue(u8: Uint8Array, t: number, s: number, e: number, escaped: boolean): void {
    if (!escaped) {
      this.batchStart[t] = s;
      this.batchEnd[t] = e;
      this.batchSide[t] = 0;
      this.batchHash[t] = hashBytes(u8, s, e);
      return;
    }
    if (this.side.length < this.sideUsed + (e - s)) {
      const bigger = Buffer.allocUnsafe(2 * (this.sideUsed + (e - s)));
      this.side.copy(bigger, 0, 0, this.sideUsed);
      this.side = bigger;
    }
    const out = this.side;
    const start = this.sideUsed;
    let n = start;
    for (let i = s; i < e; i++) {
      out[n++] = u8[i];
      if (u8[i] === 34) i++; // "" -> "
    }
    this.sideUsed = n;
    this.batchStart[t] = start;
    this.batchEnd[t] = n;
    this.batchSide[t] = 1;
    this.batchHash[t] = hashBytes(out, start, n);
  }

  /** Interns the queued tokens in file order and appends their edges. */
  private flush(u8: Uint8Array, buf: Buffer): void {
    const count = this.batched;
    if (count === 0) return;
    const names = this.names as NameTable;
    const eb = this.edges;
    const starts = this.batchStart;
    const ends = this.batchEnd;
    const hashes = this.batchHash;
    const sides = this.batchSide;
    const side = this.side;
    this.touched = names.touch(hashes, 2 * count);
    for (let j = 0; j < count; j++) {
      const t = 2 * j;
      const a =
        sides[t] === 0
          ? names.intern(u8, buf, starts[t], ends[t], hashes[t])
          : names.intern(side, side, starts[t], ends[t], hashes[t]);
      const b =
        sides[t + 1] === 0
          ? names.intern(u8, buf, starts[t + 1], ends[t + 1], hashes[t + 1])
          : names.intern(side, side, starts[t + 1], ends[t + 1], hashes[t + 1]);
      if (eb.m === eb.src.length) eb.grow(`line ${this.batchLine[j]}`);
      eb.src[eb.m] = a;
      eb.dst[eb.m] = b;
      eb.m++;
    }
    this.batched = 0;
    this.sideUsed = 0;
  }
}

async function loadText(cfg: Config, open: () => ByteSource, sizeHint: number): Promise<EdgeList> {
  const parser = new TextParser(cfg, Math.min(Math.max(1024, Math.floor(sizeHint / 12)), 1 << 26));
  if (!(await readAll(cfg, parser, open()))) {
    // A name appeared after numeric ids: read again from the start with every id as a name.
    parser.switchToNames();
    await readAll(cfg, parser, open());
  }
  const eb = parser.edges;
  if (eb.m === 0) {
    const lines = parser.line;
    throw noEdges(cfg, lines === 0 ? 'the file is empty' : `${lines} line${lines === 1 ? '' : 's'} of comments, blanks or a header only`);
  }
  let src: Int32Array;
  let dst: Int32Array;
  let nodes: number;
  let externalIds: Float64Array | string[] | null;
  if (cfg.agents > 0) {
    src = eb.src as Int32Array;
    dst = eb.dst as Int32Array;
    nodes = cfg.agents;
    externalIds = null;
  } else if (parser.names !== null) {
    src = eb.src as Int32Array;
    dst = eb.dst as Int32Array;
    nodes = parser.names.n;
    externalIds = parser.names.names;
  } else {
    const r = remapNumeric(eb.src, eb.dst, eb.m, parser.maxId);
    src = r.src;
    dst = r.dst;
    nodes = r.ids.length;
    externalIds = r.ids;
  }
  return clean(src, dst, eb.m, nodes, externalIds, cfg.directed);
}

/** Reads the whole source through the parser; false when the parser asks for a restart. */
async function readAll(cfg: Config, parser: TextParser, source: ByteSource): Promise<boolean> {
  let buf = Buffer.allocUnsafe(cfg.chunkBytes + 1);
  let u8 = new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
  let carry = 0;
  let first = true;
  try {
    for (;;) {
      const r = source.read(buf, carry, buf.length - 1 - carry);
      let n = typeof r === 'number' ? r : await r;
      if (first && carry === 0 && n >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) {
        buf.copyWithin(0, 3, n);
        n -= 3;
      }
      first = false;
      if (n === 0) {
        if (carry > 0) {
          buf[carry] = 10;
          return parser.run(u8, buf, 0, carry + 1);
        }
        return true;
      }
      const end = carry + n;
      const nl = buf.lastIndexOf(10, end - 1);
      if (nl < 0) {
        carry = end;
        if (carry === buf.length - 1) {
          // A single line longer than the buffer: double the buffer.
          const bigger = Buffer.allocUnsafe(buf.length * 2);
          buf.copy(bigger, 0, 0, carry);
          buf = bigger;
          u8 = new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
        }
        continue;
      }
      if (!parser.run(u8, buf, 0, nl + 1)) return false;
      carry = end - nl - 1;
      buf.copyWithin(0, nl + 1, end);
    }
  } finally {
    source.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Remapping and cleaning

/** Numeric ids -> dense 0..n-1 in increasing id order. Reuses the arrays when they are Int32. */
function remapNumeric(
  rawSrc: Int32Array | Float64Array,
  rawDst: Int32Array | Float64Array,
  m: number,
  maxId: number,
): { src: Int32Array; dst: Int32Array; ids: Float64Array } {
  if (rawSrc instanceof Int32Array && rawDst instanceof Int32Array && maxId < Math.max(1 << 28, 32 * m)) {
    // Presence bitmap over 0..maxId plus a rank prefix per 32-bit word: dense id = rank of the id.
    // Both fit in cache far better than an Int32 table over all ids (random ids stay fast).
    const src = rawSrc;
    const dst = rawDst;
    const words = (maxId >>> 5) + 1;
    const bits = new Int32Array(words);
    for (let k = 0; k < m; k++) {
      const s = src[k];
      const d = dst[k];
      bits[s >>> 5] |= 1 << (s & 31);
      bits[d >>> 5] |= 1 << (d & 31);
    }
    const before = new Int32Array(words);
    let n = 0;
    for (let w = 0; w < words; w++) {
      before[w] = n;
      n += popcount(bits[w]);
    }
    const ids = new Float64Array(n);
    if (n === maxId + 1) {
      for (let v = 0; v < n; v++) ids[v] = v;
      return { src, dst, ids };
    }
    for (let w = 0, d = 0; w < words; w++) {
      let x = bits[w];
      while (x !== 0) {
        const low = x & -x;
        ids[d++] = w * 32 + (31 - Math.clz32(low));
        x ^= low;
      }
    }
    for (let k = 0; k < m; k++) {
      const s = src[k];
      const ws = s >>> 5;
      src[k] = before[ws] + popcount(bits[ws] & ((1 << (s & 31)) - 1));
      const d = dst[k];
      const wd = d >>> 5;
      dst[k] = before[wd] + popcount(bits[wd] & ((1 << (d & 31)) - 1));
    }
    return { src, dst, ids };
  }
  // Sparse or huge ids: hash to first-appearance indices, then rank the distinct ids.
  const src = rawSrc instanceof Int32Array ? rawSrc : new Int32Array(m);
  const dst = rawDst instanceof Int32Array ? rawDst : new Int32Array(m);
  const h = new NumberIndex();
  for (let k = 0; k < m; k++) {
    src[k] = h.indexOf(rawSrc[k]);
    dst[k] = h.indexOf(rawDst[k]);
  }
  const n = h.n;
  const ids = h.keys.slice(0, n).sort();
  const rank = new Int32Array(n);
  for (let r = 0; r < n; r++) rank[h.indexOf(ids[r])] = r;
  for (let k = 0; k < m; k++) {
    src[k] = rank[src[k]];
    dst[k] = rank[dst[k]];
  }
  return { src, dst, ids };
}

/** Open-addressing map from integer-valued doubles (0..2^53-1) to first-appearance indices. */
class NumberIndex {
  keys = new Float64Array(1 << 12);
  n = 0;
  private slots = new Int32Array(1 << 14).fill(-1);
  private mask = (1 << 14) - 1;

  indexOf(v: number): number {
    const slots = this.slots;
    const keys = this.keys;
    const mask = this.mask;
    let idx = hashNumber(v) & mask;
    for (;;) {
      const id = slots[idx];
      if (id < 0) break;
      if (keys[id] === v) return id;
      idx = (idx + 1) & mask;
    }
    const id = this.n++;
    if (id === keys.length) {
      const k2 = new Float64Array(keys.length * 2);
      k2.set(keys);
      this.keys = k2;
    }
    this.keys[id] = v;
    slots[idx] = id;
    if (this.n * 2 > slots.length) this.rehash();
    return id;
  }

  private rehash(): void {
    const size = this.slots.length * 2;
    const slots = new Int32Array(size).fill(-1);
    const mask = size - 1;
    for (let id = 0; id < this.n; id++) {
      let idx = hashNumber(this.keys[id]) & mask;
      while (slots[idx] >= 0) idx = (idx + 1) & mask;
      slots[idx] = id;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

function popcount(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

function pairHash(x: number, y: number): number {
  let h = Math.imul(x, 0x9e3779b1) ^ y;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function hashNumber(v: number): number {
  const lo = v >>> 0;
  const hi = (v / 4294967296) >>> 0;
  let h = Math.imul(lo ^ Math.imul(hi, 0x27d4eb2d), 0x9e3779b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x85ebca6b);
  return h ^ (h >>> 13);
}

/**
 * Drops self loops and duplicates (first occurrence kept, file order preserved) and copies the
 * kept edges into exact-length shared arrays.
 *
 * Files sorted by (source, target) are recognised in one pass. Otherwise edges are partitioned by
 * the top bits of a hash of their (ordered, or for undirected sorted) endpoint pair into buckets of
 * about 16K edges, keeping file order inside each bucket, and each bucket is deduplicated with a
 * small open-addressing table that stays in cache: O(m), no per-node arrays, no sorting.
 */
function clean(
  a: Int32Array,
  b: Int32Array,
  m: number,
  nodes: number,
  externalIds: Float64Array | string[] | null,
  directed: boolean,
): EdgeList {
  let selfLoops = 0;
  let sorted = true;
  let px = -1;
  let py = -1;
  for (let k = 0; k < m; k++) {
    let x = a[k];
    let y = b[k];
    if (x === y) {
      selfLoops++;
      continue;
    }
    if (!directed && y < x) {
      const t = x;
      x = y;
      y = t;
    }
    if (x < px || (x === px && y <= py)) {
      sorted = false;
      break;
    }
    px = x;
    py = y;
  }
  let dups: Int32Array = new Int32Array(0);
  if (!sorted) {
    selfLoops = 0;
    let logB = 0;
    while (65536 * 2 ** logB < m && logB < 16) logB++;
    const buckets = 2 ** logB;
    const shift = 32 - logB;
    const start = new Int32Array(buckets + 1);
    for (let k = 0; k < m; k++) {
      let x = a[k];
      let y = b[k];
      if (x === y) {
        selfLoops++;
        continue;
      }
      if (!directed && y < x) {
        const t = x;
        x = y;
        y = t;
      }
      start[(logB === 0 ? 0 : pairHash(x, y) >>> shift) + 1]++;
    }
    let largest = 0;
    for (let i = 0; i < buckets; i++) {
      if (start[i + 1] > largest) largest = start[i + 1];
      start[i + 1] += start[i];
    }
    // entries[2p] = edge index, entries[2p+1] = pair hash, grouped by bucket, file order inside.
    const entries = new Int32Array(2 * (m - selfLoops));
    for (let k = 0; k < m; k++) {
      let x = a[k];
      let y = b[k];
      if (x === y) continue;
      if (!directed && y < x) {
        const t = x;
        x = y;
        y = t;
      }
      const h = pairHash(x, y);
      const p = 2 * start[logB === 0 ? 0 : h >>> shift]++;
      entries[p] = k;
      entries[p + 1] = h;
    }
    // start[i] is now the end of bucket i.
    let size = 2;
    while (size < 2 * largest) size *= 2;
    const slots = new Int32Array(size);
    let found = new Int32Array(1024);
    let nd = 0;
    for (let i = 0, g = 0; i < buckets; i++) {
      const end = start[i];
      let sz = 2;
      while (sz < 2 * (end - g)) sz *= 2;
      const mask = sz - 1;
      slots.fill(-1, 0, sz);
      for (; g < end; g++) {
        const h = entries[2 * g + 1];
        let idx = h & mask;
        for (;;) {
          const o = slots[idx];
          if (o < 0) {
            slots[idx] = g;
            break;
          }
          if (entries[2 * o + 1] === h) {
            const k1 = entries[2 * o];
            const k2 = entries[2 * g];
            const x1 = a[k1];
            const y1 = b[k1];
            const x2 = a[k2];
            const y2 = b[k2];
            if ((x1 === x2 && y1 === y2) || (!directed && x1 === y2 && y1 === x2)) {
              if (nd === found.length) {
                const f2 = new Int32Array(nd * 2);
                f2.set(found);
                found = f2;
              }
              found[nd++] = k2;
              break;
            }
          }
          idx = (idx + 1) & mask;
        }
      }
    }
    dups = found.subarray(0, nd).sort();
  }
  const duplicates = dups.length;
  const kept = m - selfLoops - duplicates;
  const src = sharedArray('i32', kept);
  const dst = sharedArray('i32', kept);
  if (kept === m) {
    src.set(a.subarray(0, m));
    dst.set(b.subarray(0, m));
  } else {
    let j = 0;
    let di = 0;
    let nextDup = duplicates > 0 ? dups[0] : -1;
    for (let k = 0; k < m; k++) {
      if (k === nextDup) {
        di++;
        nextDup = di < duplicates ? dups[di] : -1;
        continue;
      }
      const x = a[k];
      const y = b[k];
      if (x === y) continue;
      src[j] = x;
      dst[j] = y;
      j++;
    }
  }
  return { nodes, src, dst, externalIds, directed, dropped: { selfLoops, duplicates } };
}

// ---------------------------------------------------------------------------------------------
// Arrow input

const ARROW_COLUMN_PAIRS: [string, string][] = [
  ['source', 'target'],
  ['src', 'dst'],
  ['from', 'to'],
];

type ColumnKind = 'int' | 'float' | 'string' | null;

function columnKind(type: unknown): ColumnKind {
  if (DataType.isInt(type)) return 'int';
  if (DataType.isFloat(type)) return type.precision === Precision.HALF ? null : 'float';
  if (DataType.isUtf8(type) || DataType.isLargeUtf8(type) || DataType.isUtf8View(type)) return 'string';
  if (DataType.isDictionary(type)) {
    const v = type.dictionary;
    if (DataType.isUtf8(v) || DataType.isLargeUtf8(v) || DataType.isUtf8View(v)) return 'string';
  }
  return null;
}

function loadArrow(cfg: Config): EdgeList {
  const path = cfg.path;
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw unreadable(path, err);
  }
  let table: ArrowTable;
  try {
    table = tableFromIPC(bytes);
  } catch (err) {
    throw new InputError(
      `cannot read Arrow file ${path}: ${oneLine((err as Error).message)}; write it as Arrow IPC (file or stream format), e.g. pyarrow.feather.write_feather`,
    );
  }
  const fields = table.schema.fields;
  const lower = fields.map((f) => f.name.toLowerCase());
  let pick: [number, number] | null = null;
  for (const [s, t] of ARROW_COLUMN_PAIRS) {
    const i = lower.indexOf(s);
    const j = lower.indexOf(t);
    if (i >= 0 && j >= 0) {
      pick = [i, j];
      break;
    }
  }
  if (pick === null && fields.length >= 2) pick = [0, 1];
  const listed = fields.slice(0, 8).map((f) => `${f.name}: ${String(f.type)}`);
  if (fields.length > 8) listed.push(`... ${fields.length - 8} more`);
  const found = fields.length === 0 ? 'no columns' : `found ${listed.join(', ')}`;
  const usage = `need two integer or string columns named source/target, src/dst or from/to, or as the first two columns`;
  if (pick === null) {
    throw new InputError(`Arrow file ${path} has no usable edge columns (${found}); ${usage}`);
  }
  const [si, ti] = pick;
  const sk = columnKind(fields[si].type);
  const tk = columnKind(fields[ti].type);
  if (sk === null || tk === null) {
    const bad = sk === null ? fields[si] : fields[ti];
    throw new InputError(
      `Arrow file ${path} has no usable edge columns: column ${JSON.stringify(bad.name)} is ${String(bad.type)} (${found}); ${usage}`,
    );
  }
  const m = table.numRows;
  if (m === 0) throw noEdges(cfg, 'the Arrow table has 0 rows');
  if (m > cfg.maxEdges) throw tooManyEdges(cfg, `row ${cfg.maxEdges + 1}`);
  const sv = table.getChildAt(si) as Vector;
  const tv = table.getChildAt(ti) as Vector;
  const sName = fields[si].name;
  const tName = fields[ti].name;
  for (const [vec, name] of [
    [sv, sName],
    [tv, tName],
  ] as [Vector, string][]) {
    if (vec.nullCount > 0) {
      let r = 0;
      while (r < m && vec.isValid(r)) r++;
      throw new InputError(`${path} row ${r + 1}: node id in column ${JSON.stringify(name)} is missing (null); drop the row or fill it in`);
    }
  }

  if (sk === 'string' || tk === 'string') {
    const sa = columnStrings(sv, sk, m);
    const ta = columnStrings(tv, tk, m);
    if (cfg.agents > 0) {
      const src = new Int32Array(m);
      const dst = new Int32Array(m);
      for (let r = 0; r < m; r++) {
        src[r] = agentIdFromString(cfg, r, sa[r]);
        dst[r] = agentIdFromString(cfg, r, ta[r]);
      }
      return clean(src, dst, m, cfg.agents, null, cfg.directed);
    }
    const names = new NameTable();
    const src = new Int32Array(m);
    const dst = new Int32Array(m);
    for (let r = 0; r < m; r++) {
      const s = sa[r];
      const t = ta[r];
      if (s === '' || t === '') {
        throw new InputError(`${path} row ${r + 1}: empty node id in column ${JSON.stringify(s === '' ? sName : tName)}; drop the row or fill it in`);
      }
      src[r] = names.internString(s);
      dst[r] = names.internString(t);
    }
    return clean(src, dst, m, names.n, names.names, cfg.directed);
  }

  const rs = columnNumbers(cfg, sv, m);
  const rt = columnNumbers(cfg, tv, m);
  let maxId = -1;
  for (let r = 0; r < m; r++) {
    if (rs[r] > maxId) maxId = rs[r];
    if (rt[r] > maxId) maxId = rt[r];
  }
  if (cfg.agents > 0) {
    const src = new Int32Array(m);
    const dst = new Int32Array(m);
    for (let r = 0; r < m; r++) {
      const s = rs[r];
      const t = rt[r];
      if (s >= cfg.agents) throw outOfRange(cfg, `row ${r + 1}`, s);
      if (t >= cfg.agents) throw outOfRange(cfg, `row ${r + 1}`, t);
      src[r] = s;
      dst[r] = t;
    }
    return clean(src, dst, m, cfg.agents, null, cfg.directed);
  }
  const narrow = maxId <= I32_MAX;
  const r = remapNumeric(narrow ? Int32Array.from(rs) : rs, narrow ? Int32Array.from(rt) : rt, m, maxId);
  return clean(r.src, r.dst, m, r.ids.length, r.ids, cfg.directed);
}

function columnStrings(vec: Vector, kind: ColumnKind, m: number): string[] {
  // Integer columns paired with a string column become names too (decimal text).
  const out: string[] = new Array(m);
  let r = 0;
  if (kind === 'string') for (const v of vec) out[r++] = v as string;
  else for (const v of vec) out[r++] = String(v);
  return out;
}

function agentIdFromString(cfg: Config, r: number, s: string): number {
  if (!/^\d+$/.test(s)) {
    if (/^-\d+$/.test(s)) throw badNumber(cfg, `row ${r + 1}`, K_NEG, s);
    throw notInteger(cfg, `row ${r + 1}`, s);
  }
  const v = Number(s);
  if (v >= cfg.agents) throw outOfRange(cfg, `row ${r + 1}`, s);
  return v;
}

/** Numeric column -> Float64Array of validated ids (non-negative integers <= 2^53-1). */
function columnNumbers(cfg: Config, vec: Vector, m: number): Float64Array {
  const arr = vec.toArray() as ArrayLike<number | bigint>;
  const out = new Float64Array(m);
  if (arr instanceof BigInt64Array || arr instanceof BigUint64Array) {
    for (let r = 0; r < m; r++) {
      const x = arr[r];
      if (x < 0n) throw badNumber(cfg, `row ${r + 1}`, K_NEG, String(x));
      if (x > 9007199254740991n) throw badNumber(cfg, `row ${r + 1}`, K_BIG, String(x));
      out[r] = Number(x);
    }
    return out;
  }
  for (let r = 0; r < m; r++) {
    const x = arr[r] as number;
    if (!(x >= 0 && x <= MAX_ID && Number.isInteger(x))) {
      const kind = x < 0 ? K_NEG : x > MAX_ID && Number.isInteger(x) ? K_BIG : K_FRAC;
      throw badNumber(cfg, `row ${r + 1}`, kind, String(x));
    }
    out[r] = x;
  }
  return out;
}
