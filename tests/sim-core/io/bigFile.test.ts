/**
 * A real Arrow file over 2 GiB, written whole and by appends (the 10^7-agent graph.arrow is ~4 GB),
 * and read back in slices (readArrowBatches: socsim export and query).
 * It needs ~2.4 GB of free disk and ~0.3 GB of memory and takes 2-20 s, so it runs only when asked:
 * SOCSIM_BIG_FILE_TESTS=1 npx vitest run tests/sim-core/io/bigFile.test.ts
 * (the seam tests in arrowFile.test.ts cover the chunked writer on every run).
 */
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync, writevSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Message } from 'apache-arrow';
import { ArrowFileAppender, MAX_WRITE_BYTES, arrowFileSummary, readArrowBatches, setWriteIo, writeArrowFile } from '../../../sim-core/io/arrowFile.ts';
import type { ColumnData } from '../../../sim-core/io/arrowFile.ts';

const enabled = process.env.SOCSIM_BIG_FILE_TESTS === '1';

let dir: string;
beforeAll(() => {
  if (enabled) dir = mkdtempSync(join(tmpdir(), 'socsim-big-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function readAt(fd: number, position: number, length: number): Buffer {
  const b = Buffer.alloc(length);
  expect(readSync(fd, b, 0, length, position)).toBe(length);
  return b;
}

describe.runIf(enabled)('files over 2 GiB', () => {
  // 9 int32 columns over one 256 MiB array: 2.25 GiB of body from 256 MiB of memory.
  const ROWS = 64 * 1024 * 1024;
  const COLUMNS = 9;
  let values: Int32Array;
  let columns: ColumnData[];
  beforeAll(() => {
    values = new Int32Array(ROWS);
    for (let i = 0; i < ROWS; i++) values[i] = i ^ 0x5a5a5a5a;
    columns = Array.from({ length: COLUMNS }, (_, c) => ({ name: `c${c}`, type: 'i32', values }));
  });

  function checkColumns(path: string, rowsPerBatch: number, batches: number) {
    const size = statSync(path).size;
    expect(size).toBeGreaterThan(2 ** 31 + 2 ** 28);
    const fd = openSync(path, 'r');
    try {
      const tail = readAt(fd, size - 10, 10);
      expect(tail.subarray(4).toString('latin1')).toBe('ARROW1');
      // Last batch: decode its Message with apache-arrow and read sample values at its buffers.
      const footerLength = tail.readInt32LE(0);
      const footer = readAt(fd, size - 10 - footerLength, footerLength);
      const last = footerLength - 24; // the block vector ends the footer (FooterEncoder)
      expect(footer.readUInt32LE(last - 24 * (batches - 1) - 4)).toBe(batches);
      const offset = Number(footer.readBigUInt64LE(last));
      const metaDataLength = footer.readInt32LE(last + 8);
      const bodyLength = Number(footer.readBigUInt64LE(last + 16));
      expect(offset + metaDataLength + bodyLength + 8 + footerLength + 10).toBe(size);
      const message = Message.decode(readAt(fd, offset + 8, metaDataLength - 8));
      expect(message.isRecordBatch()).toBe(true);
      const header = message.header() as unknown as { length: number; buffers: { offset: number; length: number }[] };
      expect(header.length).toBe(rowsPerBatch);
      const body = offset + metaDataLength;
      const firstRow = (batches - 1) * rowsPerBatch;
      for (let c = 0; c < COLUMNS; c++) {
        const region = header.buffers[2 * c + 1]!;
        expect(region.length).toBe(4 * rowsPerBatch);
        for (const row of [0, 1, rowsPerBatch - 1]) {
          expect(readAt(fd, body + region.offset + 4 * row, 4).readInt32LE(0)).toBe(values[(firstRow + row) % ROWS]);
        }
      }
    } finally {
      closeSync(fd);
    }
    // socsim inspect's summary: from the metadata, past 2 GiB.
    const summary = arrowFileSummary(path);
    expect(summary.rows).toBe(rowsPerBatch * batches);
    expect(summary.schema.fields.map((f) => f.name)).toEqual(columns.map((c) => c.name));
    // socsim export's and query's reading: slices of the batches, every value in place.
    let row = 0;
    for (const b of readArrowBatches(path)) {
      for (let c = 0; c < COLUMNS; c++) {
        const got = b.getChildAt(c)!.data[0].values as Int32Array;
        for (let i = 0; i < b.numRows; i += 4093) expect(got[i]).toBe(values[(row + i) % ROWS]);
        expect(got[b.numRows - 1]).toBe(values[(row + b.numRows - 1) % ROWS]);
      }
      row += b.numRows;
    }
    expect(row).toBe(rowsPerBatch * batches);
  }

  afterEach(() => setWriteIo());

  it(`writes a 2.25 GiB file whole, in calls of at most ${MAX_WRITE_BYTES / 2 ** 20} MiB`, () => {
    const path = join(dir, 'whole.arrow');
    const calls: number[] = [];
    setWriteIo({
      writev: (fd, buffers, position) => {
        calls.push(buffers.reduce((n, b) => n + b.byteLength, 0));
        return writevSync(fd, buffers, position);
      },
    });
    const t0 = performance.now();
    writeArrowFile(path, columns, ROWS);
    const s = (performance.now() - t0) / 1000;
    console.log(`writeArrowFile: ${(statSync(path).size / 1e9).toFixed(2)} GB in ${s.toFixed(1)} s, ${calls.length} write calls`);
    expect(Math.max(...calls)).toBe(MAX_WRITE_BYTES);
    expect(calls.length).toBeGreaterThanOrEqual(9);
    checkColumns(path, ROWS, 1);
    rmSync(path);
  });

  it('appends a batch that takes the file past 2 GiB', () => {
    const path = join(dir, 'appended.arrow');
    const half = ROWS / 2;
    const app = ArrowFileAppender.open(path, columns);
    const t0 = performance.now();
    for (let b = 0; b < 2; b++) app.append(columns.map((c) => ({ ...c, values: values.subarray(b * half, (b + 1) * half) })), half);
    app.close();
    console.log(`appender: ${(statSync(path).size / 1e9).toFixed(2)} GB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    checkColumns(path, half, 2);
    rmSync(path);
  });
});
