/**
 * Checkpoints: the mutable state of a run, saved to one file and restored into a freshly set-up
 * world, so that a resumed run continues exactly where the checkpoint was taken.
 *
 * What is saved is a tree of plain data reachable from a root object: numbers, strings, booleans,
 * undefined, plain objects and class instances (their own fields), arrays, Maps, Sets and typed
 * arrays. Functions are skipped (a resumed run has the same code). Typed arrays are saved by their
 * underlying buffer, once per buffer, so views that share a buffer (packed records read as Int32,
 * Float32 and Int8) share it again after restoring; a buffer is saved up to the end of its last
 * view (room past it, such as that after the following rows, is left out). An object reachable
 * along two paths is saved once and restored as one object.
 *
 * Restoring works in place: objects that exist in the live tree (built by the same set-up) get
 * their fields overwritten, so every other holder of a reference to them sees the restored state;
 * Maps and Sets are refilled in place; a typed array is read into the live one where that has the
 * same type and length and its own buffer (Decoder.typed), else replaced, as arrays are. A
 * phase must therefore keep what it carries across steps in objects reachable from its `state`,
 * not in closure variables that hold typed arrays.
 *
 * File layout (format versions 2 to 4), all integers little-endian:
 *   0  "SOCSIMCK" (8 bytes)
 *   8  format version (u32)
 *  12  JSON length (u32)
 *  16  the file's length in bytes, trailer included (u64)
 *  24  header check: the first 8 bytes of the SHA-256 of bytes 0-23
 *  32  the JSON tree; then, from the next 8-byte boundary, each buffer at the 8-byte-aligned offset
 *      the JSON lists for it (zero padding between)
 *  the last 32 bytes: the SHA-256 of every byte before them (header, JSON, padding and buffers).
 * Bytes 0-31 keep this layout in every later format version, so that a socsim can tell a version
 * it does not read (the header check holds) from a damaged header (it does not). Version 1 (no
 * length, no checks; JSON from byte 16) is refused by its version. The version also moves when the
 * tree a run saves changes shape, since restoring in place cannot map one shape onto another:
 * version 3 has the layout of 2, with the social platform's state as named tables (platform/
 * state.ts) where 2 held one flat object; version 4 adds the Community Notes table, the posts'
 * votes by side and the LLM tokens spent. Files of an earlier version are refused by it.
 *
 * Reading verifies before anything is restored: the magic, the version, the header check, the
 * length against the file's size, then the SHA-256 over the whole file, in one pass of bounded
 * reads (the buffers are read again by restoreInto, so a verified read costs a second pass over
 * the file, mostly from the page cache). Anything wrong throws a CheckpointError naming the file
 * and the problem in one line. Writing hashes each byte as it goes out (no second pass), to a
 * temporary name that is fsynced before it is renamed, so a checkpoint file is complete or absent;
 * large buffers go out in bounded writes. With `previous`, the checkpoint being replaced is kept
 * under that name (see writeCheckpoint).
 */
import { createHash, type Hash } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { TypedArray } from './table.ts';

const MAGIC = 'SOCSIMCK';
/** The format version this socsim writes and reads. */
export const CHECKPOINT_VERSION = 4;
/** Bytes of the fixed header (magic, version, JSON length, file length, header check). */
const HEAD = 32;
/** Bytes of the trailer: a SHA-256 digest. */
const DIGEST = 32;
const CHUNK = 64 << 20;
/** Bytes per read while verifying (a bounded buffer, whatever the file's size). */
const VERIFY_CHUNK = 8 << 20;

/**
 * A checkpoint file that cannot be used: `problem` says why in a few words ("missing", "checksum
 * mismatch", "truncated: N of M bytes", "format version X, this socsim reads Y", ...); the message
 * is "FILE: problem". `kind` sorts the problems for callers that word them: `damaged` (checksum,
 * length, not a checkpoint), `version` (another format) or `missing`.
 */
export class CheckpointError extends Error {
  override name = 'CheckpointError';
  readonly file: string;
  readonly problem: string;
  readonly kind: 'damaged' | 'version' | 'missing';
  constructor(file: string, problem: string, kind: CheckpointError['kind']) {
    super(`${file}: ${problem}`);
    this.file = file;
    this.problem = problem;
    this.kind = kind;
  }
}

/** The header check: the first 8 bytes of the SHA-256 of the header's first 24 bytes. */
function headerCheck(head: Uint8Array): Buffer {
  return createHash('sha256').update(head.subarray(0, 24)).digest().subarray(0, 8);
}

const CTORS = {
  Float32Array,
  Float64Array,
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
} as const;
type CtorName = keyof typeof CTORS;

type Encoded =
  | number
  | string
  | boolean
  | null
  | { $u: 1 }
  | { $n: 'NaN' | 'Infinity' | '-Infinity' | '-0' }
  | { $ta: CtorName; buf: number; off: number; len: number }
  | { $ref: number }
  | { $obj: number; f: Record<string, Encoded> }
  | { $arr: Encoded[] }
  | { $map: Array<[Encoded, Encoded]>; id: number }
  | { $set: Encoded[]; id: number };

interface BufferEntry {
  bytes: number;
  shared: boolean;
  /** Offset from the data start (the first 8-byte boundary after the JSON). */
  at: number;
}

function isTypedArray(v: unknown): v is TypedArray {
  return ArrayBuffer.isView(v) && !(v instanceof DataView);
}

class Encoder {
  readonly buffers: Array<ArrayBufferLike> = [];
  /** Bytes of each buffer up to the end of its last view: what is saved (room past the views is not). */
  readonly ends: number[] = [];
  private readonly bufferIds = new Map<ArrayBufferLike, number>();
  private readonly objectIds = new Map<object, number>();

  encode(v: unknown): Encoded {
    if (v === undefined) return { $u: 1 };
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return v as Encoded;
    if (typeof v === 'number') {
      if (Number.isNaN(v)) return { $n: 'NaN' };
      if (v === Infinity) return { $n: 'Infinity' };
      if (v === -Infinity) return { $n: '-Infinity' };
      if (Object.is(v, -0)) return { $n: '-0' };
      return v;
    }
    if (typeof v === 'function') throw new Error('functions are not state');
    if (typeof v !== 'object') throw new Error(`cannot checkpoint a ${typeof v}`);
    if (isTypedArray(v)) {
      let buf = this.bufferIds.get(v.buffer);
      if (buf === undefined) {
        buf = this.buffers.length;
        this.buffers.push(v.buffer);
        this.ends.push(0);
        this.bufferIds.set(v.buffer, buf);
      }
      this.ends[buf] = Math.max(this.ends[buf], v.byteOffset + v.byteLength);
      const name = v.constructor.name as CtorName;
      if (!(name in CTORS)) throw new Error(`cannot checkpoint a ${name}`);
      return { $ta: name, buf, off: v.byteOffset, len: v.length };
    }
    const seen = this.objectIds.get(v);
    if (seen !== undefined) return { $ref: seen };
    const id = this.objectIds.size;
    this.objectIds.set(v, id);
    if (Array.isArray(v)) {
      // Arrays are values, not identities: a second path to one would be a second copy.
      this.objectIds.delete(v);
      return { $arr: v.map((x) => this.encode(x)) };
    }
    if (v instanceof Map) return { $map: [...v].map(([k, x]) => [this.encode(k), this.encode(x)]), id };
    if (v instanceof Set) return { $set: [...v].map((x) => this.encode(x)), id };
    if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof SharedArrayBuffer) throw new Error('cannot checkpoint a bare buffer or DataView');
    const f: Record<string, Encoded> = {};
    for (const [k, x] of Object.entries(v)) {
      if (typeof x === 'function') continue;
      f[k] = this.encode(x);
    }
    return { $obj: id, f };
  }
}

/**
 * Byte views of `b`, CHUNK bytes each: a Uint8Array over a whole buffer past 4 GiB is refused
 * ("Invalid typed array length"; at 10^8 agents the 16-wide float32 interest column is 6.4 GB),
 * views of parts of it are not.
 */
function* chunks(b: ArrayBufferLike, bytes: number): Generator<Uint8Array> {
  for (let o = 0; o < bytes; o += CHUNK) yield new Uint8Array(b, o, Math.min(CHUNK, bytes - o));
}

export interface WriteOptions {
  /**
   * Keep the checkpoint this one replaces: once the new file is complete and fsynced, an existing
   * `file` is renamed to `previous` (replacing what was there), then the new file takes `file`'s
   * name. A kill between the two renames leaves `previous` and no `file`; never a half file under
   * either name.
   */
  previous?: string;
}

/**
 * Writes `root`'s state to `file` (atomically: a temporary name, fsync, rename; then the directory
 * is fsynced so the renames last). Returns bytes written.
 */
export function writeCheckpoint(file: string, root: object, meta: object, o: WriteOptions = {}): number {
  const enc = new Encoder();
  const tree = enc.encode(root);
  const entries: BufferEntry[] = [];
  let rel = 0;
  enc.buffers.forEach((b, i) => {
    entries.push({ bytes: enc.ends[i], shared: b instanceof SharedArrayBuffer, at: rel });
    rel += Math.ceil(enc.ends[i] / 8) * 8;
  });
  // Buffer offsets are relative to the data start, the first 8-byte boundary after the JSON, so
  // the JSON (which can be large: cascade member sets) is encoded once.
  const json = Buffer.from(JSON.stringify({ meta, tree, buffers: entries }), 'utf8');
  const start = Math.ceil((HEAD + json.byteLength) / 8) * 8;
  const total = start + rel + DIGEST;
  const head = Buffer.alloc(HEAD);
  head.write(MAGIC, 0, 'latin1');
  head.writeUInt32LE(CHECKPOINT_VERSION, 8);
  head.writeUInt32LE(json.byteLength, 12);
  head.writeBigUInt64LE(BigInt(total), 16);
  headerCheck(head).copy(head, 24);
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, 'w');
  const hash = createHash('sha256');
  let pos = 0;
  let done = false;
  const put = (bytes: Uint8Array, hashed = true) => {
    if (hashed) hash.update(bytes);
    for (let o = 0; o < bytes.byteLength; ) {
      const n = writeSync(fd, bytes, o, Math.min(CHUNK, bytes.byteLength - o), pos);
      o += n;
      pos += n;
    }
  };
  try {
    put(head);
    put(json);
    const pad = new Uint8Array(8);
    put(pad.subarray(0, start - HEAD - json.byteLength));
    enc.buffers.forEach((b, i) => {
      for (const view of chunks(b, enc.ends[i])) put(view);
      const extra = Math.ceil(enc.ends[i] / 8) * 8 - enc.ends[i];
      if (extra > 0) put(pad.subarray(0, extra));
    });
    put(hash.digest(), false);
    if (pos !== total) throw new Error(`${tmp}: wrote ${pos} bytes, expected ${total}`);
    fsyncSync(fd);
    done = true;
  } finally {
    closeSync(fd);
    // A half-written checkpoint is worthless; never leave one behind (the previous one stays).
    if (!done) rmSync(tmp, { force: true });
  }
  try {
    if (o.previous) {
      try {
        renameSync(file, o.previous);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  syncDirectory(path.dirname(file));
  return pos;
}

/** fsyncs a directory so that renames in it survive a power loss (where the platform allows it). */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Not every platform opens or syncs directories (Windows); the rename itself is atomic anyway.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export interface Checkpoint<M = unknown> {
  meta: M;
  /**
   * Restores the saved state into `live` (the same root object, freshly set up), reading the
   * buffers from the file as it goes; the root's fields named in `skip` keep their live values.
   * Returns the live typed arrays whose contents it overwrote in place (Decoder.typed): a device's
   * copies of those are stale.
   */
  restoreInto(live: object, skip?: readonly string[]): TypedArray[];
  /**
   * The saved value of the root's field `key` (undefined when the root has none), in new objects
   * and arrays: for state that set-up can take instead of building it (a resumed run's graph),
   * then left out of restoreInto by `skip`. Throws when that value shares an object or a buffer
   * with the rest of the tree, since reading it apart would part them.
   */
  readField(key: string): unknown;
}

/**
 * Checks `fd` (the checkpoint `file`, `size` bytes) as the file layout above says, hashing every
 * byte; returns the JSON's length. Throws a CheckpointError naming what is wrong.
 */
function verify(file: string, fd: number, size: number): number {
  const damaged = (problem: string) => new CheckpointError(file, problem, 'damaged');
  const head = Buffer.alloc(HEAD);
  const got = readSync(fd, head, 0, HEAD, 0);
  if (got >= MAGIC.length && head.toString('latin1', 0, MAGIC.length) !== MAGIC) throw damaged(`not a socsim checkpoint: it does not start with ${MAGIC}`);
  if (got >= 12 && head.readUInt32LE(8) === 1) throw new CheckpointError(file, `format version 1, this socsim reads ${CHECKPOINT_VERSION}`, 'version');
  if (size < HEAD) throw damaged(`truncated: ${size} bytes, less than the ${HEAD}-byte header`);
  if (!headerCheck(head).equals(head.subarray(24, 32))) throw damaged('checksum mismatch in the header');
  const version = head.readUInt32LE(8);
  if (version !== CHECKPOINT_VERSION) throw new CheckpointError(file, `format version ${version}, this socsim reads ${CHECKPOINT_VERSION}`, 'version');
  const total = Number(head.readBigUInt64LE(16));
  if (size < total) throw damaged(`truncated: ${size} of ${total} bytes`);
  if (size > total) throw damaged(`${size} bytes where its header says ${total}`);
  const jsonLength = head.readUInt32LE(12);
  if (HEAD + jsonLength + DIGEST > total) throw damaged(`its header gives ${jsonLength} bytes of JSON in a file of ${total}`);
  const hash: Hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(Math.min(VERIFY_CHUNK, total));
  for (let o = 0; o < total - DIGEST; ) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, total - DIGEST - o), o);
    if (n <= 0) throw damaged(`truncated: ${o} of ${total} bytes`);
    hash.update(buf.subarray(0, n));
    o += n;
  }
  const stored = Buffer.alloc(DIGEST);
  if (readSync(fd, stored, 0, DIGEST, total - DIGEST) !== DIGEST) throw damaged(`truncated: ${total - DIGEST} of ${total} bytes`);
  if (!hash.digest().equals(stored)) throw damaged('checksum mismatch');
  return jsonLength;
}

/**
 * Reads a checkpoint file's header and tree after verifying the whole file (see the file layout
 * above; a file that fails throws a CheckpointError, and so does a missing one); the buffers are
 * read by restoreInto. Buffers that were shared come back on SharedArrayBuffers.
 */
export function readCheckpoint<M = unknown>(file: string): Checkpoint<M> {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new CheckpointError(file, 'missing', 'missing');
    throw err;
  }
  let parsed: { meta: M; tree: Encoded; buffers: BufferEntry[] };
  let start: number;
  try {
    const size = fstatSync(fd).size;
    const jsonBytes = Buffer.alloc(verify(file, fd, size));
    readSync(fd, jsonBytes, 0, jsonBytes.length, HEAD);
    parsed = JSON.parse(jsonBytes.toString('utf8')) as typeof parsed;
    start = Math.ceil((HEAD + jsonBytes.length) / 8) * 8;
    for (const e of parsed.buffers) if (start + e.at + e.bytes > size - DIGEST) throw new CheckpointError(file, 'a buffer reaches past the data', 'damaged');
  } finally {
    closeSync(fd);
  }
  const { meta, tree, buffers } = parsed;
  if (tree === null || typeof tree !== 'object' || !('$obj' in tree)) throw new Error(`${file}: the checkpoint's root is not an object`);
  const decode = <T>(use: (d: Decoder) => T, root: Encoded): T => {
    const fd = openSync(file, 'r');
    try {
      return use(new Decoder(file, fd, start, buffers, viewCounts(root, buffers.length)));
    } finally {
      closeSync(fd);
    }
  };
  return {
    meta,
    restoreInto: (live, skip = []) => {
      const kept = { ...tree, f: Object.fromEntries(Object.entries(tree.f).filter(([k]) => !skip.includes(k))) };
      return decode((d) => {
        d.into(live, kept);
        return d.inPlace;
      }, kept);
    },
    readField: (key) => {
      const e = tree.f[key];
      if (e === undefined) return undefined;
      const rest = { ...tree, f: Object.fromEntries(Object.entries(tree.f).filter(([k]) => k !== key)) };
      const inside = treeUses(e);
      const outside = treeUses(rest);
      if (inside.refs.size > 0 || [...inside.objects].some((id) => outside.refs.has(id)) || [...inside.buffers].some((b) => outside.buffers.has(b))) {
        throw new Error(`${file}: the checkpoint's ${key} shares objects or buffers with the rest of its state`);
      }
      return decode((d) => d.value(e, undefined), e);
    },
  };
}

/** How many typed-array entries of the tree view each buffer. */
function viewCounts(tree: Encoded, n: number): number[] {
  const out = new Array<number>(n).fill(0);
  walkTree(tree, (e) => {
    if ('$ta' in e) out[e.buf]++;
  });
  return out;
}

/** The object ids a tree defines and refers to, and the buffers it views. */
function treeUses(tree: Encoded): { objects: Set<number>; refs: Set<number>; buffers: Set<number> } {
  const u = { objects: new Set<number>(), refs: new Set<number>(), buffers: new Set<number>() };
  walkTree(tree, (e) => {
    if ('$ta' in e) u.buffers.add(e.buf);
    else if ('$ref' in e) u.refs.add(e.$ref);
    else if ('$obj' in e) u.objects.add(e.$obj);
    else if ('$map' in e || '$set' in e) u.objects.add(e.id);
  });
  return u;
}

/** Calls `visit` on every object entry of an encoded tree, parents first. */
function walkTree(tree: Encoded, visit: (e: Exclude<Encoded, number | string | boolean | null>) => void): void {
  const walk = (e: Encoded): void => {
    if (e === null || typeof e !== 'object') return;
    visit(e);
    if ('$arr' in e) e.$arr.forEach(walk);
    else if ('$map' in e) for (const [a, b] of e.$map) (walk(a), walk(b));
    else if ('$set' in e) e.$set.forEach(walk);
    else if ('$obj' in e) Object.values(e.f).forEach(walk);
  };
  walk(tree);
}

class Decoder {
  private readonly file: string;
  private readonly fd: number;
  private readonly start: number;
  private readonly entries: BufferEntry[];
  private readonly views: number[];
  private readonly arrays = new Map<string, TypedArray>();
  private readonly objects = new Map<number, unknown>();
  private readonly buffers: Array<ArrayBufferLike | undefined>;
  /** Live buffers that took a saved buffer's bytes (each takes one at most). */
  private readonly claimed = new Set<ArrayBufferLike>();
  /** Live typed arrays restored in place. */
  readonly inPlace: TypedArray[] = [];
  constructor(file: string, fd: number, start: number, entries: BufferEntry[], views: number[]) {
    this.file = file;
    this.fd = fd;
    this.start = start;
    this.entries = entries;
    this.views = views;
    this.buffers = new Array(entries.length);
  }

  /** Saved buffer i, read from the file at its first use: into `into` when given, else into new memory. */
  private buffer(i: number, into?: ArrayBufferLike): ArrayBufferLike {
    let b = this.buffers[i];
    if (b) return b;
    const e = this.entries[i];
    b = into ?? (e.shared ? new SharedArrayBuffer(e.bytes) : new ArrayBuffer(e.bytes));
    let o = this.start + e.at;
    for (const view of chunks(b, e.bytes)) {
      for (let v = 0; v < view.byteLength; ) {
        const n = readSync(this.fd, view, v, view.byteLength - v, o);
        if (n <= 0) throw new CheckpointError(this.file, `truncated while it was read (after it was verified)`, 'damaged');
        v += n;
        o += n;
      }
    }
    this.buffers[i] = b;
    return b;
  }

  /**
   * A saved typed array. Where the live slot holds one of the same type and length that is the
   * whole of its buffer, and the saved one is the only view of its buffer, the saved bytes are
   * read into the live array's memory and the live array is kept: a resumed run then does not
   * hold set-up's copy and the checkpoint's at once (10M agents: the population and platform
   * columns, ~1.8 GB). Otherwise a new array over the saved buffer.
   */
  private typed(e: { $ta: CtorName; buf: number; off: number; len: number }, live: unknown): TypedArray {
    const k = `${e.buf}:${e.$ta}:${e.off}:${e.len}`;
    let a = this.arrays.get(k);
    if (!a) {
      const entry = this.entries[e.buf];
      if (
        this.buffers[e.buf] === undefined &&
        this.views[e.buf] === 1 &&
        isTypedArray(live) &&
        live.constructor.name === e.$ta &&
        live.length === e.len &&
        e.off === 0 &&
        live.byteOffset === 0 &&
        live.buffer.byteLength === entry.bytes &&
        live.buffer instanceof SharedArrayBuffer === entry.shared &&
        !this.claimed.has(live.buffer)
      ) {
        this.claimed.add(live.buffer);
        this.buffer(e.buf, live.buffer);
        this.inPlace.push(live);
        a = live;
      } else a = new CTORS[e.$ta](this.buffer(e.buf) as ArrayBuffer, e.off, e.len) as TypedArray;
      this.arrays.set(k, a);
    }
    return a;
  }

  /** A value for a slot whose live content is `live` (restored in place where it can be). */
  value(e: Encoded, live: unknown): unknown {
    if (e === null || typeof e !== 'object') return e;
    if ('$u' in e) return undefined;
    if ('$n' in e) return e.$n === '-0' ? -0 : Number(e.$n);
    if ('$ta' in e) return this.typed(e, live);
    if ('$ref' in e) return this.objects.get(e.$ref);
    if ('$arr' in e) return e.$arr.map((x) => this.value(x, undefined));
    if ('$map' in e) {
      const m = live instanceof Map ? live : new Map();
      this.objects.set(e.id, m);
      m.clear();
      for (const [k, x] of e.$map) m.set(this.value(k, undefined), this.value(x, undefined));
      return m;
    }
    if ('$set' in e) {
      const s = live instanceof Set ? live : new Set();
      this.objects.set(e.id, s);
      s.clear();
      for (const x of e.$set) s.add(this.value(x, undefined));
      return s;
    }
    const target = live !== null && typeof live === 'object' && !isTypedArray(live) && !Array.isArray(live) && !(live instanceof Map) && !(live instanceof Set) ? live : {};
    return this.into(target, e);
  }

  into(target: object, e: Encoded): object {
    if (e === null || typeof e !== 'object' || !('$obj' in e)) throw new Error('checkpoint root must be an object');
    this.objects.set(e.$obj, target);
    const t = target as Record<string, unknown>;
    for (const [k, x] of Object.entries(e.f)) t[k] = this.value(x, t[k]);
    return target;
  }
}
