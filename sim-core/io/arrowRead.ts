/**
 * Reading Arrow IPC files (file or stream format) of any size.
 *
 * `readArrowFile` reads a file whole into an apache-arrow Table: simple, and limited to what one
 * read and one heap hold (Node reads at most 2 GiB at once; graph.arrow at 10M agents and 495M
 * follows is 3.96 GB in one record batch). `arrowFileSummary` and `readArrowBatches` walk the
 * file's messages instead, reading each message's metadata (apache-arrow's `Message.decode`) and
 * only the bytes they need of its body: the summary none, the batches the rows of one slice at a
 * time, so a record batch of any length comes back as batches of at most `maxRows` rows.
 *
 * Buffers are located from the record batch's field nodes and buffer regions in the order the
 * Arrow format lays them out (depth first, validity bitmap first); the column types handled are
 * those Arrow writers give tables like socsim's: integers, floats, booleans, UTF-8 strings,
 * fixed-size lists, structs and dictionary-encoded columns. Compressed bodies are not read.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import {
  Message,
  MessageHeader,
  RecordBatch,
  Struct,
  Type,
  makeData,
  makeVector,
  tableFromIPC,
  type Data,
  type DataType,
  type Dictionary,
  type FixedSizeList,
  type Schema,
  type Table,
  type Vector,
} from 'apache-arrow';
import { Footer } from 'apache-arrow/ipc/metadata/file';
import { InputError, isInputError } from '../errors.ts';

/** Reads a whole Arrow IPC file (file or stream format) into an apache-arrow Table. */
export function readArrowFile(path: string): Table {
  return tableFromIPC(readFileSync(path));
}

/** The most one readSync is asked for (Node refuses more than 2 GiB - 1 at once). */
const MAX_READ = 1 << 30;

/** An open Arrow file: exact reads at absolute positions, errors naming the file. */
class ArrowFileReader {
  readonly path: string;
  readonly fd: number;
  readonly size: number;
  constructor(path: string) {
    this.path = path;
    this.fd = openSync(path, 'r');
    this.size = fstatSync(this.fd).size;
  }

  /** `bytes` bytes at `at`, in an ArrayBuffer of their own (so typed views of it are aligned). */
  read(at: number, bytes: number): Uint8Array {
    const out = new Uint8Array(bytes);
    if (at + bytes > this.size) throw new InputError(`${this.path}: ends inside a message at byte ${at} (the file is cut short or not an Arrow file)`);
    for (let done = 0; done < bytes; ) {
      const n = readSync(this.fd, out, done, Math.min(MAX_READ, bytes - done), at + done);
      if (n <= 0) throw new InputError(`${this.path}: ends inside a message at byte ${at + done}`);
      done += n;
    }
    return out;
  }

  close(): void {
    closeSync(this.fd);
  }
}

interface WalkedMessage {
  message: Message;
  /** Where the message's body starts in the file. */
  bodyAt: number;
}

/** The message at byte `at` (its framing, metadata and where its body starts); null at the end of a stream. */
function messageAt(f: ArrowFileReader, at: number): (WalkedMessage & { next: number }) | null {
  if (at + 4 > f.size) return null;
  // 0xFFFFFFFF and the metadata's length (a bare length in the pre-1.0 format), the metadata, then
  // the body; a length of 0 ends the stream.
  const head = new DataView(f.read(at, Math.min(8, f.size - at)).buffer);
  const bare = head.getInt32(0, true) !== -1;
  const prefix = bare ? 4 : 8;
  const metaLength = bare ? head.getInt32(0, true) : head.byteLength === 8 ? head.getInt32(4, true) : 0;
  if (metaLength <= 0) return null;
  let message: Message;
  try {
    message = Message.decode(f.read(at + prefix, metaLength));
  } catch (err) {
    if (isInputError(err)) throw err;
    throw new InputError(`${f.path}: unreadable Arrow message at byte ${at} (${(err as Error).message}); is it an Arrow IPC file?`);
  }
  const bodyAt = at + prefix + metaLength;
  return { message, bodyAt, next: bodyAt + Number(message.bodyLength) };
}

/** The footer of a file-format file (magic at both ends), or undefined (the stream format, or a file cut short). */
function footerOf(f: ArrowFileReader): Footer | undefined {
  const magic = (at: number) => Buffer.from(f.read(at, 6)).toString('latin1') === 'ARROW1';
  if (f.size < 8 + 10 || !magic(0) || !magic(f.size - 6)) return undefined;
  const length = new DataView(f.read(f.size - 10, 4).buffer).getInt32(0, true);
  if (length <= 0 || length > f.size - 18) throw new InputError(`${f.path}: its Arrow footer's length (${length}) does not fit the file`);
  try {
    return Footer.decode(f.read(f.size - 10 - length, length));
  } catch (err) {
    throw new InputError(`${f.path}: unreadable Arrow footer (${(err as Error).message})`);
  }
}

/**
 * The file's messages, each decoded from its metadata; bodies are not read. The file format is
 * read through its footer (the schema there, then the dictionary and record batch blocks: some
 * writers, apache-arrow's among them, put the schema only in the footer); the stream format, and
 * a file whose footer is missing, message after message from the start.
 */
function* messages(f: ArrowFileReader): Generator<WalkedMessage> {
  const footer = footerOf(f);
  if (footer) {
    yield { message: Message.from(footer.schema), bodyAt: 0 };
    for (const blocks of [footer.dictionaryBatches(), footer.recordBatches()]) {
      for (const b of blocks) {
        const m = messageAt(f, Number(b.offset));
        if (!m) throw new InputError(`${f.path}: no Arrow message at byte ${b.offset}, where its footer puts one`);
        yield m;
      }
    }
    return;
  }
  // The file format's magic and padding, if the file has them; the stream format starts with a message.
  let m = messageAt(f, f.size >= 8 && Buffer.from(f.read(0, 6)).toString('latin1') === 'ARROW1' ? 8 : 0);
  for (; m; m = messageAt(f, m.next)) yield m;
}

/**
 * The schema and row count of an Arrow IPC file (file or stream format), from its messages'
 * metadata only: each record batch's body is skipped, so a file of any size costs a few small
 * reads.
 */
export function arrowFileSummary(path: string): { schema: Schema; rows: number } {
  const f = new ArrowFileReader(path);
  try {
    let schema: Schema | undefined;
    let rows = 0;
    for (const { message } of messages(f)) {
      if (message.headerType === MessageHeader.Schema) schema = message.header() as Schema;
      else if (message.headerType === MessageHeader.RecordBatch) rows += Number((message.header() as { length: number | bigint }).length);
    }
    if (!schema) throw new InputError(`${path}: no Arrow schema message`);
    return { schema, rows };
  } finally {
    f.close();
  }
}

/** A record batch's metadata as apache-arrow decodes it (its field nodes and buffer regions). */
interface BatchHeader {
  length: number;
  nodes: { length: number; nullCount: number }[];
  buffers: { offset: number; length: number }[];
  compression: unknown;
}

/** The default rows of one batch readArrowBatches returns: 1M (8 MB of graph.arrow's two int32s). */
const BATCH_ROWS = 1 << 20;

/**
 * The record batches of an Arrow IPC file (file or stream format) as apache-arrow RecordBatches of
 * at most `maxRows` rows each (a multiple of 8, so validity bitmaps split on bytes), in file order;
 * a longer batch of the file comes back in consecutive slices. Only the slice's bytes are read, and
 * with `columns` only those columns' (the batches then hold them alone, in the file's order; a
 * name the file lacks is an InputError naming its columns). A file with no record batch yields
 * nothing (its schema: arrowFileSummary).
 */
export function* readArrowBatches(path: string, maxRows = BATCH_ROWS, columns?: readonly string[]): Generator<RecordBatch> {
  if (!(maxRows >= 8 && maxRows % 8 === 0)) throw new Error(`readArrowBatches: maxRows must be a positive multiple of 8, got ${maxRows}`);
  const f = new ArrowFileReader(path);
  try {
    let schema: Schema | undefined;
    let kept: Schema | undefined;
    const valueTypes = new Map<number, DataType>();
    const dictionaries = new Map<number, Vector>();
    for (const { message, bodyAt } of messages(f)) {
      if (message.headerType === MessageHeader.Schema) {
        schema = message.header() as Schema;
        for (const field of schema.fields) dictionaryTypes(field.type, valueTypes);
        kept = columns ? projection(path, schema, columns) : schema;
        continue;
      }
      if (!schema || !kept) throw new InputError(`${path}: a record batch before the schema message`);
      if (message.headerType === MessageHeader.DictionaryBatch) {
        const d = message.header() as unknown as { id: number; isDelta: boolean; data: BatchHeader };
        const type = valueTypes.get(Number(d.id));
        if (!type) throw new InputError(`${path}: a dictionary batch for id ${d.id}, which no column of the schema uses`);
        const values = makeVector(new BatchBody(f, d.data, bodyAt).column(type, 0, Number(d.data.length), dictionaries));
        const old = dictionaries.get(Number(d.id));
        dictionaries.set(Number(d.id), d.isDelta && old ? old.concat(values) : values);
      } else if (message.headerType === MessageHeader.RecordBatch) {
        const h = message.header() as unknown as BatchHeader;
        const body = new BatchBody(f, h, bodyAt);
        const rows = Number(h.length);
        const struct = new Struct(kept.fields);
        for (let r0 = 0; r0 < rows; r0 += maxRows) {
          const r1 = Math.min(rows, r0 + maxRows);
          body.rewind();
          const children: Data[] = [];
          for (const field of schema.fields) {
            if (!columns || columns.includes(field.name)) children.push(body.column(field.type, r0, r1, dictionaries));
            else body.skip(field.type);
          }
          yield new RecordBatch(kept, makeData({ type: struct, length: r1 - r0, nullCount: 0, children }));
        }
      }
    }
    if (!schema) throw new InputError(`${path}: no Arrow schema message`);
  } finally {
    f.close();
  }
}

/** The schema's fields named in `columns`, in the schema's order. */
function projection(path: string, schema: Schema, columns: readonly string[]): Schema {
  const names = schema.fields.map((f) => f.name);
  const missing = columns.find((c) => !names.includes(c));
  if (missing !== undefined) throw new InputError(`${path} has no column ${missing}; its columns: ${names.join(', ')}`);
  return schema.selectAt(names.flatMap((n, i) => (columns.includes(n) ? [i] : [])));
}

/** Collects the value type of every dictionary-encoded column (nested ones too) by dictionary id. */
function dictionaryTypes(type: DataType, out: Map<number, DataType>): void {
  if (type.typeId === Type.Dictionary) {
    const d = type as Dictionary;
    out.set(d.id, d.dictionary);
    dictionaryTypes(d.dictionary, out);
  }
  for (const child of type.children ?? []) dictionaryTypes(child.type, out);
}

/** The typed-array class of a fixed-width type's values (Int32Array for Int32, ...). */
const arrayTypeOf = (type: DataType) => (type as unknown as { ArrayType: { BYTES_PER_ELEMENT: number; new (b: ArrayBufferLike, at: number, n: number): ArrayBufferView } }).ArrayType;

/** Set bits among the first `n` bits of `bits`. */
function countSet(bits: Uint8Array, n: number): number {
  let c = 0;
  for (let i = 0; i < n; i++) c += (bits[i >> 3] >> (i & 7)) & 1;
  return c;
}

const unreadType = (path: string, type: DataType) =>
  new InputError(`${path}: column type ${String(type)} is not read here (integers, floats, booleans, UTF-8, fixed-size lists, structs and dictionaries are)`);

/**
 * One record batch's body: its columns' rows [r0, r1) read as apache-arrow Data, walking the field
 * nodes and buffer regions in order (rewind before each slice).
 */
class BatchBody {
  private readonly f: ArrowFileReader;
  private readonly h: BatchHeader;
  private readonly bodyAt: number;
  private node = 0;
  private buffer = 0;
  constructor(f: ArrowFileReader, h: BatchHeader, bodyAt: number) {
    this.f = f;
    this.h = h;
    this.bodyAt = bodyAt;
    if (h.compression) throw new InputError(`${f.path}: compressed record batch bodies are not read here; write the file uncompressed (pyarrow: compression=None)`);
  }

  rewind(): void {
    this.node = 0;
    this.buffer = 0;
  }

  /** `bytes` bytes from `from` of the next buffer region. */
  private region(from: number, bytes: number): Uint8Array {
    const r = this.h.buffers[this.buffer++];
    if (!r) throw new InputError(`${this.f.path}: a record batch has fewer buffers than its schema needs`);
    if (from + bytes > Number(r.length)) throw new InputError(`${this.f.path}: a buffer of a record batch is shorter than its rows need`);
    return this.f.read(this.bodyAt + Number(r.offset) + from, bytes);
  }

  /** Values [r0, r0 + length) of the next buffer region, as a fixed-width type's typed array. */
  private values(type: DataType, r0: number, length: number): ArrayBufferView {
    const ArrayType = arrayTypeOf(type);
    const w = ArrayType.BYTES_PER_ELEMENT;
    return new ArrayType(this.region(r0 * w, length * w).buffer, 0, length);
  }

  /** Steps past the next column (its field nodes and buffer regions) without reading it. */
  skip(type: DataType): void {
    this.node++;
    switch (type.typeId) {
      case Type.Int:
      case Type.Float:
      case Type.Bool:
      case Type.Dictionary:
        this.buffer += 2;
        return;
      case Type.Utf8:
        this.buffer += 3;
        return;
      case Type.FixedSizeList:
      case Type.Struct:
        this.buffer++;
        for (const child of type.children) this.skip(child.type);
        return;
      default:
        throw unreadType(this.f.path, type);
    }
  }

  column(type: DataType, r0: number, r1: number, dictionaries: Map<number, Vector>): Data {
    const node = this.h.nodes[this.node++];
    if (!node) throw new InputError(`${this.f.path}: a record batch has fewer field nodes than its schema has columns`);
    const length = r1 - r0;
    // The validity bitmap (its region is there, perhaps empty, for every type read here).
    let nullBitmap: Uint8Array | undefined;
    let nullCount = 0;
    if (Number(node.nullCount) > 0) {
      nullBitmap = this.region(r0 >> 3, ((r1 + 7) >> 3) - (r0 >> 3));
      nullCount = length - countSet(nullBitmap, length);
    } else this.buffer++;
    switch (type.typeId) {
      case Type.Int:
      case Type.Float: {
        const data = this.values(type, r0, length);
        return makeData({ type, length, nullCount, nullBitmap, data } as never);
      }
      case Type.Bool:
        return makeData({ type, length, nullCount, nullBitmap, data: this.region(r0 >> 3, ((r1 + 7) >> 3) - (r0 >> 3)) } as never);
      case Type.Utf8: {
        const valueOffsets = new Int32Array(this.region(4 * r0, 4 * (length + 1)).buffer);
        const base = valueOffsets[0];
        const data = this.region(base, valueOffsets[length] - base);
        for (let i = 0; i <= length; i++) valueOffsets[i] -= base;
        return makeData({ type, length, nullCount, nullBitmap, valueOffsets, data } as never);
      }
      case Type.FixedSizeList: {
        const w = (type as FixedSizeList).listSize;
        const child = this.column(type.children[0].type, r0 * w, r1 * w, dictionaries);
        return makeData({ type, length, nullCount, nullBitmap, child } as never);
      }
      case Type.Struct: {
        const children = type.children.map((c) => this.column(c.type, r0, r1, dictionaries));
        return makeData({ type, length, nullCount, nullBitmap, children } as never);
      }
      case Type.Dictionary: {
        const d = type as Dictionary;
        const dictionary = dictionaries.get(d.id);
        if (!dictionary) throw new InputError(`${this.f.path}: a record batch uses dictionary ${d.id} before its dictionary batch`);
        const data = this.values(d.indices, r0, length);
        return makeData({ type, length, nullCount, nullBitmap, data, dictionary } as never);
      }
      default:
        throw unreadType(this.f.path, type);
    }
  }
}
