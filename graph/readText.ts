/**
 * Text edge lists: one edge per line, `source target [anything else]` (see textTokens.ts for the
 * fields). Blank lines and lines starting with `#` or `%` are skipped (they still count in line
 * numbers). Parsed from bytes: lines of two plain integers take a fast path; everything else goes
 * through the general line parser.
 *
 * `ids: 'int'`: every id must be plain digits (0..2^53-1). The first data line (the first line that
 * is not blank or a comment) is skipped as a header when one of its first two fields is not a
 * number at all (e.g. `source,target`, `FromNodeId ToNodeId`); anywhere else such a field is an
 * error that names the line and suggests `--ids name`. Negative, fractional or exponent numbers are
 * errors on every line, the first included.
 * `ids: 'name'`: every field is a name, digits included, taken as written (quotes removed). The
 * first data line is skipped as a header only when both of its fields are column-like words
 * (source/target, src/dst, from/to, node1/node2, user_id, follower/followee, ...), since a line
 * such as `alice bob` may be a real first edge.
 */
import { InputError } from '../sim-core/errors.ts';
import { cleanEdges, type DenseEdges } from './cleanEdges.ts';
import {
  I32_MAX,
  K_INT,
  K_NAME,
  K_NEG,
  MAX_ID,
  badNumber,
  noEdges,
  notInteger,
  outOfRange,
  quoteSnippet,
  tooManyEdges,
  type ReadConfig,
} from './edgeErrors.ts';
import { NameTable, hashBytes, remapNumeric } from './resolveIds.ts';
import { LineTokens, T_EMPTY, T_OK, T_QUOTE } from './textTokens.ts';
import { readLines, type ByteSource } from './textSource.ts';

/** Name mode interns the tokens of up to this many lines together (see NameTable.touch). */
const BATCH = 256;

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

/** Growable raw edge arrays (Int32 while every id fits, Float64 once an id exceeds 2^31-1). */
class EdgeBuffer {
  private readonly cfg: ReadConfig;
  src: Int32Array | Float64Array;
  dst: Int32Array | Float64Array;
  m = 0;
  wide = false;
  constructor(cfg: ReadConfig, initial: number) {
    this.cfg = cfg;
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
}

class TextParser {
  private readonly cfg: ReadConfig;
  readonly edges: EdgeBuffer;
  /** The names read so far (`ids: 'name'`); null when ids are integers. */
  readonly names: NameTable | null;
  /** Lines fully consumed so far (the current line is line + 1). */
  line = 0;
  /** Whether a data line (edge or header) has been seen: only the first can be a header. */
  seenData = false;
  maxId = -1;
  /** Ids above this leave the fast path (range check or widening). */
  fastLimit: number;
  private readonly tok = new LineTokens();
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

  constructor(cfg: ReadConfig, initialEdges: number) {
    this.cfg = cfg;
    this.edges = new EdgeBuffer(cfg, initialEdges);
    this.fastLimit = cfg.agents > 0 ? cfg.agents - 1 : I32_MAX;
    this.names = cfg.ids === 'name' ? new NameTable() : null;
  }

  /** Parses the complete lines in u8[i, end) (u8[end-1] is '\n'). */
  run(u8: Uint8Array, buf: Buffer, i: number, end: number): void {
    if (this.names !== null) {
      while (i < end) i = this.slowLine(u8, buf, i);
      this.flush(u8, buf);
      return;
    }
    this.runNumeric(u8, buf, i, end);
  }

  /** Fast path for `digits SEP digits [SEP ...] [\r] \n`; anything else goes to slowLine. */
  private runNumeric(u8: Uint8Array, buf: Buffer, i: number, end: number): void {
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
      i = this.slowLine(u8, buf, i);
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
  }

  /** General parser for one line starting at ls; returns the next line's start. */
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
    const tok = this.tok;
    const status = tok.tokenize(u8, p, e);
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
    const firstDataLine = !this.seenData && this.edges.m === 0; // fast-path lines only add edges
    this.seenData = true;
    const eb = this.edges;

    if (this.names !== null) {
      if (
        firstDataLine &&
        HEADER_WORD.test(tok.text(buf, 1)) &&
        HEADER_WORD.test(tok.text(buf, 2))
      ) {
        this.line = lineNo;
        return nl + 1;
      }
      if (this.batched === BATCH) this.flush(u8, buf);
      this.queue(u8, 2 * this.batched, tok.s1, tok.e1, tok.x1);
      this.queue(u8, 2 * this.batched + 1, tok.s2, tok.e2, tok.x2);
      this.batchLine[this.batched++] = lineNo;
      this.line = lineNo;
      return nl + 1;
    }

    const k1 = tok.x1 ? K_NAME : tok.classify(u8, tok.s1, tok.e1);
    const v1 = tok.val;
    const k2 = tok.x2 ? K_NAME : tok.classify(u8, tok.s2, tok.e2);
    const v2 = tok.val;
    if (k1 >= K_NEG) throw badNumber(cfg, where, k1, buf.toString('utf8', tok.s1, tok.e1));
    if (k2 >= K_NEG) throw badNumber(cfg, where, k2, buf.toString('utf8', tok.s2, tok.e2));
    if (k1 !== K_INT || k2 !== K_INT) {
      if (firstDataLine) {
        this.line = lineNo; // the header line
        return nl + 1;
      }
      throw notInteger(cfg, where, tok.text(buf, k1 !== K_INT ? 1 : 2));
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

/** Reads a text edge list from `source`. `sizeHint`: bytes of text, for the initial edge capacity. */
export async function readTextEdges(cfg: ReadConfig, source: ByteSource, sizeHint: number): Promise<DenseEdges> {
  const parser = new TextParser(cfg, Math.min(Math.max(1024, Math.floor(sizeHint / 12)), 1 << 26));
  await readLines(source, cfg.chunkBytes, (u8, buf, end) => parser.run(u8, buf, 0, end));
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
  return cleanEdges(src, dst, eb.m, nodes, externalIds, cfg.directed);
}

