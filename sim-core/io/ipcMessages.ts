/**
 * Arrow IPC encoding for the writer: message framing, record-batch and dictionary messages (their
 * flatbuffers encoded here), the file head (magic, schema message from apache-arrow's public API,
 * dictionaries) and the footer, whose record-batch block vector is last so an append adds one
 * 24-byte block instead of re-encoding a footer that grows with every step.
 */
import { Message, type Schema } from 'apache-arrow';
import { ARRAY_OF, type TypedArray } from '../table.ts';
import { plainParts, type Part } from './fileWrite.ts';
import { bytesOf, isGenerated, type ArrowColumnType, type ColumnData, type ColumnPlan, type GeneratedValues, EMPTY, MAGIC, MAGIC_PADDED, METADATA_VERSION_V5, ZEROS, checkValues, encodeStrings, encodedDictionary, indicesOf } from './columnPlan.ts';

// ---------------------------------------------------------------------------------------------
// IPC encoding

/** One encapsulated message: the bytes to write, in order, and its footer block sizes. */
export interface EncodedMessage {
  parts: Part[];
  metaDataLength: number;
  bodyLength: number;
}

/** Prefix (continuation marker + length) + flatbuffer + padding to a multiple of 8 bytes. */
function frameMetadata(flatbuffer: Uint8Array, parts: Part[]): number {
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
  readonly parts: Part[] = [];
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

  /** A buffer of `g.length` values of `Ctor`, generated in slices of at most 4M values as written. */
  generated(g: GeneratedValues, Ctor: new (n: number) => TypedArray): void {
    const bytes = g.length * (Ctor as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
    this.regions.push(this.length, bytes);
    if (bytes === 0) return;
    this.parts.push({
      byteLength: bytes,
      *slices() {
        const buf = new Ctor(Math.min(g.length, 1 << 22));
        for (let from = 0; from < g.length; from += buf.length) {
          const out = buf.subarray(0, Math.min(buf.length, g.length - from));
          g.fill(out, from);
          yield bytesOf(out);
        }
      },
    });
    const pad = ((bytes + 7) & ~7) - bytes;
    if (pad > 0) this.parts.push(ZEROS.subarray(0, pad));
    this.length += bytes + pad;
  }
}

export function encodeRecordBatchMessage(plans: readonly ColumnPlan[], columns: readonly ColumnData[], rows: number): EncodedMessage {
  const body = new BodyBuilder();
  for (let i = 0; i < plans.length; i++) {
    const plan = plans[i]!;
    const values = checkValues(plan, columns[i]!, rows);
    switch (plan.kind) {
      case 'numeric':
        body.node(rows);
        if (isGenerated(values)) body.generated(values, ARRAY_OF[plan.type as Exclude<ArrowColumnType, 'utf8'>]);
        else body.buffer(values as TypedArray);
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
  const parts: Part[] = [];
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
export class FooterEncoder {
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
export function trailer(footerLength: number): Uint8Array {
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
export function fileHead(plans: readonly ColumnPlan[], schema: Schema): { parts: Uint8Array[]; length: number; footer: FooterEncoder } {
  const parts: Uint8Array[] = [MAGIC_PADDED];
  let length = MAGIC_PADDED.byteLength;
  const schemaMessage = Message.encode(Message.from(schema));
  length += frameMetadata(schemaMessage, parts);
  const blocks: { offset: number; metaDataLength: number; bodyLength: number }[] = [];
  for (const plan of plans) {
    if (plan.kind !== 'dictionary') continue;
    const m = encodeDictionaryMessage(plan);
    blocks.push({ offset: length, metaDataLength: m.metaDataLength, bodyLength: m.bodyLength });
    for (const p of plainParts(m.parts)) parts.push(p);
    length += m.metaDataLength + m.bodyLength;
  }
  return { parts, length, footer: new FooterEncoder(schemaMessage, blocks) };
}

export function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}
