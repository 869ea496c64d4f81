/**
 * Column plans for the Arrow writer: what a column of socsim data becomes in an Arrow file (type,
 * width, dictionary, index width), the checks on values handed to the writer, and the apache-arrow
 * in-memory form of a batch (`recordBatchOf`).
 */
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
  RecordBatch,
  Schema,
  Struct,
  Uint16,
  Uint32,
  Uint8,
  Utf8,
  makeData,
  makeVector,
} from 'apache-arrow';
import { ARRAY_OF } from '../table.ts';
import type { TypedArray } from '../table.ts';
import { checkRows } from './fileWrite.ts';

export type ArrowColumnType = 'f32' | 'f64' | 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'utf8';

export interface ColumnData {
  name: string;
  type: ArrowColumnType;
  /**
   * Typed array of `rows * width` numbers (numeric / categorical columns), or `rows` strings
   * (utf8); or, for a numeric column of width 1 written by writeArrowFile, values generated slice
   * by slice while the file is written.
   */
  values: TypedArray | string[] | GeneratedValues;
  /** Values per row (row-major vector column, written as FixedSizeList<type>(width)); default 1. */
  width?: number;
  /** Labels of the integer codes in `values`; the column is written as Dictionary<Utf8>. */
  dictionary?: readonly string[];
}

type NumericType = Exclude<ArrowColumnType, 'utf8'>;
type IndexType = 'i8' | 'i16' | 'i32';

/**
 * A numeric column's values produced while the file is written, for a column too large to hold
 * whole beside what it is computed from (graph.arrow's source column: 2 GB at 495M edges).
 * `fill(out, from)` writes values [from, from + out.length) into `out`, a typed array of the
 * column's type; it is called once per slice, for consecutive slices in order (so it may keep a
 * cursor), and the bytes written are those of the whole column.
 */
export interface GeneratedValues {
  length: number;
  fill(out: TypedArray, from: number): void;
}

export const isGenerated = (v: ColumnData['values']): v is GeneratedValues => !Array.isArray(v) && !ArrayBuffer.isView(v);

/** What a column is, independent of any one batch's values. */
export interface ColumnPlan {
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

export const MAGIC = Uint8Array.from([0x41, 0x52, 0x52, 0x4f, 0x57, 0x31]); // "ARROW1"
export const MAGIC_PADDED = Uint8Array.from([0x41, 0x52, 0x52, 0x4f, 0x57, 0x31, 0, 0]);
export const EOS = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
export const ZEROS = new Uint8Array(8);
export const EMPTY = new Uint8Array(0);
export const METADATA_VERSION_V5 = 4;

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
export function planColumns(columns: readonly ColumnData[]): ColumnPlan[] {
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

export function schemaOf(plans: readonly ColumnPlan[], metadata?: Record<string, string>): Schema {
  const meta = new Map<string, string>();
  if (metadata) for (const [k, v] of Object.entries(metadata)) meta.set(k, String(v));
  return new Schema(plans.map((p) => p.field), meta);
}

/** Checks one batch's values against the column plan; returns the typed array or strings. */
export function checkValues(plan: ColumnPlan, column: ColumnData, rows: number): TypedArray | string[] | GeneratedValues {
  const { values } = column;
  if (isGenerated(values)) {
    if (plan.kind !== 'numeric') throw new Error(`column "${plan.name}": generated values are for numeric columns of width 1`);
    if (values.length !== rows) throw new Error(`column "${plan.name}" has ${values.length} values, expected ${rows} rows`);
    return values;
  }
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
export function bytesOf(a: ArrayBufferView): Uint8Array {
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
export function indicesOf(plan: ColumnPlan, codes: TypedArray): Int8Array | Int16Array | Int32Array {
  checkCodes(plan.name, codes, plan.dictionary!.length);
  const want = plan.indexType!;
  const Signed = want === 'i8' ? Int8Array : want === 'i16' ? Int16Array : Int32Array;
  if (codes.BYTES_PER_ELEMENT === Signed.BYTES_PER_ELEMENT) {
    return codes instanceof Signed ? codes : new Signed(codes.buffer as ArrayBuffer, codes.byteOffset, codes.length);
  }
  return new Signed(codes); // widening (u8 -> i16, u16 -> i32): element-wise native copy
}

export function encodeStrings(name: string, strings: readonly string[]): EncodedStrings {
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
export function encodedDictionary(plan: ColumnPlan): EncodedStrings {
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
    if (isGenerated(values)) throw new Error(`column "${plan.name}": generated values can only be written to a file`);
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
