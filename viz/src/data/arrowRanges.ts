/**
 * Reads chosen columns (or a window of rows) of an Arrow IPC *file* through byte ranges, without
 * downloading the rest: the footer gives the record-batch blocks, each batch's metadata gives its
 * buffers, and only the buffers of the wanted columns are fetched. This is how the dashboard reads
 * one column of a 1M-agent snapshot (4 MB of 21 MB) or a window of a 400 MB graph.arrow.
 *
 * Scope: primitive columns (Int, FloatingPoint) and dictionary-encoded Utf8 columns, no body
 * compression; null bitmaps are ignored (socsim writes no nulls). Any other column can sit in the
 * file; asking for it throws. Whole small tables (metrics, archetypes) are read with flechette.
 *
 * Format references: Arrow columnar spec, "IPC File Format" and Schema.fbs / Message.fbs / File.fbs.
 */

/** Random access to the bytes of one file. */
export interface ByteSource {
  /** Total size in bytes. */
  size(): Promise<number>;
  /** Bytes [offset, offset + length). */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/**
 * A ByteSource over HTTP Range requests. The first call fetches the first and the last 64 KiB at
 * once (two concurrent ranges): the tail gives the size and the footer, the head the schema and,
 * in single-batch files, the batch's metadata; later reads inside either are served from them. When
 * the server ignores ranges (200), the whole body is kept instead.
 */
export function httpSource(url: string, edgeBytes = 64 * 1024): ByteSource & { requests: number; bytes: number } {
  let total: number | undefined;
  const cached: Array<{ start: number; bytes: Uint8Array }> = [];
  let sizing: Promise<number> | undefined;
  const get = async (range: string): Promise<{ status: number; buf: Uint8Array; total?: number }> => {
    src.requests++;
    const res = await fetch(url, { headers: { range }, cache: 'no-store' });
    if (res.status === 416) return { status: 416, buf: new Uint8Array(0) };
    if (res.status !== 200 && res.status !== 206) throw new Error(`${url}: HTTP ${res.status}`);
    const buf = new Uint8Array(await res.arrayBuffer());
    src.bytes += buf.byteLength;
    const m = /\/(\d+)$/.exec(res.headers.get('content-range') ?? '');
    return { status: res.status, buf, total: res.status === 200 ? buf.byteLength : m ? Number(m[1]) : undefined };
  };
  const src = {
    requests: 0,
    bytes: 0,
    size(): Promise<number> {
      sizing ??= (async () => {
        const [tail, head] = await Promise.all([get(`bytes=-${edgeBytes}`), get(`bytes=0-${edgeBytes - 1}`)]);
        if (tail.status === 200) {
          cached.push({ start: 0, bytes: tail.buf });
          return (total = tail.buf.byteLength);
        }
        if (tail.total === undefined) throw new Error(`${url}: 206 without a Content-Range total`);
        total = tail.total;
        cached.push({ start: total - tail.buf.byteLength, bytes: tail.buf });
        if (head.status === 206 || head.status === 200) cached.push({ start: 0, bytes: head.buf });
        return total;
      })();
      return sizing;
    },
    async read(offset: number, length: number): Promise<Uint8Array> {
      if (length <= 0) return new Uint8Array(0);
      await src.size();
      for (const c of cached) {
        if (offset >= c.start && offset + length <= c.start + c.bytes.byteLength) return c.bytes.subarray(offset - c.start, offset - c.start + length);
      }
      const r = await get(`bytes=${offset}-${offset + length - 1}`);
      if (r.status === 200) {
        cached.push({ start: 0, bytes: r.buf });
        return r.buf.subarray(offset, offset + length);
      }
      if (r.buf.byteLength !== length) throw new Error(`${url}: asked for ${length} bytes at ${offset}, got ${r.buf.byteLength}`);
      return r.buf;
    },
  };
  return src;
}

/** A ByteSource over bytes already in memory (tests, or a file read whole). */
export function memorySource(bytes: Uint8Array): ByteSource {
  return {
    size: async () => bytes.byteLength,
    read: async (offset, length) => bytes.subarray(offset, offset + length),
  };
}

// ---------------------------------------------------------------------------------------------
// A minimal flatbuffer reader (little-endian; tables, structs, vectors, strings).

class Fb {
  readonly u8: Uint8Array;
  readonly dv: DataView;
  constructor(u8: Uint8Array) {
    this.u8 = u8;
    this.dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  }
  root(): number {
    return this.dv.getUint32(0, true);
  }
  /** Offset of field `i` inside table `t`, or 0 when absent. */
  field(t: number, i: number): number {
    const vt = t - this.dv.getInt32(t, true);
    const vtLen = this.dv.getUint16(vt, true);
    const at = 4 + 2 * i;
    return at < vtLen ? this.dv.getUint16(vt + at, true) : 0;
  }
  u8f(t: number, i: number, d = 0): number {
    const o = this.field(t, i);
    return o ? this.dv.getUint8(t + o) : d;
  }
  i16f(t: number, i: number, d = 0): number {
    const o = this.field(t, i);
    return o ? this.dv.getInt16(t + o, true) : d;
  }
  i32f(t: number, i: number, d = 0): number {
    const o = this.field(t, i);
    return o ? this.dv.getInt32(t + o, true) : d;
  }
  i64f(t: number, i: number, d = 0): number {
    const o = this.field(t, i);
    return o ? this.i64(t + o) : d;
  }
  i64(p: number): number {
    const lo = this.dv.getUint32(p, true);
    const hi = this.dv.getInt32(p + 4, true);
    return hi * 2 ** 32 + lo;
  }
  /** Position of the table/vector/string that field `i` points to, or 0. */
  ref(t: number, i: number): number {
    const o = this.field(t, i);
    if (!o) return 0;
    const p = t + o;
    return p + this.dv.getUint32(p, true);
  }
  /** Vector at field `i`: [element start, length]. */
  vec(t: number, i: number): [number, number] {
    const v = this.ref(t, i);
    return v ? [v + 4, this.dv.getUint32(v, true)] : [0, 0];
  }
  /** The i-th table of a vector of tables starting at `start`. */
  vecTable(start: number, i: number): number {
    const p = start + 4 * i;
    return p + this.dv.getUint32(p, true);
  }
  str(t: number, i: number): string {
    const s = this.ref(t, i);
    if (!s) return '';
    const n = this.dv.getUint32(s, true);
    return new TextDecoder().decode(this.u8.subarray(s + 4, s + 4 + n));
  }
}

// ---------------------------------------------------------------------------------------------
// Schema and footer

/** Type ids of Schema.fbs's `Type` union that this reader knows how to lay out. */
const T = { Null: 1, Int: 2, Float: 3, Binary: 4, Utf8: 5, Bool: 6, Decimal: 7, Date: 8, Time: 9, Timestamp: 10, Interval: 11, List: 12, Struct: 13, Union: 14, FixedSizeBinary: 15, FixedSizeList: 16, Map: 17, Duration: 18, LargeBinary: 19, LargeUtf8: 20, LargeList: 21 } as const;

export interface ArrowField {
  name: string;
  typeId: number;
  /** Int: bit width and signedness; Float: 16/32/64. */
  bitWidth: number;
  signed: boolean;
  /** Dictionary-encoded: id and index type (the value type is in typeId). */
  dictionary?: { id: number; bitWidth: number };
  children: ArrowField[];
}

export interface Block {
  offset: number;
  metaDataLength: number;
  bodyLength: number;
}

export interface ArrowFileIndex {
  source: ByteSource;
  fields: ArrowField[];
  dictionaries: Block[];
  batches: Block[];
  /** Record-batch metadata, read once. */
  metas?: Promise<BatchMeta[]>;
}

function readField(fb: Fb, t: number): ArrowField {
  const typeId = fb.u8f(t, 2);
  const type = fb.ref(t, 3);
  let bitWidth = 0;
  let signed = false;
  if (typeId === T.Int && type) {
    bitWidth = fb.i32f(type, 0);
    signed = fb.u8f(type, 1) === 1;
  } else if (typeId === T.Float && type) {
    bitWidth = [16, 32, 64][fb.i16f(type, 0)] ?? 0;
    signed = true;
  }
  const f: ArrowField = { name: fb.str(t, 0), typeId, bitWidth, signed, children: [] };
  const dict = fb.ref(t, 4);
  if (dict) {
    const it = fb.ref(dict, 1);
    f.dictionary = { id: fb.i64f(dict, 0), bitWidth: it ? fb.i32f(it, 0) : 32 };
  }
  const [cs, cn] = fb.vec(t, 5);
  for (let i = 0; i < cn; i++) f.children.push(readField(fb, fb.vecTable(cs, i)));
  return f;
}

function readBlocks(fb: Fb, t: number, i: number): Block[] {
  const [start, n] = fb.vec(t, i);
  const out: Block[] = [];
  for (let k = 0; k < n; k++) {
    const p = start + 24 * k;
    out.push({ offset: fb.i64(p), metaDataLength: fb.dv.getInt32(p + 8, true), bodyLength: fb.i64(p + 16) });
  }
  return out;
}

const MAGIC = [0x41, 0x52, 0x52, 0x4f, 0x57, 0x31]; // "ARROW1"

/** Reads the footer (one or two range requests). */
export async function openArrowFile(source: ByteSource): Promise<ArrowFileIndex> {
  const size = await source.size();
  if (size < 18) throw new Error('not an Arrow file (too short)');
  const tailLen = Math.min(size, 64 * 1024);
  let tail = await source.read(size - tailLen, tailLen);
  for (let i = 0; i < 6; i++) if (tail[tail.length - 6 + i] !== MAGIC[i]) throw new Error('not an Arrow IPC file (no ARROW1 trailer)');
  const footerLen = new DataView(tail.buffer, tail.byteOffset + tail.length - 10, 4).getInt32(0, true);
  if (footerLen <= 0 || footerLen + 10 > size) throw new Error('bad Arrow footer length');
  let footer: Uint8Array;
  if (footerLen + 10 <= tail.length) footer = tail.subarray(tail.length - 10 - footerLen, tail.length - 10);
  else {
    tail = await source.read(size - 10 - footerLen, footerLen);
    footer = tail;
  }
  // Copy so the flatbuffer starts at offset 0 of its own buffer (alignment of the DataView is free).
  const fb = new Fb(footer.slice());
  const root = fb.root();
  const schema = fb.ref(root, 1);
  const [fs, fn] = fb.vec(schema, 1);
  const fields: ArrowField[] = [];
  for (let i = 0; i < fn; i++) fields.push(readField(fb, fb.vecTable(fs, i)));
  return { source, fields, dictionaries: readBlocks(fb, root, 2), batches: readBlocks(fb, root, 3) };
}

// ---------------------------------------------------------------------------------------------
// Messages

interface BatchMeta {
  length: number;
  /** [offset, length] of every body buffer, relative to the body start. */
  buffers: Array<[number, number]>;
  bodyStart: number;
}

/** Parses a RecordBatch table at `t`. */
function recordBatch(fb: Fb, t: number, bodyStart: number): BatchMeta {
  if (fb.ref(t, 3)) throw new Error('compressed Arrow bodies are not supported');
  const [bs, bn] = fb.vec(t, 2);
  const buffers: Array<[number, number]> = [];
  for (let k = 0; k < bn; k++) buffers.push([fb.i64(bs + 16 * k), fb.i64(bs + 16 * k + 8)]);
  return { length: fb.i64f(t, 0), buffers, bodyStart };
}

/** The flatbuffer of an encapsulated message (with or without the 0xFFFFFFFF continuation marker). */
function messageFb(bytes: Uint8Array): Fb {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const cont = dv.getInt32(0, true) === -1;
  const len = dv.getInt32(cont ? 4 : 0, true);
  const start = cont ? 8 : 4;
  return new Fb(bytes.slice(start, start + len));
}

async function batchMeta(file: ArrowFileIndex, b: Block): Promise<BatchMeta> {
  const fb = messageFb(await file.source.read(b.offset, b.metaDataLength));
  const msg = fb.root();
  if (fb.u8f(msg, 1) !== 3) throw new Error('expected a record batch message');
  return recordBatch(fb, fb.ref(msg, 2), b.offset + b.metaDataLength);
}

/** Buffers each top-level field occupies in a record batch (depth-first, per the columnar spec). */
function bufferCount(f: ArrowField): number {
  if (f.dictionary) return 2;
  switch (f.typeId) {
    case T.Null: return 0;
    case T.Int: case T.Float: case T.Bool: case T.Decimal: case T.Date: case T.Time: case T.Timestamp:
    case T.Interval: case T.FixedSizeBinary: case T.Duration:
      return 2;
    case T.Binary: case T.Utf8: case T.LargeBinary: case T.LargeUtf8:
      return 3;
    case T.List: case T.LargeList: case T.Map:
      return 2 + f.children.reduce((a, c) => a + bufferCount(c), 0);
    case T.FixedSizeList: case T.Struct:
      return 1 + f.children.reduce((a, c) => a + bufferCount(c), 0);
    default:
      throw new Error(`column ${f.name}: Arrow type ${f.typeId} is not supported by the range reader`);
  }
}

export type NumericArray = Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;

function arrayCtor(f: { typeId: number; bitWidth: number; signed: boolean }, name: string) {
  if (f.typeId === T.Float) {
    if (f.bitWidth === 32) return Float32Array;
    if (f.bitWidth === 64) return Float64Array;
  } else if (f.typeId === T.Int) {
    switch (f.bitWidth) {
      case 8: return f.signed ? Int8Array : Uint8Array;
      case 16: return f.signed ? Int16Array : Uint16Array;
      case 32: return f.signed ? Int32Array : Uint32Array;
    }
  }
  throw new Error(`column ${name}: only 8-32 bit integers and 32/64-bit floats can be read by range`);
}

/** A dictionary-encoded column: integer codes and their labels. */
export interface DictColumn {
  codes: Int8Array | Int16Array | Int32Array;
  labels: string[];
}

export type Column = NumericArray | DictColumn;

export function isDict(c: Column): c is DictColumn {
  return (c as DictColumn).labels !== undefined;
}

async function readDictionaries(file: ArrowFileIndex, ids: Set<number>): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  await Promise.all(
    file.dictionaries.map(async (b) => {
      const bytes = await file.source.read(b.offset, b.metaDataLength + b.bodyLength);
      const fb = messageFb(bytes);
      const msg = fb.root();
      if (fb.u8f(msg, 1) !== 2) return;
      const db = fb.ref(msg, 2);
      const id = fb.i64f(db, 0);
      if (!ids.has(id)) return;
      if (fb.u8f(db, 2) === 1) throw new Error('delta dictionaries are not supported by the range reader');
      const rb = recordBatch(fb, fb.ref(db, 1), b.metaDataLength);
      // Utf8 dictionary: buffers [validity, offsets, data].
      const [oo, ol] = rb.buffers[1]!;
      const [do_, dl] = rb.buffers[2]!;
      const offs = new Int32Array(bytes.slice(rb.bodyStart + oo, rb.bodyStart + oo + ol).buffer);
      const data = bytes.subarray(rb.bodyStart + do_, rb.bodyStart + do_ + dl);
      const dec = new TextDecoder();
      const labels: string[] = [];
      for (let i = 0; i < rb.length; i++) labels.push(dec.decode(data.subarray(offs[i], offs[i + 1])));
      out.set(id, labels);
    }),
  );
  return out;
}

export interface ReadOptions {
  /** First row to read (default 0). */
  rowStart?: number;
  /** One past the last row (default: all rows). */
  rowEnd?: number;
}

/**
 * Reads the named columns, rows [rowStart, rowEnd), concatenating record batches. Numeric columns
 * come back as typed arrays, dictionary columns as {codes, labels}.
 */
export async function readColumns(file: ArrowFileIndex, names: string[], o: ReadOptions = {}): Promise<Record<string, Column>> {
  const slots = new Map<string, { field: ArrowField; buffer: number }>();
  let buffer = 0;
  for (const f of file.fields) {
    if (names.includes(f.name)) {
      if (f.dictionary) {
        if (f.typeId !== T.Utf8) throw new Error(`column ${f.name}: only Utf8 dictionaries are supported`);
      } else arrayCtor(f, f.name);
      slots.set(f.name, { field: f, buffer: buffer + 1 });
    }
    buffer += bufferCount(f);
  }
  for (const n of names) if (!slots.has(n)) throw new Error(`no column "${n}" (columns: ${file.fields.map((f) => f.name).join(', ')})`);

  const metas = await batchMetas(file);
  const totalRows = metas.reduce((a, m) => a + m.length, 0);
  const start = Math.max(0, o.rowStart ?? 0);
  const end = Math.min(totalRows, o.rowEnd ?? totalRows);
  const rows = Math.max(0, end - start);

  const dictIds = new Set([...slots.values()].filter((s) => s.field.dictionary).map((s) => s.field.dictionary!.id));
  const dictsP = dictIds.size ? readDictionaries(file, dictIds) : Promise.resolve(new Map<number, string[]>());

  const out: Record<string, Column> = {};
  const jobs: Array<Promise<void>> = [];
  for (const [name, slot] of slots) {
    const f = slot.field;
    const Ctor = f.dictionary ? arrayCtor({ typeId: T.Int, bitWidth: f.dictionary.bitWidth, signed: true }, name) : arrayCtor(f, name);
    const width = Ctor.BYTES_PER_ELEMENT;
    const target = new Ctor(rows);
    const targetBytes = new Uint8Array(target.buffer);
    let batchStart = 0;
    for (const m of metas) {
      const lo = Math.max(start, batchStart);
      const hi = Math.min(end, batchStart + m.length);
      if (hi > lo) {
        const [bo] = m.buffers[slot.buffer]!;
        const at = (lo - start) * width;
        jobs.push(
          file.source.read(m.bodyStart + bo + (lo - batchStart) * width, (hi - lo) * width).then((bytes) => {
            targetBytes.set(bytes, at);
          }),
        );
      }
      batchStart += m.length;
    }
    out[name] = target as NumericArray;
  }
  await Promise.all(jobs);
  const dicts = await dictsP;
  for (const [name, slot] of slots) {
    if (!slot.field.dictionary) continue;
    out[name] = { codes: out[name] as Int8Array | Int16Array | Int32Array, labels: dicts.get(slot.field.dictionary.id) ?? [] };
  }
  return out;
}

function batchMetas(file: ArrowFileIndex): Promise<BatchMeta[]> {
  return (file.metas ??= Promise.all(file.batches.map((b) => batchMeta(file, b))));
}

/** Total rows, from every batch's metadata. */
export async function rowCount(file: ArrowFileIndex): Promise<number> {
  const metas = await batchMetas(file);
  return metas.reduce((a, m) => a + m.length, 0);
}
