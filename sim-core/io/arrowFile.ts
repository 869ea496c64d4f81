/**
 * Arrow IPC *file* format (Feather v2) I/O for run directories (DESIGN.md section 8).
 *
 * - `writeArrowFile` writes one complete file atomically (`path.tmp`, fsync, rename), zero-copy from
 *   the column typed arrays (which may live on a SharedArrayBuffer).
 * - `ArrowFileAppender` grows a file one record batch per call; after every `append` returns the
 *   file on disk is a complete, valid Arrow file holding every batch so far, and it stays valid
 *   while an append is under way, so a process killed at any moment leaves a readable file.
 *
 * Layout of every file written here (byte-identical for identical input; no timestamps):
 *
 *   "ARROW1\0\0" | schema message | dictionary messages | record-batch messages | EOS (-1, 0)
 *   | footer flatbuffer | int32 footer length | "ARROW1"
 *
 * Messages are encapsulated as Arrow does since 0.15: int32 -1, int32 metadata length, Message
 * flatbuffer padded to 8 bytes, then the body; every body buffer is padded to 8 bytes. The schema
 * Message is encoded by apache-arrow (public API only); the batch Messages and the footer are
 * encoded here (see `batchMessageFlatbuffer`, `FooterEncoder`). The footer has its record-batch
 * block vector *last*, so an append only adds one 24-byte block to a buffer we keep instead of
 * re-encoding a footer that grows with every step.
 *
 * Every write goes through `writeAllAt`: at most MAX_WRITE_BYTES per call, whatever the file size,
 * and failures are FileWriteErrors naming the file, the bytes and the OS error.
 */
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, readFileSync, readSync, renameSync, rmSync, writevSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  Data,
  DataType,
  Dictionary,
  Field,
  FixedSizeList,
  Float32,
  Float64,
  Int16,
  Int32,
  Int8,
  Message,
  RecordBatch,
  Schema,
  Struct,
  Uint16,
  Uint32,
  Uint8,
  Utf8,
  makeData,
  makeVector,
  tableFromIPC,
} from 'apache-arrow';
import type { Table } from 'apache-arrow';
import { ARRAY_OF } from '../table.ts';
import type { TypedArray } from '../table.ts';

export type ArrowColumnType = 'f32' | 'f64' | 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'utf8';

export interface ColumnData {
  name: string;
  type: ArrowColumnType;
  /** Typed array of `rows * width` numbers (numeric / categorical columns), or `rows` strings (utf8). */
  values: TypedArray | string[];
  /** Values per row (row-major vector column, written as FixedSizeList<type>(width)); default 1. */
  width?: number;
  /** Labels of the integer codes in `values`; the column is written as Dictionary<Utf8>. */
  dictionary?: readonly string[];
}

type NumericType = Exclude<ArrowColumnType, 'utf8'>;
type IndexType = 'i8' | 'i16' | 'i32';

/** What a column is, independent of any one batch's values. */
interface ColumnPlan {
  name: string;
  type: ArrowColumnType;
  kind: 'numeric' | 'vector' | 'dictionary' | 'utf8';
  width: number;
  dictionary?: readonly string[];
  indexType?: IndexType;
  dictionaryId?: number;
  field: Field;
}

interface EncodedStrings {
  offsets: Int32Array;
  data: Uint8Array;
}

const MAGIC = Uint8Array.from([0x41, 0x52, 0x52, 0x4f, 0x57, 0x31]); // "ARROW1"
const MAGIC_PADDED = Uint8Array.from([0x41, 0x52, 0x52, 0x4f, 0x57, 0x31, 0, 0]);
const EOS = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
const ZEROS = new Uint8Array(8);
const EMPTY = new Uint8Array(0);
const METADATA_VERSION_V5 = 4;

function arrowNumericType(type: NumericType): DataType {
  switch (type) {
    case 'f32': return new Float32();
    case 'f64': return new Float64();
    case 'i8': return new Int8();
    case 'u8': return new Uint8();
    case 'i16': return new Int16();
    case 'u16': return new Uint16();
    case 'i32': return new Int32();
    case 'u32': return new Uint32();
  }
}

/**
 * Arrow requires signed dictionary indices. The index type depends only on the declared code type
 * and the dictionary size (so an appender's schema is fixed at open): signed codes keep their width
 * (zero-copy), unsigned codes keep their width when every valid code (< dictionary size) fits the
 * signed type of that width (zero-copy reinterpretation), and widen otherwise (one copy).
 */
function indexTypeFor(type: NumericType, dictionarySize: number): IndexType {
  switch (type) {
    case 'i8': return 'i8';
    case 'i16': return 'i16';
    case 'i32': return 'i32';
    case 'u8': return dictionarySize <= 0x80 ? 'i8' : 'i16';
    case 'u16': return dictionarySize <= 0x8000 ? 'i16' : 'i32';
    case 'u32': return 'i32';
    default: throw new Error(`dictionary codes must be integers, not ${type}`);
  }
}

function arrowIndexType(t: IndexType): Int8 | Int16 | Int32 {
  return t === 'i8' ? new Int8() : t === 'i16' ? new Int16() : new Int32();
}

/** Validates the schema-level description of the columns and derives Arrow fields. */
function planColumns(columns: readonly ColumnData[]): ColumnPlan[] {
  const seen = new Set<string>();
  let nextDictionaryId = 0;
  return columns.map((c) => {
    if (typeof c.name !== 'string' || c.name.length === 0) throw new Error('column without a name');
    if (seen.has(c.name)) throw new Error(`column "${c.name}" appears twice`);
    seen.add(c.name);
    const width = c.width ?? 1;
    if (!Number.isInteger(width) || width < 1) throw new Error(`column "${c.name}": width must be a positive integer, not ${width}`);
    if (c.type === 'utf8') {
      if (width !== 1) throw new Error(`column "${c.name}": utf8 columns cannot have a width`);
      if (c.dictionary) throw new Error(`column "${c.name}": utf8 columns cannot have a dictionary (give integer codes instead)`);
      return { name: c.name, type: c.type, kind: 'utf8', width, field: new Field(c.name, new Utf8(), false) };
    }
    if (!(c.type in ARRAY_OF)) throw new Error(`column "${c.name}": unknown type ${String(c.type)}`);
    if (c.dictionary) {
      if (width !== 1) throw new Error(`column "${c.name}": a categorical column cannot be a vector column`);
      if (c.type === 'f32' || c.type === 'f64') throw new Error(`column "${c.name}": dictionary codes must be integers, not ${c.type}`);
      if (c.dictionary.length > 0x7fffffff) throw new Error(`column "${c.name}": dictionary too large`);
      const indexType = indexTypeFor(c.type, c.dictionary.length);
      const dictionaryId = nextDictionaryId++;
      const type = new Dictionary(new Utf8(), arrowIndexType(indexType), dictionaryId, false);
      return {
        name: c.name, type: c.type, kind: 'dictionary', width, dictionary: c.dictionary.slice(), indexType, dictionaryId,
        field: new Field(c.name, type, false),
      };
    }
    const valueType = arrowNumericType(c.type);
    if (width > 1) {
      const type = new FixedSizeList(width, new Field('item', valueType, false));
      return { name: c.name, type: c.type, kind: 'vector', width, field: new Field(c.name, type, false) };
    }
    return { name: c.name, type: c.type, kind: 'numeric', width, field: new Field(c.name, valueType, false) };
  });
}

function schemaOf(plans: readonly ColumnPlan[], metadata?: Record<string, string>): Schema {
  const meta = new Map<string, string>();
  if (metadata) for (const [k, v] of Object.entries(metadata)) meta.set(k, String(v));
  return new Schema(plans.map((p) => p.field), meta);
}

/** Checks one batch's values against the column plan; returns the typed array or strings. */
function checkValues(plan: ColumnPlan, column: ColumnData, rows: number): TypedArray | string[] {
  const { values } = column;
  if (plan.kind === 'utf8') {
    if (!Array.isArray(values)) throw new Error(`column "${plan.name}": utf8 values must be a string[]`);
    if (values.length !== rows) throw new Error(`column "${plan.name}" has ${values.length} values, expected ${rows} rows`);
    return values;
  }
  const Ctor = ARRAY_OF[plan.type as NumericType];
  if (!(values instanceof Ctor)) {
    throw new Error(`column "${plan.name}": values must be a ${Ctor.name} for type ${plan.type}`);
  }
  const expected = rows * plan.width;
  if (values.length !== expected) {
    throw new Error(
      `column "${plan.name}" has ${values.length} values, expected ${expected} (${rows} rows x width ${plan.width})`,
    );
  }
  return values;
}

/** Byte view over any typed array (no copy; works on SharedArrayBuffer). */
function bytesOf(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

// One loop per element width, each always called with one array type (monomorphic: ~1 ns per
// element; a single loop over the TypedArray union runs ~5x slower once it has seen several types).
function maxU8(a: Uint8Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) if (a[i]! > max) max = a[i]!;
  return max;
}
function maxU16(a: Uint16Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) if (a[i]! > max) max = a[i]!;
  return max;
}
function maxU32(a: Uint32Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) if (a[i]! > max) max = a[i]!;
  return max;
}

/**
 * Throws unless every code is in [0, size). Signed codes are read as unsigned of the same width,
 * where negatives become >= 2^(bits-1); so "unsigned max < size (and < 2^(bits-1) if signed)"
 * is exact.
 */
function checkCodes(name: string, codes: TypedArray, size: number): void {
  if (codes.length === 0) return;
  const bits = codes.BYTES_PER_ELEMENT * 8;
  const signed = codes instanceof Int8Array || codes instanceof Int16Array || codes instanceof Int32Array;
  const limit = signed ? Math.min(size, 2 ** (bits - 1)) : size;
  if (limit >= 2 ** bits) return; // every value of the type is a valid code
  const max =
    bits === 8 ? maxU8(new Uint8Array(codes.buffer, codes.byteOffset, codes.length))
    : bits === 16 ? maxU16(new Uint16Array(codes.buffer, codes.byteOffset, codes.length))
    : maxU32(new Uint32Array(codes.buffer, codes.byteOffset, codes.length));
  if (max >= limit) {
    const bad = signed && max >= 2 ** (bits - 1) ? max - 2 ** bits : max;
    throw new Error(`column "${name}": dictionary code ${bad} is outside the dictionary (${size} labels)`);
  }
}

/** The dictionary indices as the signed index type of the plan (zero-copy unless widening). */
function indicesOf(plan: ColumnPlan, codes: TypedArray): Int8Array | Int16Array | Int32Array {
  checkCodes(plan.name, codes, plan.dictionary!.length);
  const want = plan.indexType!;
  const Signed = want === 'i8' ? Int8Array : want === 'i16' ? Int16Array : Int32Array;
  if (codes.BYTES_PER_ELEMENT === Signed.BYTES_PER_ELEMENT) {
    return codes instanceof Signed ? codes : new Signed(codes.buffer as ArrayBuffer, codes.byteOffset, codes.length);
  }
  return new Signed(codes); // widening (u8 -> i16, u16 -> i32): element-wise native copy
}

function encodeStrings(name: string, strings: readonly string[]): EncodedStrings {
  const n = strings.length;
  const offsets = new Int32Array(n + 1);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const s = strings[i];
    if (typeof s !== 'string') throw new Error(`column "${name}": value ${i} is not a string`);
    total += Buffer.byteLength(s, 'utf8');
    if (total > 0x7fffffff) throw new Error(`column "${name}": more than 2 GiB of text in one batch`);
    offsets[i + 1] = total;
  }
  const data = Buffer.alloc(total);
  for (let i = 0; i < n; i++) data.write(strings[i]!, offsets[i]!, 'utf8');
  return { offsets, data: bytesOf(data) };
}

const dictionaryCache = new WeakMap<readonly string[], EncodedStrings>();
function encodedDictionary(plan: ColumnPlan): EncodedStrings {
  const labels = plan.dictionary!;
  let e = dictionaryCache.get(labels);
  if (!e) dictionaryCache.set(labels, (e = encodeStrings(plan.name, labels)));
  return e;
}

// ---------------------------------------------------------------------------------------------
// Arrow in-memory record batches

/**
 * Builds an apache-arrow RecordBatch over the columns (zero-copy for numeric columns and for
 * same-width dictionary codes). Throws an Error naming the column whose length does not match.
 */
export function recordBatchOf(columns: ColumnData[], rows: number, metadata?: Record<string, string>): RecordBatch {
  checkRows(rows);
  const plans = planColumns(columns);
  const schema = schemaOf(plans, metadata);
  const children = plans.map((plan, i) => {
    const values = checkValues(plan, columns[i]!, rows);
    const type = plan.field.type;
    switch (plan.kind) {
      case 'numeric':
        return makeData({ type, length: rows, nullCount: 0, data: values as TypedArray } as never) as Data;
      case 'vector': {
        const child = makeData({
          type: (type as FixedSizeList).valueType, length: rows * plan.width, nullCount: 0, data: values as TypedArray,
        } as never) as Data;
        return makeData({ type, length: rows, nullCount: 0, child } as never) as Data;
      }
      case 'dictionary': {
        const dict = encodedDictionary(plan);
        const dictionary = makeVector(makeData({
          type: new Utf8(), length: plan.dictionary!.length, nullCount: 0, valueOffsets: dict.offsets, data: dict.data,
        }));
        return makeData({
          type, length: rows, nullCount: 0, data: indicesOf(plan, values as TypedArray), dictionary,
        } as never) as Data;
      }
      case 'utf8': {
        const s = encodeStrings(plan.name, values as string[]);
        return makeData({ type: new Utf8(), length: rows, nullCount: 0, valueOffsets: s.offsets, data: s.data }) as Data;
      }
    }
  });
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows, nullCount: 0, children }));
}

// ---------------------------------------------------------------------------------------------
// IPC encoding

/** One encapsulated message: the bytes to write, in order, and its footer block sizes. */
interface EncodedMessage {
  parts: Uint8Array[];
  metaDataLength: number;
  bodyLength: number;
}

/** Prefix (continuation marker + length) + flatbuffer + padding to a multiple of 8 bytes. */
function frameMetadata(flatbuffer: Uint8Array, parts: Uint8Array[]): number {
  const aligned = (flatbuffer.byteLength + 8 + 7) & ~7;
  const prefix = new Uint8Array(8);
  const dv = new DataView(prefix.buffer);
  dv.setInt32(0, -1, true);
  dv.setInt32(4, aligned - 8, true);
  parts.push(prefix, flatbuffer);
  const pad = aligned - 8 - flatbuffer.byteLength;
  if (pad > 0) parts.push(ZEROS.subarray(0, pad));
  return aligned;
}

/** Body buffers of one batch, with their Arrow `FieldNode`s and `Buffer` regions. */
class BodyBuilder {
  /** Length of each field node (their null counts are all 0). */
  readonly nodes: number[] = [];
  /** (offset, length) of each buffer, offsets relative to the body start. */
  readonly regions: number[] = [];
  readonly parts: Uint8Array[] = [];
  length = 0;

  node(length: number): void {
    this.nodes.push(length);
    this.buffer(EMPTY); // validity bitmap omitted: no nulls
  }

  buffer(view: ArrayBufferView): void {
    const bytes = view.byteLength;
    this.regions.push(this.length, bytes);
    if (bytes === 0) return;
    this.parts.push(bytesOf(view));
    const pad = ((bytes + 7) & ~7) - bytes;
    if (pad > 0) this.parts.push(ZEROS.subarray(0, pad));
    this.length += bytes + pad;
  }
}

function encodeRecordBatchMessage(plans: readonly ColumnPlan[], columns: readonly ColumnData[], rows: number): EncodedMessage {
  const body = new BodyBuilder();
  for (let i = 0; i < plans.length; i++) {
    const plan = plans[i]!;
    const values = checkValues(plan, columns[i]!, rows);
    switch (plan.kind) {
      case 'numeric':
        body.node(rows);
        body.buffer(values as TypedArray);
        break;
      case 'vector':
        body.node(rows);
        body.node(rows * plan.width);
        body.buffer(values as TypedArray);
        break;
      case 'dictionary':
        body.node(rows);
        body.buffer(indicesOf(plan, values as TypedArray));
        break;
      case 'utf8': {
        const s = encodeStrings(plan.name, values as string[]);
        body.node(rows);
        body.buffer(s.offsets);
        body.buffer(s.data);
        break;
      }
    }
  }
  return framedBatchMessage(body, rows);
}

function encodeDictionaryMessage(plan: ColumnPlan): EncodedMessage {
  const dict = encodedDictionary(plan);
  const body = new BodyBuilder();
  body.node(plan.dictionary!.length);
  body.buffer(dict.offsets);
  body.buffer(dict.data);
  return framedBatchMessage(body, plan.dictionary!.length, plan.dictionaryId!);
}

/** The framed Message of one batch followed by its body; a dictionary batch when `dictionaryId` is given. */
function framedBatchMessage(body: BodyBuilder, rows: number, dictionaryId?: number): EncodedMessage {
  const parts: Uint8Array[] = [];
  const metaDataLength = frameMetadata(batchMessageFlatbuffer(body.nodes, body.regions, rows, body.length, dictionaryId), parts);
  for (const p of body.parts) parts.push(p);
  return { parts, metaDataLength, bodyLength: body.length };
}

// ---------------------------------------------------------------------------------------------
// Batch Message flatbuffers, encoded here
//
// apache-arrow's public API encodes a Schema message (`Message.from(schema)`) but has no public
// way to describe a record batch or dictionary batch by its buffer layout, which is what a
// zero-copy writer has; those classes live in an internal module whose path may change in any
// release. So the two batch messages are encoded here, byte for byte as flatbuffers' reference
// builder lays them out (the files stay identical to those written before; a test pins them):
// the buffer is built back to front, each scalar aligned to its size relative to the buffer's
// end, and fields equal to their schema default left out.

const HEADER_DICTIONARY_BATCH = 2; // MessageHeader.DictionaryBatch
const HEADER_RECORD_BATCH = 3; // MessageHeader.RecordBatch

/** A table field in the order it is added; `offset` values are positions returned by the builder. */
type TableField = readonly [slot: number, kind: 'i8' | 'i16' | 'i64' | 'offset', value: number];

/**
 * A flatbuffer built from the end of a fixed-size buffer. Positions count bytes from the end, as
 * flatbuffers' own offsets and alignment do, so they do not depend on the capacity.
 */
class BackwardBuilder {
  private readonly bytes: Uint8Array;
  private readonly view: DataView;
  private space: number;
  private maxAlign = 1;

  constructor(capacity: number) {
    this.bytes = new Uint8Array(capacity);
    this.view = new DataView(this.bytes.buffer);
    this.space = capacity;
  }

  get position(): number {
    return this.bytes.byteLength - this.space;
  }

  /** Pads so that the position is a multiple of `size` (a power of 2) once `then` more bytes are written. */
  align(size: number, then = 0): void {
    if (size > this.maxAlign) this.maxAlign = size;
    this.space -= -(this.position + then) & (size - 1); // zeros: the buffer is new and written once
  }

  u8(value: number): void {
    this.view.setUint8(--this.space, value);
  }

  u16(value: number): void {
    this.view.setUint16((this.space -= 2), value, true);
  }

  u32(value: number): void {
    this.view.setUint32((this.space -= 4), value, true);
  }

  u64(value: number): void {
    setU64(this.view, (this.space -= 8), value);
  }

  /** A relative offset to the thing at `target`, written here. */
  offset(target: number): void {
    this.align(4);
    this.u32(this.position + 4 - target);
  }

  /** A vector of structs of two uint64 each, given flat as [a0, b0, a1, b1, ...]; returns its position. */
  pairVector(pairs: readonly number[]): number {
    const n = pairs.length / 2;
    this.align(4, 16 * n);
    this.align(8, 16 * n);
    for (let i = pairs.length - 2; i >= 0; i -= 2) {
      this.u64(pairs[i + 1]!);
      this.u64(pairs[i]!);
    }
    this.u32(n);
    return this.position;
  }

  /** A table with `slots` field slots; `fields` already omit the ones at their default. */
  table(slots: number, fields: readonly TableField[]): number {
    const start = this.position;
    const at = new Array<number>(slots).fill(0);
    for (const [slot, kind, value] of fields) {
      switch (kind) {
        case 'i8': this.align(1); this.u8(value); break;
        case 'i16': this.align(2); this.u16(value); break;
        case 'i64': this.align(8); this.u64(value); break;
        case 'offset': this.offset(value); break;
      }
      at[slot] = this.position;
    }
    this.align(4);
    this.u32(0); // becomes the signed offset to the vtable
    const table = this.position;
    let used = slots;
    while (used > 0 && at[used - 1] === 0) used--;
    for (let i = used - 1; i >= 0; i--) this.u16(at[i] ? table - at[i]! : 0);
    this.u16(table - start);
    this.u16(2 * (used + 2));
    // The signed offset from the table to its vtable, which sits just before it. (flatbuffers
    // shares a vtable with an equal earlier one; no two tables of a batch message are alike: the
    // RecordBatch, DictionaryBatch and Message vtables differ in size or in their first slots.)
    this.view.setInt32(this.bytes.byteLength - table, this.position - table, true);
    return table;
  }

  /** The finished flatbuffer with `root` as its root table (a view into this builder's buffer). */
  finish(root: number): Uint8Array {
    this.align(this.maxAlign, 4);
    this.offset(root);
    return this.bytes.subarray(this.space);
  }
}

/**
 * The Message flatbuffer of a record batch (or of a dictionary batch with id `dictionaryId`,
 * never a delta): metadata version V5, no compression, no custom metadata, null counts 0.
 */
function batchMessageFlatbuffer(
  nodeLengths: readonly number[],
  regions: readonly number[],
  rows: number,
  bodyLength: number,
  dictionaryId?: number,
): Uint8Array {
  const nodePairs: number[] = [];
  for (const length of nodeLengths) nodePairs.push(length, 0);
  const b = new BackwardBuilder(256 + 8 * (nodePairs.length + regions.length)); // 16 bytes a struct + < 256 of tables
  const nodes = b.pairVector(nodePairs);
  const buffers = b.pairVector(regions);
  const fields: TableField[] = [];
  if (rows !== 0) fields.push([0, 'i64', rows]);
  fields.push([1, 'offset', nodes], [2, 'offset', buffers]);
  let header = b.table(5, fields); // RecordBatch {length, nodes, buffers, compression, variadicBufferCounts}
  if (dictionaryId !== undefined) {
    // DictionaryBatch {id, data, isDelta}
    header = b.table(3, dictionaryId !== 0 ? [[0, 'i64', dictionaryId], [1, 'offset', header]] : [[1, 'offset', header]]);
  }
  const message: TableField[] = [
    [0, 'i16', METADATA_VERSION_V5],
    [2, 'offset', header],
    [1, 'i8', dictionaryId === undefined ? HEADER_RECORD_BATCH : HEADER_DICTIONARY_BATCH],
  ];
  if (bodyLength !== 0) message.push([3, 'i64', bodyLength]);
  return b.finish(b.table(5, message)); // Message {version, header_type, header, bodyLength, custom_metadata}
}

/** Writes a 64-bit non-negative integer (< 2^53) little-endian without BigInt. */
function setU64(dv: DataView, at: number, value: number): void {
  dv.setUint32(at, value >>> 0, true);
  dv.setUint32(at + 4, Math.floor(value / 0x1_0000_0000), true);
}

/** Writes one flatbuffers `Block` struct {offset: long, metaDataLength: int, pad, bodyLength: long}. */
function setBlock(dv: DataView, at: number, offset: number, metaDataLength: number, bodyLength: number): void {
  setU64(dv, at, offset);
  dv.setInt32(at + 8, metaDataLength, true);
  dv.setInt32(at + 12, 0, true);
  setU64(dv, at + 16, bodyLength);
}

/**
 * The file footer (flatbuffers `Footer` table), laid out so that the record-batch block vector is
 * the last thing in it: appending a batch appends one 24-byte block and bumps the vector length.
 *
 *   0   uoffset root -> table (16)
 *   4   vtable: [vtable size 12, table size 20, version @16, schema @4, dictionaries @8, recordBatches @12]
 *   16  table: soffset 12 | schema uoffset | dictionaries uoffset | recordBatches uoffset | version i16 | pad
 *   36  u32 dictionary count, blocks from 40 (8-aligned)
 *   S   the schema Message flatbuffer, embedded whole (8-aligned; only its Schema table is referenced)
 *   R   u32 record-batch count, blocks from R + 4 (8-aligned) to the end
 *
 * Every offset in a flatbuffer is relative, so the embedded schema message stays valid; it is placed
 * 8-aligned because flatbuffers aligns relative to the buffer's end and pads its size to the
 * largest alignment used.
 */
class FooterEncoder {
  private readonly head: Uint8Array;
  private readonly headView: DataView;
  private readonly countAt: number;
  private blocks = new Uint8Array(24 * 16);
  private blocksView = new DataView(this.blocks.buffer);
  private count = 0;

  constructor(schemaMessage: Uint8Array, dictionaryBlocks: readonly { offset: number; metaDataLength: number; bodyLength: number }[]) {
    const schemaTable = schemaTableOffset(schemaMessage);
    const dictAt = 36;
    const schemaAt = dictAt + 4 + 24 * dictionaryBlocks.length; // 8-aligned: 40 + 24k
    const schemaLen = (schemaMessage.byteLength + 7) & ~7;
    const countAt = schemaAt + schemaLen + 4; // count at R, blocks at R + 4 (8-aligned)
    const head = new Uint8Array(countAt + 4);
    const dv = new DataView(head.buffer);
    dv.setUint32(0, 16, true); // root table
    dv.setUint16(4, 12, true); // vtable size
    dv.setUint16(6, 20, true); // table inline size
    dv.setUint16(8, 16, true); // field 0: version
    dv.setUint16(10, 4, true); // field 1: schema
    dv.setUint16(12, 8, true); // field 2: dictionaries
    dv.setUint16(14, 12, true); // field 3: recordBatches
    dv.setInt32(16, 16 - 4, true); // soffset to the vtable
    dv.setUint32(20, schemaAt + schemaTable - 20, true);
    dv.setUint32(24, dictAt - 24, true);
    dv.setUint32(28, countAt - 28, true);
    dv.setInt16(32, METADATA_VERSION_V5, true);
    dv.setUint32(dictAt, dictionaryBlocks.length, true);
    dictionaryBlocks.forEach((b, i) => setBlock(dv, dictAt + 4 + 24 * i, b.offset, b.metaDataLength, b.bodyLength));
    head.set(schemaMessage, schemaAt);
    this.head = head;
    this.headView = dv;
    this.countAt = countAt;
  }

  addRecordBatch(offset: number, metaDataLength: number, bodyLength: number): void {
    if (24 * (this.count + 1) > this.blocks.byteLength) {
      const grown = new Uint8Array(this.blocks.byteLength * 2);
      grown.set(this.blocks);
      this.blocks = grown;
      this.blocksView = new DataView(grown.buffer);
    }
    setBlock(this.blocksView, 24 * this.count, offset, metaDataLength, bodyLength);
    this.count++;
  }

  /** Undoes the last `addRecordBatch` (after a failed write). */
  dropLastRecordBatch(): void {
    this.count--;
  }

  /** The record-batch blocks so far: (offset, metadata length, body length) per batch. */
  recordBatches(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.count; i++) {
      const at = 24 * i;
      out.push(Number(this.blocksView.getBigInt64(at, true)), this.blocksView.getInt32(at + 8, true), Number(this.blocksView.getBigInt64(at + 16, true)));
    }
    return out;
  }

  /** Byte length of the footer flatbuffer as it stands. */
  get byteLength(): number {
    return this.head.byteLength + 24 * this.count;
  }

  /** The footer flatbuffer as it stands (views into buffers this encoder reuses: write them at once). */
  flatbuffer(): Uint8Array[] {
    this.headView.setUint32(this.countAt, this.count, true);
    return [this.head, this.blocks.subarray(0, 24 * this.count)];
  }

  /** Footer flatbuffer, its int32 length and the closing magic, as parts to write. */
  parts(): Uint8Array[] {
    return [...this.flatbuffer(), trailer(this.byteLength)];
  }
}

/** The last 10 bytes of a file: int32 footer length, "ARROW1". */
function trailer(footerLength: number): Uint8Array {
  const t = new Uint8Array(10);
  new DataView(t.buffer).setInt32(0, footerLength, true);
  t.set(MAGIC, 4);
  return t;
}

/** Position of the Schema table inside an encoded schema Message flatbuffer. */
function schemaTableOffset(message: Uint8Array): number {
  const dv = new DataView(message.buffer, message.byteOffset, message.byteLength);
  const table = dv.getUint32(0, true);
  const vtable = table - dv.getInt32(table, true);
  const vtableSize = dv.getUint16(vtable, true);
  const HEADER_SLOT = 4 + 2 * 2; // Message fields: version, header_type, header, bodyLength, custom_metadata
  if (vtableSize <= HEADER_SLOT) throw new Error('schema message without a header');
  const field = table + dv.getUint16(vtable + HEADER_SLOT, true);
  return field + dv.getUint32(field, true);
}

/** The start of a file: magic, schema message, dictionary messages; and the footer encoder. */
function fileHead(plans: readonly ColumnPlan[], schema: Schema): { parts: Uint8Array[]; length: number; footer: FooterEncoder } {
  const parts: Uint8Array[] = [MAGIC_PADDED];
  let length = MAGIC_PADDED.byteLength;
  const schemaMessage = Message.encode(Message.from(schema));
  length += frameMetadata(schemaMessage, parts);
  const blocks: { offset: number; metaDataLength: number; bodyLength: number }[] = [];
  for (const plan of plans) {
    if (plan.kind !== 'dictionary') continue;
    const m = encodeDictionaryMessage(plan);
    blocks.push({ offset: length, metaDataLength: m.metaDataLength, bodyLength: m.bodyLength });
    for (const p of m.parts) parts.push(p);
    length += m.metaDataLength + m.bodyLength;
  }
  return { parts, length, footer: new FooterEncoder(schemaMessage, blocks) };
}

function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

// ---------------------------------------------------------------------------------------------
// Writing

/**
 * Most bytes handed to one write call. A run file can hold several GB (graph.arrow at 10^7 agents
 * is ~4 GB), but no single call may reach 2 GiB: Node's synchronous fs binding passes a write's
 * byte count back as a 32-bit int, so a call that writes 2 GiB or more reports a bogus negative
 * error even though the bytes were written ("Unknown system error -335009958, write" was a
 * 3,959,957,338-byte write wrapping around; a 2.4 GB writev on Linux fails the same way). At
 * 256 MiB a call the extra syscalls cost nothing measurable.
 */
export const MAX_WRITE_BYTES = 256 * 1024 * 1024;

/** Most buffers in one writev call (Linux's IOV_MAX is 1024). */
const MAX_IOV = 512;

/** The call that writes every byte of every file here, and the most bytes it gets at once. */
export interface WriteIo {
  /** Writes `buffers` (or a prefix of them) at `position`; returns the bytes written, like fs.writevSync. */
  writev(fd: number, buffers: Uint8Array[], position: number): number;
  maxBytesPerCall: number;
}

const DEFAULT_IO: WriteIo = { writev: writevSync, maxBytesPerCall: MAX_WRITE_BYTES };
let io: WriteIo = DEFAULT_IO;

/**
 * For tests: replaces the write call and its size limit (to force short writes, small chunks or
 * errors); without an argument, restores fs.writevSync and MAX_WRITE_BYTES. The bytes a file ends
 * up with never depend on either.
 */
export function setWriteIo(replacement?: Partial<WriteIo>): void {
  io = { ...DEFAULT_IO, ...replacement };
}

/**
 * Writing a file failed. The message names the file, the bytes being written and how many of them
 * were, and the OS error (code and text, e.g. "ENOSPC: no space left on device, write"), so that a
 * run that dies after hours of set-up says what to fix; `code` is the errno name for programs.
 */
export class FileWriteError extends Error {
  readonly code: string | undefined;

  constructor(
    readonly path: string,
    cause: unknown,
    readonly bytes?: number,
    readonly written?: number,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    const amount =
      bytes === undefined ? '' : written === undefined ? ` (${bytes} bytes)` : ` (${written} of ${bytes} bytes written)`;
    super(`cannot write ${path}: ${reason}${amount}`, { cause });
    this.name = 'FileWriteError';
    this.code = (cause as NodeJS.ErrnoException | undefined)?.code;
  }
}

function byteLengthOf(parts: readonly Uint8Array[]): number {
  let n = 0;
  for (const p of parts) n += p.byteLength;
  return n;
}

/**
 * Writes all parts at `position` of the file `path` (open as `fd`), in calls of at most
 * `io.maxBytesPerCall` bytes and MAX_IOV buffers, going on after short writes. Returns the bytes
 * written (all of them); a failure is a FileWriteError.
 */
function writeAllAt(fd: number, parts: readonly Uint8Array[], position: number, path: string): number {
  const total = byteLengthOf(parts);
  const limit = io.maxBytesPerCall;
  let done = 0;
  let i = 0; // first part not yet written whole
  let skip = 0; // bytes of parts[i] already written
  const batch: Uint8Array[] = [];
  while (done < total) {
    batch.length = 0;
    let bytes = 0;
    for (let j = i, from = skip; j < parts.length && batch.length < MAX_IOV && bytes < limit; j++, from = 0) {
      const p = parts[j]!;
      const n = Math.min(p.byteLength - from, limit - bytes);
      if (n <= 0) continue;
      batch.push(from === 0 && n === p.byteLength ? p : p.subarray(from, from + n));
      bytes += n;
    }
    let written: number;
    try {
      written = io.writev(fd, batch, position + done);
    } catch (err) {
      throw new FileWriteError(path, err, total, done);
    }
    if (!(written > 0 && written <= bytes)) {
      throw new FileWriteError(path, new Error(`write returned ${written} for ${bytes} bytes`), total, done);
    }
    done += written;
    skip += written;
    while (i < parts.length && skip >= parts[i]!.byteLength) skip -= parts[i++]!.byteLength;
  }
  return total;
}

function fsyncDirectory(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dirname(path), 'r');
    fsyncSync(fd);
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function checkRows(rows: number): void {
  if (!Number.isInteger(rows) || rows < 0 || rows > 0x7fffffff) throw new Error(`invalid row count ${rows}`);
}

/**
 * Writes `parts` to `path.tmp`, fsyncs and renames it to `path`; returns the open fd if `keepOpen`.
 * On failure the temporary file is removed (a failed multi-GB write must not keep the disk full:
 * the run still has to record why it stopped) and a FileWriteError naming `path` is thrown.
 */
function writeAtomically(path: string, parts: readonly Uint8Array[], keepOpen: boolean): number | undefined {
  const tmp = `${path}.tmp`;
  let fd: number | undefined;
  let written = 0;
  try {
    fd = openSync(tmp, 'w');
    written = writeAllAt(fd, parts, 0, path);
    fsyncSync(fd);
    renameSync(tmp, path);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    rmSync(tmp, { force: true });
    throw err instanceof FileWriteError ? err : new FileWriteError(path, err, byteLengthOf(parts), written);
  }
  fsyncDirectory(path);
  if (keepOpen) return fd;
  closeSync(fd);
  return undefined;
}

/**
 * Writes one complete Arrow IPC file atomically (`path.tmp`, fsync, rename). Column buffers are
 * written straight from the typed arrays with vectored writes (no concatenation). `rows` = 0 gives
 * a file with the schema and no record batch. Same input, same bytes.
 */
export function writeArrowFile(path: string, columns: ColumnData[], rows: number, metadata?: Record<string, string>): void {
  checkRows(rows);
  const plans = planColumns(columns);
  const head = fileHead(plans, schemaOf(plans, metadata));
  const parts = head.parts;
  if (rows > 0) {
    const m = encodeRecordBatchMessage(plans, columns, rows);
    head.footer.addRecordBatch(head.length, m.metaDataLength, m.bodyLength);
    for (const p of m.parts) parts.push(p);
  } else {
    for (let i = 0; i < plans.length; i++) checkValues(plans[i]!, columns[i]!, 0);
  }
  parts.push(EOS, ...head.footer.parts());
  writeAtomically(path, parts, false);
}

/**
 * Streams a table that grows one record batch per call into an Arrow IPC file. After `open` and
 * after every `append` returns, the file is a complete, valid Arrow file holding every batch so
 * far: each append writes the new batch where the old footer started, then a fresh footer. The
 * writes are ordered so that the file stays valid even while an append is under way (a process
 * killed mid-append leaves the batches before it; see `writeBatch`). Call `sync()` for durability
 * against power loss (written data already survives the death of the process).
 *
 * Cost per append: the batch, plus about three passes over a footer that holds 24 bytes per batch
 * so far, plus five syscalls: ~0.1 ms per append for a 1-row batch at 10^4 batches, growing
 * linearly (quadratic over a run). A table with one tiny batch per step over 10^5+ steps should
 * buffer rows and append every k steps.
 */
/** An appender's position, saved in a checkpoint: where the next batch goes and the batches so far. */
export interface AppenderState {
  end: number;
  rows: number;
  batches: number;
  /** (offset, metadata length, body length) of every record batch. */
  blocks: number[];
}

export class ArrowFileAppender {
  private fd: number | undefined;
  private readonly plans: ColumnPlan[];
  private readonly footer: FooterEncoder;
  /** Where the next record batch (and, until then, the EOS marker and the footer) starts. */
  private end: number;
  private rows = 0;
  private batches = 0;
  private failed: Error | undefined;

  private constructor(
    private readonly path: string,
    fd: number,
    plans: ColumnPlan[],
    footer: FooterEncoder,
    end: number,
  ) {
    this.fd = fd;
    this.plans = plans;
    this.footer = footer;
    this.end = end;
  }

  /**
   * Creates (or replaces) `path` with a valid file holding the schema, the dictionaries and no
   * record batch. `schemaColumns` give names, types, widths and dictionaries; their values are
   * ignored. Each dictionary is fixed here and written once.
   */
  static open(path: string, schemaColumns: ColumnData[], metadata?: Record<string, string>): ArrowFileAppender {
    const plans = planColumns(schemaColumns);
    const head = fileHead(plans, schemaOf(plans, metadata));
    const parts = [...head.parts, EOS, ...head.footer.parts()];
    const fd = writeAtomically(path, parts, true)!;
    return new ArrowFileAppender(path, fd, plans, head.footer, head.length);
  }

  /**
   * Reopens a file this appender wrote, as it was when `state()` was taken (a checkpoint): the
   * batches after that point are cut off, and the file is a valid Arrow file holding exactly the
   * first `state.batches` batches again, byte-identical to the file at that moment. The schema
   * must be the one the file was opened with (its head is compared byte for byte).
   */
  static resume(path: string, schemaColumns: ColumnData[], state: AppenderState, metadata?: Record<string, string>): ArrowFileAppender {
    const plans = planColumns(schemaColumns);
    const head = fileHead(plans, schemaOf(plans, metadata));
    const fd = openSync(path, 'r+');
    try {
      const size = fstatSync(fd).size;
      if (size < state.end) throw new Error(`${path} is shorter (${size} bytes) than at the checkpoint (${state.end} bytes)`);
      const expected = Buffer.concat(head.parts);
      const actual = Buffer.alloc(expected.byteLength);
      readSync(fd, actual, 0, actual.byteLength, 0);
      if (!actual.equals(expected)) throw new Error(`${path} does not start with the schema this run writes`);
      const b = state.blocks;
      if (b.length !== 3 * state.batches) throw new Error(`${path}: checkpoint lists ${b.length / 3} batches, expected ${state.batches}`);
      for (let i = 0; i < b.length; i += 3) head.footer.addRecordBatch(b[i], b[i + 1], b[i + 2]);
      const tail = [EOS, ...head.footer.parts()];
      writeAllAt(fd, tail, state.end, path);
      ftruncateSync(fd, state.end + byteLengthOf(tail));
      fsyncSync(fd);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    const a = new ArrowFileAppender(path, fd, plans, head.footer, state.end);
    a.rows = state.rows;
    a.batches = state.batches;
    return a;
  }

  /** Where the file stands now, for `resume` (a checkpoint). */
  state(): AppenderState {
    return { end: this.end, rows: this.rows, batches: this.batches, blocks: this.footer.recordBatches() };
  }

  get rowsWritten(): number {
    return this.rows;
  }

  get batchesWritten(): number {
    return this.batches;
  }

  /**
   * Appends one record batch of `rows` rows (nothing when `rows` is 0). Columns are matched by name
   * and must have the types given at open; `width` and `dictionary` may be left out (they are the
   * ones given at open) and, if given, must equal them.
   */
  append(columns: ColumnData[], rows: number): void {
    if (this.fd === undefined) throw new Error('ArrowFileAppender is closed');
    if (this.failed) throw new Error(`ArrowFileAppender stopped after a failed write: ${this.failed.message}`);
    checkRows(rows);
    const ordered = this.order(columns);
    if (rows === 0) {
      for (let i = 0; i < this.plans.length; i++) checkValues(this.plans[i]!, ordered[i]!, 0);
      return;
    }
    const m = encodeRecordBatchMessage(this.plans, ordered, rows);
    try {
      this.writeBatch(this.fd, m);
    } catch (err) {
      // The file is still valid (it holds the batches before this one), but our idea of its layout
      // may no longer match: refuse further appends rather than risk breaking it.
      this.failed = err as Error;
      throw err;
    }
    this.rows += rows;
    this.batches++;
  }

  /**
   * Writes one encoded batch so that the file is a valid Arrow file at every instant, even if the
   * process dies part-way through a large write (the kernel can stop a multi-page write at a page
   * boundary on SIGKILL; a write within one page is all or nothing). Readers locate the footer from
   * the file's last 10 bytes and ignore bytes after the footer flatbuffer, which allows:
   *
   *   1. a 10-byte trailer at a new, larger end (one page) whose length points back at the current
   *      footer, so the footer "buffer" is the current footer followed by junk;
   *   2. a copy of the current footer past where the file will end;
   *   3. a 4-byte length update in that trailer (one page) pointing at the copy;
   *   4. the batch, the EOS marker, the new footer and trailer where the old footer was;
   *   5. ftruncate to the final length, which makes the new trailer the last 10 bytes.
   *
   * The final layout is the same as writeArrowFile's (byte-identical for the same batches).
   */
  private writeBatch(fd: number, m: EncodedMessage): void {
    const E = this.end;
    const oldFooterStart = E + EOS.byteLength;
    const oldFooterLength = this.footer.byteLength;
    const newFooterLength = oldFooterLength + 24;
    const finalSize = E + m.metaDataLength + m.bodyLength + EOS.byteLength + newFooterLength + 10;
    const copyStart = align(finalSize, 16);
    const tempTrailerAt = align(copyStart + oldFooterLength, 16); // 16-aligned: never straddles a page

    writeAllAt(fd, [trailer(tempTrailerAt - oldFooterStart)], tempTrailerAt, this.path); // 1
    writeAllAt(fd, this.footer.flatbuffer(), copyStart, this.path); // 2
    const len = new Uint8Array(4);
    new DataView(len.buffer).setInt32(0, tempTrailerAt - copyStart, true);
    writeAllAt(fd, [len], tempTrailerAt, this.path); // 3

    this.footer.addRecordBatch(E, m.metaDataLength, m.bodyLength);
    let written: number;
    try {
      written = writeAllAt(fd, [...m.parts, EOS, ...this.footer.parts()], E, this.path); // 4
    } catch (err) {
      this.footer.dropLastRecordBatch();
      throw err;
    }
    if (E + written !== finalSize) throw new Error('internal error: Arrow file layout mismatch');
    try {
      ftruncateSync(fd, finalSize); // 5
    } catch (err) {
      throw new FileWriteError(this.path, err);
    }
    this.end = E + m.metaDataLength + m.bodyLength;
  }

  /** fsync: makes every completed append durable against power loss, not just process death. */
  sync(): void {
    if (this.fd === undefined) return;
    try {
      fsyncSync(this.fd);
    } catch (err) {
      throw new FileWriteError(this.path, err);
    }
  }

  /** Flushes to disk and closes the file; idempotent. The file stays as it is (already complete). */
  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      fsyncSync(fd);
    } catch (err) {
      throw new FileWriteError(this.path, err);
    } finally {
      closeSync(fd);
    }
  }

  private order(columns: readonly ColumnData[]): ColumnData[] {
    if (columns.length !== this.plans.length) {
      throw new Error(`append got ${columns.length} columns, expected ${this.plans.length} (${this.plans.map((p) => p.name).join(', ')})`);
    }
    const byName = new Map<string, ColumnData>();
    for (const c of columns) byName.set(c.name, c);
    return this.plans.map((plan) => {
      const c = byName.get(plan.name);
      if (!c) throw new Error(`append is missing column "${plan.name}"`);
      if (c.type !== plan.type) throw new Error(`column "${plan.name}" has type ${c.type}, opened as ${plan.type}`);
      if (c.width !== undefined && c.width !== plan.width) {
        throw new Error(`column "${plan.name}" has width ${c.width}, opened as ${plan.width}`);
      }
      if (c.dictionary && c.dictionary !== plan.dictionary) {
        const d = plan.dictionary;
        if (!d || d.length !== c.dictionary.length || c.dictionary.some((label, i) => label !== d[i])) {
          throw new Error(`column "${plan.name}": the dictionary is fixed at open and cannot change`);
        }
      }
      return c;
    });
  }
}

/** Reads a whole Arrow IPC file (file or stream format) into an apache-arrow Table. */
export function readArrowFile(path: string): Table {
  return tableFromIPC(readFileSync(path));
}
