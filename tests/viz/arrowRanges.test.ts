/// <reference lib="dom" />
/**
 * viz/src/data/arrowRanges.ts against flechette on files written by socsim's own writer: single
 * and multi-batch files, numeric, dictionary, vector and string columns side by side, row windows
 * across batch boundaries; and over HTTP through the dashboard server, reading only the bytes asked.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tableFromIPC } from '@uwdata/flechette';
import { ArrowFileAppender, writeArrowFile, type ColumnData } from '../../sim-core/io/arrowFile.ts';
import { httpSource, isDict, memorySource, openArrowFile, readColumns, rowCount, type DictColumn } from '../../viz/src/data/arrowRanges.ts';
import { startServer } from '../../runner/serve/serve.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-ranges-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const LABELS = ['left', 'center', 'right'];

/** Columns of `rows` rows whose values depend on `seed`, in every kind the writer knows. */
function columns(rows: number, seed: number): ColumnData[] {
  const f32 = new Float32Array(rows);
  const f64 = new Float64Array(rows);
  const i32 = new Int32Array(rows);
  const u16 = new Uint16Array(rows);
  const u8 = new Uint8Array(rows);
  const i8 = new Int8Array(rows);
  const vec = new Float32Array(rows * 4);
  const text: string[] = [];
  for (let i = 0; i < rows; i++) {
    f32[i] = Math.sin(i + seed) * 0.999;
    f64[i] = (i * 7919 + seed) / 13;
    i32[i] = (i * 2654435761 + seed) | 0;
    u16[i] = (i * 31 + seed) % 65536;
    u8[i] = (i + seed) % 3;
    i8[i] = ((i * 5 + seed) % 200) - 100;
    for (let k = 0; k < 4; k++) vec[i * 4 + k] = i + k / 10;
    text.push(`row ${i} — seed ${seed} ✓`);
  }
  return [
    { name: 'agent', type: 'i32', values: i32 },
    { name: 'leaning', type: 'u8', values: u8, dictionary: LABELS },
    { name: 'topic', type: 'f32', values: vec, width: 4 },
    { name: 'note', type: 'utf8', values: text },
    { name: 'opinion', type: 'f32', values: f32 },
    { name: 'score', type: 'f64', values: f64 },
    { name: 'archetype', type: 'u16', values: u16 },
    { name: 'delta', type: 'i8', values: i8 },
  ];
}

function flechetteColumn(file: string, name: string): unknown[] {
  const t = tableFromIPC(fs.readFileSync(file));
  return Array.from(t.getChild(name)!.toArray() as ArrayLike<unknown>);
}

describe('arrowRanges', () => {
  const single = path.join(tmp, 'single.arrow');
  writeArrowFile(single, columns(1000, 1), 1000);
  const multi = path.join(tmp, 'multi.arrow');
  const app = ArrowFileAppender.open(multi, columns(0, 0));
  const sizes = [300, 0, 7, 500, 193];
  sizes.forEach((n, k) => app.append(columns(n, 10 + k), n));
  app.close();

  it('reads every numeric column and a dictionary column exactly as flechette does', async () => {
    const file = await openArrowFile(memorySource(new Uint8Array(fs.readFileSync(single))));
    expect(file.fields.map((f) => f.name)).toEqual(['agent', 'leaning', 'topic', 'note', 'opinion', 'score', 'archetype', 'delta']);
    expect(await rowCount(file)).toBe(1000);
    const cols = await readColumns(file, ['opinion', 'score', 'archetype', 'delta', 'agent', 'leaning']);
    expect(cols.opinion).toBeInstanceOf(Float32Array);
    expect(cols.archetype).toBeInstanceOf(Uint16Array);
    for (const name of ['opinion', 'score', 'archetype', 'delta', 'agent']) expect(Array.from(cols[name] as ArrayLike<number>), name).toEqual(flechetteColumn(single, name));
    const leaning = cols.leaning!;
    expect(isDict(leaning)).toBe(true);
    const d = leaning as DictColumn;
    expect(d.labels).toEqual(LABELS);
    expect(Array.from(d.codes, (c) => d.labels[c])).toEqual(flechetteColumn(single, 'leaning'));
  });

  it('concatenates batches and cuts row windows across batch boundaries', async () => {
    const file = await openArrowFile(memorySource(new Uint8Array(fs.readFileSync(multi))));
    expect(await rowCount(file)).toBe(1000);
    const all = flechetteColumn(multi, 'opinion');
    const whole = await readColumns(file, ['opinion']);
    expect(Array.from(whole.opinion as Float32Array)).toEqual(all);
    for (const [a, b] of [[0, 1], [299, 301], [295, 820], [807, 1000], [990, 5000], [500, 500]] as const) {
      const w = await readColumns(file, ['opinion', 'leaning'], { rowStart: a, rowEnd: b });
      expect(Array.from(w.opinion as Float32Array), `${a}-${b}`).toEqual(all.slice(a, Math.min(b, 1000)));
      const d = w.leaning as DictColumn;
      expect(Array.from(d.codes, (c) => d.labels[c])).toEqual(flechetteColumn(multi, 'leaning').slice(a, Math.min(b, 1000)));
    }
  });

  it('names the columns it cannot read instead of returning wrong data', async () => {
    const file = await openArrowFile(memorySource(new Uint8Array(fs.readFileSync(single))));
    await expect(readColumns(file, ['note'])).rejects.toThrow(/note/);
    await expect(readColumns(file, ['topic'])).rejects.toThrow(/topic/);
    await expect(readColumns(file, ['nope'])).rejects.toThrow(/no column "nope"/);
    await expect(openArrowFile(memorySource(new Uint8Array(100)))).rejects.toThrow(/not an Arrow/);
  });

  it('reads one column over HTTP ranges, fetching a fraction of the file', async () => {
    const dir = path.join(tmp, 'run');
    fs.mkdirSync(dir);
    const rows = 200_000;
    writeArrowFile(path.join(dir, 'big.arrow'), columns(rows, 3), rows);
    const size = fs.statSync(path.join(dir, 'big.arrow')).size;
    const server = await startServer({ runDir: dir, appDir: tmp, port: 0, watch: false });
    try {
      const src = httpSource(`${server.url}run/big.arrow`);
      const file = await openArrowFile(src);
      const cols = await readColumns(file, ['opinion']);
      expect(Array.from(cols.opinion as Float32Array)).toEqual(flechetteColumn(path.join(dir, 'big.arrow'), 'opinion'));
      // The opinion column is 800 kB of a ~9 MB file: the first and last 64 KiB (schema, batch
      // metadata, footer), then that one buffer.
      expect(src.bytes).toBeLessThanOrEqual(rows * 4 + 2 * 64 * 1024);
      expect(src.bytes).toBeLessThan(size / 5);
      expect(src.requests).toBe(3);
    } finally {
      await server.close();
    }
  });
});
