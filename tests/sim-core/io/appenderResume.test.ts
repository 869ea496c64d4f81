import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ArrowFileAppender, readArrowFile, type ColumnData } from '../../../sim-core/io/arrowFile.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-resume-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const schema: ColumnData[] = [
  { name: 'step', type: 'i32', values: new Int32Array(0) },
  { name: 'x', type: 'f64', values: new Float64Array(0) },
  { name: 'kind', type: 'u8', values: new Uint8Array(0), dictionary: ['a', 'b', 'c'] },
];
const batch = (k: number): ColumnData[] => {
  const n = 1 + (k % 4);
  return [
    { name: 'step', type: 'i32', values: Int32Array.from({ length: n }, () => k) },
    { name: 'x', type: 'f64', values: Float64Array.from({ length: n }, (_, i) => k + i / 10) },
    { name: 'kind', type: 'u8', values: Uint8Array.from({ length: n }, (_, i) => (k + i) % 3) },
  ];
};
const rows = (k: number) => 1 + (k % 4);

describe('ArrowFileAppender.resume', () => {
  it('cuts a file back to a saved state and, appending the same batches again, ends byte-identical', () => {
    const whole = path.join(tmp, 'whole.arrow');
    const a = ArrowFileAppender.open(whole, schema);
    for (let k = 0; k < 9; k++) a.append(batch(k), rows(k));
    a.close();

    const cut = path.join(tmp, 'cut.arrow');
    const b = ArrowFileAppender.open(cut, schema);
    for (let k = 0; k < 5; k++) b.append(batch(k), rows(k));
    const saved = b.state();
    const atSave = fs.readFileSync(cut);
    // Batches past the save point, then a crash (no close).
    for (let k = 5; k < 7; k++) b.append(batch(k), rows(k));
    b.append(batch(99), rows(99));
    const c = ArrowFileAppender.resume(cut, schema, saved);
    // Right after resuming, the file is exactly what it was at the save point.
    expect(fs.readFileSync(cut).equals(atSave)).toBe(true);
    expect(readArrowFile(cut).numRows).toBe([0, 1, 2, 3, 4].reduce((s, k) => s + rows(k), 0));
    for (let k = 5; k < 9; k++) c.append(batch(k), rows(k));
    c.close();
    expect(fs.readFileSync(cut).equals(fs.readFileSync(whole))).toBe(true);
  });

  it('refuses a file that is shorter than the saved state or has another schema', () => {
    const f = path.join(tmp, 'short.arrow');
    const a = ArrowFileAppender.open(f, schema);
    for (let k = 0; k < 4; k++) a.append(batch(k), rows(k));
    const saved = a.state();
    a.close();
    const other = path.join(tmp, 'other.arrow');
    ArrowFileAppender.open(other, schema.slice(0, 2)).close();
    expect(() => ArrowFileAppender.resume(other, schema, { ...saved, end: 10 })).toThrow(/schema/);
    fs.truncateSync(f, 100);
    expect(() => ArrowFileAppender.resume(f, schema, saved)).toThrow(/shorter/);
  });
});
