/**
 * readArrowBatches (sim-core/io/arrowRead.ts) against apache-arrow's own reading of whole files:
 * socsim's files (numeric, vector, dictionary and UTF-8 columns, one batch and many appended) and
 * files apache-arrow writes (file and stream format, nulls, booleans, 64-bit integers, structs),
 * each read in slices of several sizes; batches longer than the slice come back split. Malformed
 * files are one error naming the file.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Bool, Dictionary, Field, Float64, Int32, Int64, Int8, Struct, Table, Utf8, makeData, makeVector, tableFromIPC, tableToIPC, vectorFromArray, type RecordBatch } from 'apache-arrow';
import { InputError } from '../../../sim-core/errors.ts';
import { ArrowFileAppender, readArrowBatches, writeArrowFile, type ColumnData } from '../../../sim-core/io/arrowFile.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'socsim-arrow-read-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});
const file = (name: string) => join(dir, name);

/** A table's rows as JSON-comparable arrays (bigints as strings, vectors as arrays). */
function rowsOf(t: Table): unknown[] {
  return JSON.parse(JSON.stringify(t.toArray().map((r) => r.toJSON()), (_, v) => (typeof v === 'bigint' ? String(v) : ArrayBuffer.isView(v) ? Array.from(v as Float32Array) : v)));
}

/**
 * readArrowBatches' batches of `path` in slices of `maxRows` (of `columns` alone, given in the
 * file's order), checked against apache-arrow's whole read.
 */
function checkSlices(path: string, maxRows: number, columns?: string[]): RecordBatch[] {
  const whole = tableFromIPC(readFileSync(path));
  const want = columns ? whole.select(columns) : whole;
  if (columns) expect(want.schema.fields.map((f) => f.name)).toEqual(columns);
  const batches = [...readArrowBatches(path, maxRows, columns)];
  for (const b of batches) expect(b.numRows).toBeLessThanOrEqual(maxRows);
  const got = new Table(want.schema, batches);
  expect(got.numRows).toBe(want.numRows);
  expect(got.schema.fields.map((f) => `${f.name}:${String(f.type)}:${f.nullable}`)).toEqual(want.schema.fields.map((f) => `${f.name}:${String(f.type)}:${f.nullable}`));
  expect(rowsOf(got)).toEqual(rowsOf(want));
  return batches;
}

const N = 1000;
const socsimColumns = (rows: number, from = 0): ColumnData[] => [
  { name: 'id', type: 'i32', values: Int32Array.from({ length: rows }, (_, i) => from + i) },
  { name: 'x', type: 'f64', values: Float64Array.from({ length: rows }, (_, i) => Math.sin(from + i)) },
  { name: 'small', type: 'u16', values: Uint16Array.from({ length: rows }, (_, i) => (from + i) * 7) },
  { name: 'kind', type: 'u8', values: Uint8Array.from({ length: rows }, (_, i) => (from + i) % 3), dictionary: ['original', 'repost', 'quote'] },
  { name: 'topic', type: 'f32', values: Float32Array.from({ length: rows * 3 }, (_, i) => from * 3 + i), width: 3 },
  { name: 'label', type: 'utf8', values: Array.from({ length: rows }, (_, i) => (i % 5 === 0 ? '' : `row ${from + i} é`)) },
];

describe('readArrowBatches', () => {
  it("reads socsim's files in slices, equal to apache-arrow's whole read", () => {
    writeArrowFile(file('whole.arrow'), socsimColumns(N), N);
    for (const rows of [8, 96, 1000, 1 << 20]) {
      const batches = checkSlices(file('whole.arrow'), rows);
      expect(batches.length).toBe(Math.ceil(N / rows));
    }
    const app = ArrowFileAppender.open(file('appended.arrow'), socsimColumns(0));
    for (let b = 0; b < 5; b++) app.append(socsimColumns(37 * b, 1000 * b), 37 * b); // 0, 37, 74, 111, 148 rows
    app.close();
    expect(checkSlices(file('appended.arrow'), 40).map((b) => b.numRows)).toEqual([37, 40, 34, 40, 40, 31, 40, 40, 40, 28]);
    expect(checkSlices(file('appended.arrow'), 1 << 20).length).toBe(4);
    // Some columns alone: the others' buffers are stepped over, whatever their type.
    for (const columns of [['id'], ['kind', 'label'], ['topic'], ['small', 'label'], ['x', 'topic', 'label']]) {
      for (const rows of [8, 40]) checkSlices(file('appended.arrow'), rows, columns);
    }
    expect(() => [...readArrowBatches(file('whole.arrow'), 8, ['id', 'nope'])]).toThrow(/whole\.arrow has no column nope; its columns: id, x, small, kind, topic, label/);
  });

  it('reads what apache-arrow writes: nulls, booleans, 64-bit integers, structs, dictionaries; file and stream format', () => {
    const n = 203;
    const maybe = <T>(i: number, v: T) => (i % 7 === 3 ? null : v);
    const dict = new Dictionary(new Utf8(), new Int8());
    const words = vectorFromArray(Array.from({ length: n }, (_, i) => maybe(i, ['a', 'bb', 'ccc'][i % 3])), dict);
    const point = makeData({
      type: new Struct([new Field('px', new Int32()), new Field('py', new Float64(), true)]),
      length: n,
      nullCount: 0,
      children: [makeVector(Int32Array.from({ length: n }, (_, i) => -i)).data[0], vectorFromArray(Array.from({ length: n }, (_, i) => maybe(i + 1, i / 4)), new Float64()).data[0]],
    });
    const t = new Table({
      big: makeVector(BigInt64Array.from({ length: n }, (_, i) => BigInt(i) * 3_000_000_000n)),
      flag: vectorFromArray(Array.from({ length: n }, (_, i) => maybe(i, i % 3 === 0)), new Bool()),
      name: vectorFromArray(Array.from({ length: n }, (_, i) => maybe(i + 2, `n${i}`)), new Utf8()),
      word: words,
      point: makeVector(point),
      wide: vectorFromArray(Array.from({ length: n }, (_, i) => BigInt(-i)), new Int64()),
    });
    writeFileSync(file('apache.arrow'), tableToIPC(t, 'file'));
    writeFileSync(file('apache.arrows'), tableToIPC(t, 'stream'));
    for (const name of ['apache.arrow', 'apache.arrows']) {
      for (const rows of [8, 64, 200, 1 << 20]) checkSlices(file(name), rows);
      for (const columns of [['word', 'wide'], ['point'], ['big', 'name'], ['flag', 'point', 'wide']]) checkSlices(file(name), 64, columns);
    }
    // Slices count their own nulls.
    const [first] = readArrowBatches(file('apache.arrow'), 8);
    expect(first.getChild('flag')!.nullCount).toBe(1); // row 3
  });

  it('names the file of a cut or foreign file (InputError) and refuses slices not a multiple of 8', () => {
    writeArrowFile(file('cut-source.arrow'), socsimColumns(N), N);
    const bytes = readFileSync(file('cut-source.arrow'));
    writeFileSync(file('cut.arrow'), bytes.subarray(0, bytes.length - 3000)); // inside the batch's body
    expect(() => [...readArrowBatches(file('cut.arrow'))]).toThrow(InputError);
    expect(() => [...readArrowBatches(file('cut.arrow'))]).toThrow(/cut\.arrow: ends inside a message/);
    writeFileSync(file('text.arrow'), 'id,x\n1,2\n');
    expect(() => [...readArrowBatches(file('text.arrow'))]).toThrow(/text\.arrow: /);
    writeFileSync(file('zeros.arrow'), new Uint8Array(64));
    expect(() => [...readArrowBatches(file('zeros.arrow'))]).toThrow(/zeros\.arrow: no Arrow schema message/);
    expect(() => [...readArrowBatches(file('cut-source.arrow'), 12)]).toThrow(/multiple of 8/);
  });

  it('yields nothing for a file with a schema and no rows', () => {
    writeArrowFile(file('empty.arrow'), socsimColumns(0), 0);
    expect([...readArrowBatches(file('empty.arrow'))]).toEqual([]);
  });
});
