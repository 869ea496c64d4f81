/**
 * Tables: named typed-array columns of equal length on SharedArrayBuffer, so worker threads read
 * and write them without copies. A column may be a vector column (`width` > 1, row-major N x width)
 * or a categorical column (small integer codes plus a `dictionary` of labels).
 */
import { InputError } from './errors.ts';

export type ColumnType = 'f32' | 'f64' | 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32';

export type TypedArray =
  | Float32Array
  | Float64Array
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array;

export const ARRAY_OF = {
  f32: Float32Array,
  f64: Float64Array,
  i8: Int8Array,
  u8: Uint8Array,
  i16: Int16Array,
  u16: Uint16Array,
  i32: Int32Array,
  u32: Uint32Array,
} as const;

export interface ColumnSpec {
  type: ColumnType;
  /** Values per row (vector columns); default 1. */
  width?: number;
  /** Labels for the integer codes of a categorical column; exported as an Arrow dictionary. */
  dictionary?: readonly string[];
  /** Whether agent snapshots include this column (default true). */
  snapshot?: boolean;
}

export type Schema = Record<string, ColumnSpec>;

export interface Table<S extends Schema = Schema> {
  readonly length: number;
  readonly schema: S;
  readonly columns: { [K in keyof S]: TypedArray };
}

/**
 * Adds a column to a table unless one of that name exists (phases add the state they own, e.g. a
 * cascade's `state`); returns the column. An existing column must have the same type and width.
 */
export function ensureColumn(table: Table, name: string, spec: ColumnSpec): TypedArray {
  const have = table.schema[name];
  if (have) {
    if (have.type !== spec.type || (have.width ?? 1) !== (spec.width ?? 1)) {
      throw new Error(`column ${name} exists as ${have.type}x${have.width ?? 1}, not ${spec.type}x${spec.width ?? 1}`);
    }
    return table.columns[name];
  }
  (table.schema as Schema)[name] = spec;
  const col = sharedArray(spec.type, table.length * (spec.width ?? 1));
  (table.columns as Record<string, TypedArray>)[name] = col;
  return col;
}

/** Allocates a zero-filled typed array of `length` elements on a SharedArrayBuffer. */
export function sharedArray<T extends ColumnType>(type: T, length: number): InstanceType<(typeof ARRAY_OF)[T]> {
  const Ctor = ARRAY_OF[type];
  const bytes = length * Ctor.BYTES_PER_ELEMENT;
  let sab: SharedArrayBuffer;
  try {
    sab = new SharedArrayBuffer(bytes);
  } catch (err) {
    throw new InputError(
      `cannot allocate ${(bytes / 2 ** 30).toFixed(2)} GiB for one column (${(err as Error).message}); use fewer agents or edges`,
    );
  }
  return new (Ctor as unknown as new (b: SharedArrayBuffer) => TypedArray)(sab) as InstanceType<(typeof ARRAY_OF)[T]>;
}

/** Creates a table of `length` rows with one shared column per schema entry. */
export function createTable<S extends Schema>(schema: S, length: number): Table<S> {
  // Built in one go (Object.fromEntries): V8 keeps an object given many properties one assignment
  // at a time as a hash table, which slows every column lookup.
  const columns = Object.fromEntries(Object.entries(schema).map(([name, spec]) => [name, sharedArray(spec.type, length * (spec.width ?? 1))])) as { [K in keyof S]: TypedArray };
  return { length, schema, columns };
}

/** Bytes one row of the schema takes. */
export function bytesPerRow(schema: Schema): number {
  let b = 0;
  for (const spec of Object.values(schema)) b += ARRAY_OF[spec.type].BYTES_PER_ELEMENT * (spec.width ?? 1);
  return b;
}

/** Bytes held by all columns of a table. */
export function tableBytes(table: Table): number {
  let b = 0;
  for (const col of Object.values(table.columns)) b += col.byteLength;
  return b;
}

let collect: (() => void) | undefined;

/**
 * Asks V8 for a full garbage collection, so shared buffers nobody references any more (an edge
 * list after CSR construction, an old CSR after a rebuild) are returned to the system now rather
 * than at some later collection: V8 does not see their size as heap pressure.
 */
export async function releaseMemory(): Promise<void> {
  if (!collect) {
    const v8 = await import('node:v8');
    const vm = await import('node:vm');
    v8.setFlagsFromString('--expose-gc');
    collect = vm.runInNewContext('gc') as () => void;
  }
  collect();
  // A collection hands the buffers it found dead to a background sweeper; the next one waits for
  // that sweep to finish, so after it their memory is back with the system.
  collect();
}
