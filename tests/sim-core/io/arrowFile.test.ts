import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, writevSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DataType, tableFromIPC as arrowTableFromIPC, tableToIPC } from 'apache-arrow';
import { Type, tableFromIPC as flechetteTableFromIPC } from '@uwdata/flechette';
import {
  ArrowFileAppender,
  arrowFileSummary,
  FileWriteError,
  MAX_WRITE_BYTES,
  readArrowFile,
  recordBatchOf,
  setWriteIo,
  writeArrowFile,
  writeArrowFileLater,
} from '../../../sim-core/io/arrowFile.ts';
import type { ColumnData } from '../../../sim-core/io/arrowFile.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'socsim-arrow-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const file = (name: string) => join(dir, name);
const flechette = (path: string) => flechetteTableFromIPC(readFileSync(path));
const apache = (path: string) => arrowTableFromIPC(readFileSync(path));

const NUMERIC: ColumnData[] = [
  { name: 'f32', type: 'f32', values: Float32Array.from([0, -1.5, 3.25, 1e30, -0]) },
  { name: 'f64', type: 'f64', values: Float64Array.from([0, Math.PI, -1e300, 5e-324, Number.MAX_VALUE]) },
  { name: 'i8', type: 'i8', values: Int8Array.from([-128, -1, 0, 1, 127]) },
  { name: 'u8', type: 'u8', values: Uint8Array.from([0, 1, 128, 254, 255]) },
  { name: 'i16', type: 'i16', values: Int16Array.from([-32768, -1, 0, 1, 32767]) },
  { name: 'u16', type: 'u16', values: Uint16Array.from([0, 1, 32768, 65534, 65535]) },
  { name: 'i32', type: 'i32', values: Int32Array.from([-(2 ** 31), -1, 0, 1, 2 ** 31 - 1]) },
  { name: 'u32', type: 'u32', values: Uint32Array.from([0, 1, 2 ** 31, 2 ** 32 - 2, 2 ** 32 - 1]) },
];

/** Arrow type names (apache-arrow's toString) and flechette's (typeId, width) for each numeric type. */
const EXPECTED_TYPE = {
  f32: ['Float32', { typeId: Type.Float, precision: 1 }],
  f64: ['Float64', { typeId: Type.Float, precision: 2 }],
  i8: ['Int8', { typeId: Type.Int, bitWidth: 8, signed: true }],
  u8: ['Uint8', { typeId: Type.Int, bitWidth: 8, signed: false }],
  i16: ['Int16', { typeId: Type.Int, bitWidth: 16, signed: true }],
  u16: ['Uint16', { typeId: Type.Int, bitWidth: 16, signed: false }],
  i32: ['Int32', { typeId: Type.Int, bitWidth: 32, signed: true }],
  u32: ['Uint32', { typeId: Type.Int, bitWidth: 32, signed: false }],
} as const;

describe('arrowFileSummary', () => {
  it('gives the schema and row count apache-arrow reads, from the messages: dictionaries, many appended batches, none, the stream format', () => {
    const cols: ColumnData[] = [
      ...NUMERIC,
      { name: 'kind', type: 'u8', values: Uint8Array.from([0, 1, 2, 1, 0]), dictionary: ['original', 'repost', 'quote'] },
      { name: 'topic', type: 'f32', values: new Float32Array(5 * 4), width: 4 },
    ];
    writeArrowFile(file('summary-whole.arrow'), cols, 5);
    const app = ArrowFileAppender.open(file('summary-appended.arrow'), cols);
    for (let b = 0; b < 7; b++) app.append(cols, 5);
    app.close();
    writeArrowFile(file('summary-empty.arrow'), cols.map((c) => ({ ...c, values: c.width ? new Float32Array(0) : new (c.values.constructor as Uint8ArrayConstructor)(0) })), 0);
    // The stream format (no magic, no footer): what apache-arrow writes from a table.
    writeFileSync(file('summary-stream.arrows'), tableToIPC(apache(file('summary-whole.arrow')), 'stream'));
    for (const [name, rows] of [['summary-whole.arrow', 5], ['summary-appended.arrow', 35], ['summary-empty.arrow', 0], ['summary-stream.arrows', 5]] as const) {
      const want = apache(file(name));
      const got = arrowFileSummary(file(name));
      expect(got.rows, name).toBe(rows);
      expect(got.rows, name).toBe(want.numRows);
      expect(got.schema.fields.map((f) => `${f.name}:${String(f.type)}`), name).toEqual(want.schema.fields.map((f) => `${f.name}:${String(f.type)}`));
    }
    // A file cut inside a message is an error naming it, not a wrong count.
    const bytes = readFileSync(file('summary-appended.arrow'));
    writeFileSync(file('summary-cut.arrow'), bytes.subarray(0, 700));
    expect(() => arrowFileSummary(file('summary-cut.arrow'))).toThrow(/summary-cut.arrow: ends inside a message/);
  });
});

describe('writeArrowFile / readArrowFile', () => {
  it('round-trips every numeric type through apache-arrow and flechette', () => {
    const path = file('numeric.arrow');
    writeArrowFile(path, NUMERIC, 5, { scenario: 'unit', seed: '7' });
    expect(existsSync(`${path}.tmp`)).toBe(false);

    const t = readArrowFile(path);
    expect(t.numRows).toBe(5);
    expect(t.schema.metadata.get('scenario')).toBe('unit');
    expect(t.schema.metadata.get('seed')).toBe('7');
    const f = flechette(path);
    expect(f.numRows).toBe(5);
    for (const c of NUMERIC) {
      const [arrowName, flechetteType] = EXPECTED_TYPE[c.type as keyof typeof EXPECTED_TYPE];
      expect(String(t.schema.fields.find((x) => x.name === c.name)!.type)).toBe(arrowName);
      expect(Array.from(t.getChild(c.name)!.toArray() as ArrayLike<number>)).toEqual(Array.from(c.values as ArrayLike<number>));
      const ff = f.schema.fields.find((x) => x.name === c.name)!;
      expect(ff.type).toMatchObject(flechetteType);
      const fv = f.getChild(c.name).toArray() as unknown as ArrayLike<number>;
      expect(fv).toBeInstanceOf((c.values as object).constructor); // flechette hands back the same typed array kind
      expect(Array.from(fv)).toEqual(Array.from(c.values as ArrayLike<number>));
    }
  });

  it('round-trips vector columns as FixedSizeList', () => {
    const path = file('vector.arrow');
    const emb = Float32Array.from({ length: 4 * 3 }, (_, i) => i + 0.5);
    const pair = Int16Array.from([1, -2, 3, -4, 5, -6, 7, -8]);
    writeArrowFile(path, [
      { name: 'embedding', type: 'f32', values: emb, width: 3 },
      { name: 'pair', type: 'i16', values: pair, width: 2 },
    ], 4);
    const t = readArrowFile(path);
    expect(String(t.schema.fields[0]!.type)).toBe('FixedSizeList[3]<Float32>');
    expect(Array.from(t.getChild('embedding')!.get(2)!.toArray())).toEqual([6.5, 7.5, 8.5]);
    expect(Array.from(t.getChild('pair')!.get(3)!.toArray())).toEqual([7, -8]);
    const f = flechette(path);
    expect(f.schema.fields[0]!.type).toMatchObject({ typeId: Type.FixedSizeList, stride: 3 });
    expect((f.schema.fields[0]!.type as unknown as { children: { type: object }[] }).children[0]!.type).toMatchObject({ typeId: Type.Float, precision: 1 });
    expect(Array.from(f.getChild('embedding').at(1) as ArrayLike<number>)).toEqual([3.5, 4.5, 5.5]);
    expect(Array.from(f.getChild('pair').at(0) as ArrayLike<number>)).toEqual([1, -2]);
  });

  it('dictionary-encodes categoricals with a signed index type that holds the dictionary', () => {
    const path = file('dict.arrow');
    const small = ['neutral', 'left', 'right'];
    const big = Array.from({ length: 200 }, (_, i) => `topic-${i}`);
    const huge = Array.from({ length: 40_000 }, (_, i) => `h${i}`);
    const cols: ColumnData[] = [
      { name: 'stance', type: 'u8', values: Uint8Array.from([0, 1, 2, 1]), dictionary: small },
      { name: 'topic', type: 'u8', values: Uint8Array.from([0, 199, 128, 5]), dictionary: big },
      { name: 'u16_small', type: 'u16', values: Uint16Array.from([2, 1, 0, 2]), dictionary: small },
      { name: 'u16_huge', type: 'u16', values: Uint16Array.from([39_999, 0, 32_768, 1]), dictionary: huge },
      { name: 'i32', type: 'i32', values: Int32Array.from([2, 2, 0, 1]), dictionary: small },
      { name: 'u32', type: 'u32', values: Uint32Array.from([1, 0, 0, 2]), dictionary: small },
    ];
    writeArrowFile(path, cols, 4);
    const expectIndex: Record<string, number> = { stance: 8, topic: 16, u16_small: 16, u16_huge: 32, i32: 32, u32: 32 };

    const t = readArrowFile(path);
    const f = flechette(path);
    for (const c of cols) {
      const labels = Array.from(c.values as ArrayLike<number>, (code) => c.dictionary![code]);
      const at = t.schema.fields.find((x) => x.name === c.name)!.type;
      expect(DataType.isDictionary(at)).toBe(true);
      expect(String(at)).toBe(`Dictionary<Int${expectIndex[c.name]}, Utf8>`);
      expect(t.getChild(c.name)!.toArray()).toEqual(labels);
      const ft = f.schema.fields.find((x) => x.name === c.name)!.type;
      expect(ft.typeId).toBe(Type.Dictionary);
      expect(ft).toMatchObject({ dictionary: { typeId: Type.Utf8 }, indices: { typeId: Type.Int, bitWidth: expectIndex[c.name], signed: true } });
      expect(f.getChild(c.name).toArray()).toEqual(labels);
    }
  });

  it('round-trips utf8 columns, including empty and non-ASCII strings', () => {
    const path = file('utf8.arrow');
    const values = ['', 'hello', 'wörld', '🙂 emoji', 'a'.repeat(1000), '"quoted"\n'];
    writeArrowFile(path, [{ name: 'text', type: 'utf8', values }], values.length);
    expect(readArrowFile(path).getChild('text')!.toArray()).toEqual(values);
    const f = flechette(path);
    expect(f.schema.fields[0]!.type.typeId).toBe(Type.Utf8);
    expect(f.getChild('text').toArray()).toEqual(values);
  });

  it('writes a valid schema-only file for zero rows', () => {
    const path = file('empty.arrow');
    writeArrowFile(path, [
      { name: 'x', type: 'f64', values: new Float64Array(0) },
      { name: 'c', type: 'u8', values: new Uint8Array(0), dictionary: ['a'] },
    ], 0);
    expect(readArrowFile(path).numRows).toBe(0);
    const f = flechette(path);
    expect(f.numRows).toBe(0);
    expect(f.schema.fields.map((x) => x.name)).toEqual(['x', 'c']);
  });

  it('rejects mismatched lengths, wrong array types and out-of-range codes, naming the column', () => {
    const path = file('bad.arrow');
    expect(() => writeArrowFile(path, [
      { name: 'ok', type: 'f32', values: new Float32Array(3) },
      { name: 'short', type: 'f32', values: new Float32Array(2) },
    ], 3)).toThrow(/short/);
    expect(() => writeArrowFile(path, [{ name: 'vec', type: 'f32', values: new Float32Array(5), width: 2 }], 3)).toThrow(/vec/);
    expect(() => writeArrowFile(path, [{ name: 'kind', type: 'f32', values: new Float64Array(3) }], 3)).toThrow(/kind/);
    expect(() => writeArrowFile(path, [{ name: 'txt', type: 'utf8', values: ['a'] }], 2)).toThrow(/txt/);
    expect(() => writeArrowFile(path, [
      { name: 'cat', type: 'u8', values: Uint8Array.from([0, 3]), dictionary: ['a', 'b', 'c'] },
    ], 2)).toThrow(/cat.*outside/);
    expect(() => writeArrowFile(path, [
      { name: 'neg', type: 'i8', values: Int8Array.from([0, -1]), dictionary: ['a', 'b'] },
    ], 2)).toThrow(/neg/);
    expect(() => recordBatchOf([{ name: 'rb', type: 'i32', values: new Int32Array(4) }], 5)).toThrow(/rb/);
    expect(existsSync(path)).toBe(false);
  });

  it('is deterministic: the same columns give byte-identical files', () => {
    const cols: ColumnData[] = [
      ...NUMERIC,
      { name: 'cat', type: 'u8', values: Uint8Array.from([0, 1, 0, 1, 1]), dictionary: ['x', 'y'] },
      { name: 'txt', type: 'utf8', values: ['a', 'bb', '', 'ccc', 'é'] },
      { name: 'vec', type: 'f64', values: new Float64Array(10).fill(0.25), width: 2 },
    ];
    writeArrowFile(file('det-a.arrow'), cols, 5, { k: 'v' });
    writeArrowFile(file('det-b.arrow'), cols, 5, { k: 'v' });
    const a = readFileSync(file('det-a.arrow'));
    expect(a.equals(readFileSync(file('det-b.arrow')))).toBe(true);

    // The appender lays files out the same way: one append + close equals writeArrowFile.
    const app = ArrowFileAppender.open(file('det-c.arrow'), cols, { k: 'v' });
    app.append(cols, 5);
    app.close();
    expect(a.equals(readFileSync(file('det-c.arrow')))).toBe(true);
  });

  it('writes generated columns as the bytes of the whole arrays, in order, slice by slice', () => {
    // 9M rows: three slices of at most 4M values; odd lengths leave padding after the column.
    const rows = 9_000_003;
    const a = new Int32Array(rows);
    const b = new Float32Array(rows);
    for (let i = 0; i < rows; i++) {
      a[i] = Math.imul(i, 2654435761) | 0;
      b[i] = i / 7;
    }
    const calls: number[] = [];
    const gen = (src: Int32Array | Float32Array) => ({
      length: rows,
      fill(out: Int32Array | Float32Array, from: number) {
        calls.push(from, out.length);
        expect(out).toBeInstanceOf(src.constructor);
        out.set(src.subarray(from, from + out.length));
      },
    });
    const meta = { k: 'v' };
    writeArrowFile(file('gen-arrays.arrow'), [{ name: 'a', type: 'i32', values: a }, { name: 'b', type: 'f32', values: b }, { name: 'c', type: 'u8', values: new Uint8Array(rows).fill(3) }], rows, meta);
    writeArrowFile(file('gen.arrow'), [{ name: 'a', type: 'i32', values: gen(a) }, { name: 'b', type: 'f32', values: gen(b) }, { name: 'c', type: 'u8', values: new Uint8Array(rows).fill(3) }], rows, meta);
    expect(readFileSync(file('gen.arrow')).equals(readFileSync(file('gen-arrays.arrow')))).toBe(true);
    expect(calls).toEqual([0, 4194304, 4194304, 4194304, 8388608, 611395, 0, 4194304, 4194304, 4194304, 8388608, 611395]);
    // A generated column must have the row count, and is for files only.
    expect(() => writeArrowFile(file('gen-bad.arrow'), [{ name: 'g', type: 'i32', values: { length: 4, fill() {} } }], 5)).toThrow(/"g" has 4 values, expected 5/);
    expect(() => recordBatchOf([{ name: 'g', type: 'i32', values: { length: 5, fill() {} } }], 5)).toThrow(/"g": generated values/);
    expect(() => ArrowFileAppender.open(file('gen-app.arrow'), [{ name: 'g', type: 'i32', values: new Int32Array(0) }]).append([{ name: 'g', type: 'i32', values: { length: 2, fill() {} } }], 2)).toThrow(/only be written by writeArrowFile/);
  });

  it('works on SharedArrayBuffer-backed columns and views at an offset, zero-copy in recordBatchOf', () => {
    const sab = new SharedArrayBuffer(64 * 4);
    const whole = new Float32Array(sab);
    for (let i = 0; i < whole.length; i++) whole[i] = i;
    const view = whole.subarray(8, 16); // byteOffset 32
    const codes = new Uint8Array(new SharedArrayBuffer(8)).fill(1);
    const cols: ColumnData[] = [
      { name: 'x', type: 'f32', values: view },
      { name: 'v', type: 'f32', values: whole.subarray(16, 32), width: 2 },
      { name: 'c', type: 'u8', values: codes, dictionary: ['a', 'b'] },
    ];
    const path = file('sab.arrow');
    writeArrowFile(path, cols, 8);
    const t = readArrowFile(path);
    expect(Array.from(t.getChild('x')!.toArray() as Float32Array)).toEqual([8, 9, 10, 11, 12, 13, 14, 15]);
    expect(Array.from(t.getChild('v')!.get(7)!.toArray())).toEqual([30, 31]);
    expect(t.getChild('c')!.toArray()).toEqual(new Array(8).fill('b'));

    const rb = recordBatchOf(cols, 8);
    expect(rb.numRows).toBe(8);
    const xData = rb.getChild('x')!.data[0]!;
    expect(xData.values.buffer).toBe(sab);
    expect(xData.values.byteOffset).toBe(32);
    expect(rb.getChild('c')!.data[0]!.values.buffer).toBe(codes.buffer); // u8 codes reinterpreted as Int8
    expect(rb.getChild('c')!.toArray()).toEqual(new Array(8).fill('b'));
    expect(Array.from(rb.getChild('v')!.get(0)!.toArray())).toEqual([16, 17]);

    const app = ArrowFileAppender.open(file('sab-app.arrow'), cols);
    app.append(cols, 8);
    app.append(cols, 8);
    expect(flechette(file('sab-app.arrow')).numRows).toBe(16);
    app.close();
  });
});

describe('ArrowFileAppender', () => {
  const schema: ColumnData[] = [
    { name: 'step', type: 'u32', values: new Uint32Array(0) },
    { name: 'opinion', type: 'f32', values: new Float32Array(0) },
    { name: 'action', type: 'u8', values: new Uint8Array(0), dictionary: ['post', 'like', 'share'] },
    { name: 'pos', type: 'f64', values: new Float64Array(0), width: 2 },
    { name: 'note', type: 'utf8', values: [] },
  ];
  function batch(step: number, rows: number): ColumnData[] {
    return [
      // deliberately in a different order than at open: columns are matched by name
      { name: 'note', type: 'utf8', values: Array.from({ length: rows }, (_, i) => `s${step}-${i}`) },
      { name: 'step', type: 'u32', values: new Uint32Array(rows).fill(step) },
      { name: 'opinion', type: 'f32', values: Float32Array.from({ length: rows }, (_, i) => step + i / 4) },
      { name: 'action', type: 'u8', values: Uint8Array.from({ length: rows }, (_, i) => (step + i) % 3) },
      { name: 'pos', type: 'f64', values: Float64Array.from({ length: rows * 2 }, (_, i) => step * 1000 + i) },
    ];
  }
  function expectReadable(path: string, batches: { step: number; rows: number }[]) {
    const rows = batches.reduce((s, b) => s + b.rows, 0);
    const expectedStep = batches.flatMap((b) => new Array(b.rows).fill(b.step));
    const expectedNote = batches.flatMap((b) => Array.from({ length: b.rows }, (_, i) => `s${b.step}-${i}`));
    const expectedAction = batches.flatMap((b) => Array.from({ length: b.rows }, (_, i) => ['post', 'like', 'share'][(b.step + i) % 3]));

    const t = apache(path);
    expect(t.numRows).toBe(rows);
    expect(t.schema.fields.map((f) => String(f.type))).toEqual([
      'Uint32', 'Float32', 'Dictionary<Int8, Utf8>', 'FixedSizeList[2]<Float64>', 'Utf8',
    ]);
    expect(Array.from(t.getChild('step')!.toArray() as Uint32Array)).toEqual(expectedStep);
    expect(t.getChild('note')!.toArray()).toEqual(expectedNote);
    expect(t.getChild('action')!.toArray()).toEqual(expectedAction);

    const f = flechette(path);
    expect(f.numRows).toBe(rows);
    const types = f.schema.fields.map((x) => x.type);
    expect(types[0]).toMatchObject({ typeId: Type.Int, bitWidth: 32, signed: false });
    expect(types[1]).toMatchObject({ typeId: Type.Float, precision: 1 });
    expect(types[2]).toMatchObject({ typeId: Type.Dictionary, indices: { bitWidth: 8, signed: true } });
    expect(types[3]).toMatchObject({ typeId: Type.FixedSizeList, stride: 2 });
    expect(types[4]).toMatchObject({ typeId: Type.Utf8 });
    expect(Array.from(f.getChild('step').toArray() as ArrayLike<number>)).toEqual(expectedStep);
    expect(f.getChild('note').toArray()).toEqual(expectedNote);
    expect(f.getChild('action').toArray()).toEqual(expectedAction);
    if (rows > 0) {
      const last = batches[batches.length - 1]!;
      expect(Array.from(f.getChild('pos').at(rows - 1) as ArrayLike<number>)).toEqual([
        last.step * 1000 + 2 * last.rows - 2, last.step * 1000 + 2 * last.rows - 1,
      ]);
      expect(f.getChild('opinion').at(rows - 1)).toBe(last.step + (last.rows - 1) / 4);
    }
  }

  it('leaves a valid file after open, after one batch and after many batches, without close()', () => {
    const path = file('append.arrow');
    const app = ArrowFileAppender.open(path, schema, { table: 'events' });
    expect(existsSync(`${path}.tmp`)).toBe(false);
    expectReadable(path, []);
    expect(apache(path).schema.metadata.get('table')).toBe('events');

    const done: { step: number; rows: number }[] = [];
    app.append(batch(0, 3), 3);
    done.push({ step: 0, rows: 3 });
    expectReadable(path, done);

    for (let step = 1; step <= 60; step++) {
      const rows = step % 7; // includes 0-row appends, which add nothing
      app.append(batch(step, rows), rows);
      if (rows > 0) done.push({ step, rows });
      if (step % 20 === 0) expectReadable(path, done);
    }
    expect(app.rowsWritten).toBe(done.reduce((s, b) => s + b.rows, 0));
    expect(app.batchesWritten).toBe(done.length);
    expectReadable(path, done);
    app.close();
    app.close(); // idempotent
    expectReadable(path, done);
    expect(() => app.append(batch(99, 1), 1)).toThrow(/closed/);
  });

  it('is deterministic across runs', () => {
    for (const name of ['det-1.arrow', 'det-2.arrow']) {
      const app = ArrowFileAppender.open(file(name), schema);
      for (let step = 0; step < 10; step++) app.append(batch(step, step + 1), step + 1);
      app.close();
    }
    expect(readFileSync(file('det-1.arrow')).equals(readFileSync(file('det-2.arrow')))).toBe(true);
    // an appender with no batches equals writeArrowFile with zero rows
    ArrowFileAppender.open(file('det-empty-a.arrow'), schema).close();
    writeArrowFile(file('det-empty-b.arrow'), schema, 0);
    expect(readFileSync(file('det-empty-a.arrow')).equals(readFileSync(file('det-empty-b.arrow')))).toBe(true);
  });

  it('rejects batches that do not match the schema given at open', () => {
    const app = ArrowFileAppender.open(file('strict.arrow'), schema);
    const b = batch(1, 2);
    expect(() => app.append(b.slice(1), 2)).toThrow(/columns/);
    expect(() => app.append(b.map((c) => (c.name === 'opinion' ? { ...c, type: 'f64', values: new Float64Array(2) } : c)), 2)).toThrow(/opinion/);
    expect(() => app.append(b.map((c) => (c.name === 'action' ? { ...c, dictionary: ['x', 'y', 'z'] } : c)), 2)).toThrow(/action/);
    expect(() => app.append(b.map((c) => (c.name === 'step' ? { ...c, values: new Uint32Array(3) } : c)), 2)).toThrow(/step/);
    expect(() => app.append(b.map((c) => (c.name === 'pos' ? { ...c, width: 4, values: new Float64Array(8) } : c)), 2)).toThrow(/pos/);
    expect(() => app.append(b.map((c) => (c.name === 'action' ? { ...c, values: Uint8Array.from([0, 9]) } : c)), 2)).toThrow(/action/);
    // a failed append leaves the file as it was
    expectReadable(file('strict.arrow'), []);
    app.append(b.map((c) => (c.name === 'action' ? { ...c, dictionary: ['post', 'like', 'share'] } : c)), 2);
    expectReadable(file('strict.arrow'), [{ step: 1, rows: 2 }]);
    app.close();
  });

  // Each append of ~9 MB takes a few ms, most of it in write(2): killing the child a few ms after it
  // reports a batch usually lands in the middle of the next append's writes, which must not break
  // the file (a multi-page write can stop part-way on SIGKILL).
  it.each([1, 4, 8])('leaves every completed batch readable when SIGKILLed %i ms after a report', async (delayMs) => {
    const path = file(`killed-${delayMs}.arrow`);
    const script = file('child.mts'); // .mts: an ES module outside the package
    const BATCH = 1 << 20;
    const moduleUrl = new URL('../../../sim-core/io/arrowFile.ts', import.meta.url).href;
    writeFileSync(script, `
      import { ArrowFileAppender } from ${JSON.stringify(moduleUrl)};
      const BATCH = ${BATCH};
      const app = ArrowFileAppender.open(process.argv[2], [
        { name: 'batch', type: 'i32', values: new Int32Array(0) },
        { name: 'x', type: 'f32', values: new Float32Array(0) },
        { name: 'kind', type: 'u8', values: new Uint8Array(0), dictionary: ['a', 'b'] },
      ]);
      const x = Float32Array.from({ length: BATCH }, (_, i) => i / BATCH);
      const ids = new Int32Array(BATCH);
      const kinds = new Uint8Array(BATCH);
      for (let b = 0; b < 200; b++) {
        app.append([
          { name: 'batch', type: 'i32', values: ids },
          { name: 'x', type: 'f32', values: x },
          { name: 'kind', type: 'u8', values: kinds },
        ], BATCH);
        ids.fill(b + 1); // next batch prepared before reporting: the next append starts right away
        kinds.fill((b + 1) % 2);
        process.stdout.write('done ' + b + '\\n');
      }
    `);
    const KILL_AFTER = 5;
    const child = spawn(process.execPath, [script, path], {
      cwd: resolve(import.meta.dirname, '../..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let reported = 0;
    let buffered = '';
    let killing = false;
    const exited = new Promise<NodeJS.Signals | null>((res) => child.on('close', (_code, signal) => res(signal)));
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      reported += lines.filter((l) => l.startsWith('done ')).length;
      if (reported >= KILL_AFTER && !killing) {
        killing = true;
        setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    });
    const signal = await exited;
    expect(stderr).toBe('');
    expect(signal).toBe('SIGKILL');
    expect(reported).toBeGreaterThanOrEqual(KILL_AFTER);

    const t = apache(path);
    const f = flechette(path);
    expect(t.numRows % BATCH).toBe(0);
    expect(t.numRows).toBeGreaterThanOrEqual(reported * BATCH);
    expect(t.numRows).toBeLessThanOrEqual((reported + 1) * BATCH);
    expect(f.numRows).toBe(t.numRows);
    const batches = t.numRows / BATCH;
    const ids = f.getChild('batch').toArray() as Int32Array;
    for (let b = 0; b < batches; b++) {
      expect(ids[b * BATCH]).toBe(b);
      expect(ids[b * BATCH + BATCH - 1]).toBe(b);
    }
    expect(f.getChild('kind').at(t.numRows - 1)).toBe(['a', 'b'][(batches - 1) % 2]);
    rmSync(path);
  });
});

/**
 * Files of every column kind and edge case (empty dictionary, no columns, 2^31 - 1 rows, 70
 * appends), written into `to`; returns their names.
 */
function writeCorpus(to: string): string[] {
  mkdirSync(to, { recursive: true });
  const at = (name: string) => join(to, name);
  const dicts: ColumnData[] = [
    { name: 'd0', type: 'u8', values: Uint8Array.from([0, 1, 2, 1, 0]), dictionary: ['a', 'bb', 'ccc'] },
    { name: 'dempty', type: 'u8', values: new Uint8Array(0), dictionary: [] },
    { name: 'd2', type: 'u16', values: Uint16Array.from([5, 4, 3, 2, 1]), dictionary: Array.from({ length: 40000 }, (_, i) => `h${i}`) },
    { name: 'd3', type: 'i32', values: Int32Array.from([0, 0, 0, 0, 0]), dictionary: ['é', ''] },
    { name: 'd4', type: 'u32', values: Uint32Array.from([0, 1, 0, 1, 0]), dictionary: ['x', 'y'] },
    { name: 'd5', type: 'i8', values: Int8Array.from([0, 1, 0, 1, 0]), dictionary: ['x', 'y'] },
  ];
  const empty = (cols: ColumnData[]) => cols.map((c) => ({ ...c, values: (c.values as Uint8Array).subarray(0, 0) }));
  writeArrowFile(at('num.arrow'), NUMERIC, 5, { a: 'b', c: 'd' });
  writeArrowFile(at('mixed.arrow'), [
    ...NUMERIC, dicts[0]!,
    { name: 'txt', type: 'utf8', values: ['a', 'bb', '', 'ccc', 'é'] },
    { name: 'vec', type: 'f64', values: Float64Array.from({ length: 15 }, (_, i) => i / 3), width: 3 },
    { name: 'vec8', type: 'u8', values: Uint8Array.from({ length: 35 }, (_, i) => i), width: 7 },
  ], 5);
  writeArrowFile(at('dict.arrow'), dicts.filter((d) => d.name !== 'dempty'), 5);
  writeArrowFile(at('dict0rows.arrow'), empty(dicts), 0);
  writeArrowFile(at('nocols-big.arrow'), [], 2 ** 31 - 1, { x: 'y' });
  const app = ArrowFileAppender.open(at('app.arrow'), [
    { name: 'step', type: 'u32', values: new Uint32Array(0) },
    { name: 'opinion', type: 'f32', values: new Float32Array(0) },
    { name: 'action', type: 'u8', values: new Uint8Array(0), dictionary: ['post', 'like', 'share'] },
    { name: 'pos', type: 'f64', values: new Float64Array(0), width: 2 },
    { name: 'note', type: 'utf8', values: [] },
  ], { t: 'events' });
  for (let step = 0; step < 70; step++) {
    const rows = (step * 37) % 11;
    app.append([
      { name: 'note', type: 'utf8', values: Array.from({ length: rows }, (_, i) => `s${step}-${i}`) },
      { name: 'step', type: 'u32', values: new Uint32Array(rows).fill(step) },
      { name: 'opinion', type: 'f32', values: Float32Array.from({ length: rows }, (_, i) => step + i / 4) },
      { name: 'action', type: 'u8', values: Uint8Array.from({ length: rows }, (_, i) => (step + i) % 3) },
      { name: 'pos', type: 'f64', values: Float64Array.from({ length: rows * 2 }, (_, i) => step * 1000 + i) },
    ], rows);
  }
  app.close();
  const app2 = ArrowFileAppender.open(at('app-nocols.arrow'), []);
  for (let i = 0; i < 20; i++) app2.append([], i * 1000);
  app2.close();
  return ['num.arrow', 'mixed.arrow', 'dict.arrow', 'dict0rows.arrow', 'nocols-big.arrow', 'app.arrow', 'app-nocols.arrow'];
}

describe('output bytes are a contract', () => {
  // SHA-256 of the corpus as written by the previous writer (batch messages encoded by apache-arrow
  // 21.2's internal encoder). A change here changes every run file: it needs a format decision, not
  // a new hash. It also catches an apache-arrow upgrade that encodes the schema message differently.
  const GOLDEN: Record<string, string> = {
    'num.arrow': 'd62869625fc806a23e40d55de314f354a4cfec871f53874519b64ef6f51e1dbf',
    'mixed.arrow': 'c143785dbb68966b571550cc026e9dc2538cc1ef4a5a3d46f20e2481aac28dee',
    'dict.arrow': 'bd13342188dd8b2891dd32f40ed96b40cc328f2a2cb14a49a1c18981e08ba431',
    'dict0rows.arrow': '341a0184e8c154bd53fae975d9e6f982a479eb66c905d45ffc581f5a7d8134f9',
    'nocols-big.arrow': '0498952b43fd05d6611ef9bc1033f037301faffec187b04046a428685604a25b',
    'app.arrow': 'b234730a20140d62d3edce31b8eeb7660d55e2594386964a3a4afaf2f139e828',
    'app-nocols.arrow': 'd12494938fb4b1125ee4b87fe93616caa332eec6a3a13099eff0f9cb25b66448',
  };

  it('writes the same bytes as before, file by file', () => {
    const to = file('golden');
    const names = writeCorpus(to);
    const hashes = Object.fromEntries(names.map((n) => [n, createHash('sha256').update(readFileSync(join(to, n))).digest('hex')]));
    expect(hashes).toEqual(GOLDEN);
    expect(names.map((n) => apache(join(to, n)).numRows)).toEqual([5, 5, 5, 0, 2 ** 31 - 1, 343, 190_000]);
  });
});

function thrown(f: () => void): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}

describe('writes in bounded calls', () => {
  afterEach(() => setWriteIo());

  /** A writev that records each call and writes only part of what it is given, every other call. */
  function shortWriter(calls: { bytes: number; buffers: number; wrote: number }[]) {
    return (fd: number, buffers: Uint8Array[], position: number): number => {
      const bytes = buffers.reduce((s, b) => s + b.byteLength, 0);
      let keep = calls.length % 2 === 0 ? bytes : Math.max(1, Math.floor(bytes / 3) - 5);
      const prefix: Uint8Array[] = [];
      for (const b of buffers) {
        if (keep === 0) break;
        prefix.push(b.subarray(0, Math.min(keep, b.byteLength)));
        keep -= prefix[prefix.length - 1]!.byteLength;
      }
      const wrote = writevSync(fd, prefix, position);
      calls.push({ bytes, buffers: buffers.length, wrote });
      return wrote;
    };
  }

  it('keeps single calls far below 2 GiB', () => {
    expect(MAX_WRITE_BYTES).toBeLessThanOrEqual(256 * 1024 * 1024);
  });

  it('gives files byte-identical to unlimited writes with 4 KiB calls and short writes', () => {
    const plain = writeCorpus(file('plain'));
    const calls: { bytes: number; buffers: number; wrote: number }[] = [];
    setWriteIo({ maxBytesPerCall: 4096, writev: shortWriter(calls) });
    writeCorpus(file('chunked'));
    setWriteIo();
    for (const n of plain) expect(readFileSync(file(`chunked/${n}`)).equals(readFileSync(file(`plain/${n}`))), n).toBe(true);
    expect(Math.max(...calls.map((c) => c.bytes))).toBe(4096); // the 40,000-label dictionary alone is ~250 KB
    expect(calls.filter((c) => c.wrote < c.bytes).length).toBeGreaterThan(100);
  });

  it('splits a write of many buffers into calls of at most 512 buffers', () => {
    const cols: ColumnData[] = Array.from({ length: 700 }, (_, i) => ({ name: `c${i}`, type: 'i16', values: Int16Array.from([i, -i, 1]) }));
    writeArrowFile(file('wide-a.arrow'), cols, 3);
    const calls: { bytes: number; buffers: number; wrote: number }[] = [];
    setWriteIo({ writev: shortWriter(calls) });
    writeArrowFile(file('wide-b.arrow'), cols, 3);
    expect(Math.max(...calls.map((c) => c.buffers))).toBe(512);
    expect(readFileSync(file('wide-b.arrow')).equals(readFileSync(file('wide-a.arrow')))).toBe(true);
  });

  it('names the file, the bytes and the OS error when a write fails, and leaves the old file', () => {
    const path = file('full.arrow');
    const cols: ColumnData[] = [{ name: 'x', type: 'f64', values: Float64Array.from({ length: 10_000 }, (_, i) => i) }];
    writeArrowFile(path, cols.map((c) => ({ ...c, values: (c.values as Float64Array).subarray(0, 3) })), 3);
    const before = readFileSync(path);
    writeArrowFile(file('full-ok.arrow'), cols, 10_000);
    const size = readFileSync(file('full-ok.arrow')).byteLength;
    let budget = 50_000; // bytes the "disk" takes before it is full
    setWriteIo({
      maxBytesPerCall: 16_384,
      writev: (fd, buffers, position) => {
        if (budget === 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
        const n = shortWriter([])(fd, buffers, position);
        budget = Math.max(0, budget - n);
        return n;
      },
    });
    const err = thrown(() => writeArrowFile(path, cols, 10_000));
    expect(err).toBeInstanceOf(FileWriteError);
    const e = err as FileWriteError;
    expect(e.path).toBe(path);
    expect(e.code).toBe('ENOSPC');
    expect(e.bytes).toBe(size);
    expect(e.written).toBeGreaterThanOrEqual(50_000);
    expect(e.message).toBe(`cannot write ${path}: ENOSPC: no space left on device, write (${e.written} of ${size} bytes written)`);
    expect(existsSync(`${path}.tmp`)).toBe(false); // the space a failed write took is given back
    expect(readFileSync(path).equals(before)).toBe(true);

    setWriteIo({ writev: () => 0 });
    expect(() => writeArrowFile(path, cols, 10_000)).toThrow(`cannot write ${path}: write returned 0 for`);
  });

  it('writes later (on libuv threads) the same bytes, generated columns included, with 1 MiB calls and short writes; a failure rejects and leaves nothing', async () => {
    const rows = 5_000_003;
    const a = Int32Array.from({ length: rows }, (_, i) => Math.imul(i, 2654435761) | 0);
    const gen = { length: rows, fill: (out: Int32Array, from: number) => out.set(a.subarray(from, from + out.length)) };
    const cols = (values: ColumnData['values']): ColumnData[] => [
      { name: 'a', type: 'i32', values },
      { name: 'b', type: 'f64', values: Float64Array.from({ length: rows }, (_, i) => i / 3) },
    ];
    writeArrowFile(file('later-a.arrow'), cols(a), rows, { k: 'v' });
    let calls = 0;
    let short = 0;
    setWriteIo({
      maxBytesPerCall: 1 << 20,
      writevLater: async (fh, buffers, position) => {
        const bytes = buffers.reduce((n, b) => n + b.byteLength, 0);
        const keep = calls++ % 2 === 0 ? buffers : [buffers[0]!.subarray(0, Math.max(1, buffers[0]!.byteLength >> 1))];
        const { bytesWritten } = await fh.writev(keep, position);
        if (bytesWritten < bytes) short++;
        return bytesWritten;
      },
    });
    let settled = false;
    const later = writeArrowFileLater(file('later-b.arrow'), cols(gen), rows, { k: 'v' }).then(() => (settled = true));
    expect(settled).toBe(false); // the caller goes on while the file is written
    await later;
    expect(readFileSync(file('later-b.arrow')).equals(readFileSync(file('later-a.arrow')))).toBe(true);
    expect(calls).toBeGreaterThan(60);
    expect(short).toBeGreaterThan(20);
    let budget = 3 << 20;
    setWriteIo({
      maxBytesPerCall: 1 << 20,
      writevLater: async (fh, buffers, position) => {
        if (budget <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        const { bytesWritten } = await fh.writev(buffers, position);
        budget -= bytesWritten;
        return bytesWritten;
      },
    });
    const path = file('later-full.arrow');
    const err = await writeArrowFileLater(path, cols(gen), rows).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(FileWriteError);
    expect((err as FileWriteError).message).toMatch(new RegExp(`^cannot write ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ENOSPC: no space left on device, write \\(\\d+ of \\d+ bytes written\\)$`));
    expect(existsSync(`${path}.tmp`)).toBe(false);
    expect(existsSync(path)).toBe(false);
  });

  it('keeps an appender file readable after a failed append and refuses further appends', () => {
    const path = file('append-full.arrow');
    const schema: ColumnData[] = [{ name: 'x', type: 'i32', values: new Int32Array(0) }];
    const app = ArrowFileAppender.open(path, schema);
    app.append([{ name: 'x', type: 'i32', values: Int32Array.from([1, 2, 3]) }], 3);
    setWriteIo({
      writev: () => {
        throw Object.assign(new Error('EFBIG: file too large, write'), { code: 'EFBIG' });
      },
    });
    const err = thrown(() => app.append([{ name: 'x', type: 'i32', values: new Int32Array(1000) }], 1000));
    expect(err).toBeInstanceOf(FileWriteError);
    expect((err as FileWriteError).code).toBe('EFBIG');
    expect((err as Error).message).toMatch(/^cannot write .*append-full\.arrow: EFBIG: file too large, write \(0 of \d+ bytes written\)$/);
    setWriteIo();
    expect(() => app.append([{ name: 'x', type: 'i32', values: new Int32Array(1) }], 1)).toThrow(/stopped after a failed write: cannot write .*EFBIG/);
    app.close();
    expect(Array.from(apache(path).getChild('x')!.toArray() as Int32Array)).toEqual([1, 2, 3]);
    expect(flechette(path).numRows).toBe(3);
  });
});
