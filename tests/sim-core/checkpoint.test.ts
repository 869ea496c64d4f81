import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CHECKPOINT_VERSION, CheckpointError, readCheckpoint, writeCheckpoint } from '../../sim-core/checkpoint.ts';
import { sharedArray } from '../../sim-core/table.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-ckpt-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

class Counter {
  count = 0;
  readonly seen = new Set<number>();
  bump(x: number): void {
    this.count++;
    this.seen.add(x);
  }
}

/** A small world shaped like the real ones: shared columns, packed views, class instances, maps. */
function build() {
  const rec = sharedArray('i32', 8);
  const counter = new Counter();
  const shared = { label: 'shared', values: [1, 2, 3] };
  return {
    columns: { opinion: sharedArray('f32', 5), state: sharedArray('u8', 5) },
    records: { rec, recF: new Float32Array(rec.buffer), recQ: new Int8Array(rec.buffer) },
    counter,
    tracks: new Map<number, { users: Set<number>; depth: number }>(),
    a: shared,
    b: shared,
    odd: { nan: NaN, inf: -Infinity, negZero: -0, none: undefined as number | undefined },
    plain: new Float64Array(3),
  };
}

describe('checkpoint', () => {
  it('restores a changed world into a fresh one, in place, keeping identities and shared buffers', () => {
    const live = build();
    live.columns.opinion.set([0.1, -0.2, 0.3, 0.4, 0.5]);
    live.columns.state[2] = 7;
    live.records.rec[0] = 42;
    live.records.recF[1] = 1.5;
    live.counter.bump(3);
    live.counter.bump(9);
    live.tracks.set(5, { users: new Set([1, 2]), depth: 3 });
    live.a.values.push(4);
    live.odd.none = 11;
    live.plain[2] = Math.PI;
    const file = path.join(tmp, 'a.bin');
    writeCheckpoint(file, live, { step: 7 });

    const fresh = build();
    const counter = fresh.counter;
    const tracks = fresh.tracks;
    const ck = readCheckpoint<{ step: number }>(file);
    expect(ck.meta).toEqual({ step: 7 });
    ck.restoreInto(fresh);
    expect(Array.from(fresh.columns.opinion)).toEqual(Array.from(live.columns.opinion));
    expect(fresh.columns.state[2]).toBe(7);
    // Shared columns stay shared (the worker pool needs them); views of one buffer share it again.
    expect(fresh.columns.opinion.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(fresh.plain.buffer).toBeInstanceOf(ArrayBuffer);
    expect(fresh.records.recF.buffer).toBe(fresh.records.rec.buffer);
    expect(fresh.records.recQ.buffer).toBe(fresh.records.rec.buffer);
    expect(fresh.records.rec[0]).toBe(42);
    expect(fresh.records.recF[1]).toBe(1.5);
    // Objects are restored in place: references held elsewhere see the restored state.
    expect(fresh.counter).toBe(counter);
    expect(counter.count).toBe(2);
    expect([...counter.seen]).toEqual([3, 9]);
    counter.bump(1);
    expect(fresh.tracks).toBe(tracks);
    expect(tracks.get(5)!.users.has(2)).toBe(true);
    expect(fresh.a).toBe(fresh.b);
    expect(fresh.a.values).toEqual([1, 2, 3, 4]);
    expect(Number.isNaN(fresh.odd.nan)).toBe(true);
    expect(fresh.odd.inf).toBe(-Infinity);
    expect(Object.is(fresh.odd.negZero, -0)).toBe(true);
    expect(fresh.odd.none).toBe(11);
    expect(fresh.plain[2]).toBe(Math.PI);
  });

  it('saves a buffer up to the end of its last view: room past the views is left out', () => {
    // The following rows after a rebuild: a view over the start of a buffer with room after it.
    const roomy = new SharedArrayBuffer(4 * 100_000);
    const rows = new Int32Array(roomy, 0, 1_000);
    const tail = new Int32Array(roomy, 4 * 500, 600);
    rows.fill(7);
    tail[599] = 9;
    const file = path.join(tmp, 'room.bin');
    writeCheckpoint(file, { g: { rows, tail } }, {});
    expect(fs.statSync(file).size).toBeLessThan(4 * 1_100 + 1_000);
    const fresh = { g: { rows: new Int32Array(0), tail: new Int32Array(0) } };
    readCheckpoint(file).restoreInto(fresh);
    expect(fresh.g.rows.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(fresh.g.rows.buffer).toBe(fresh.g.tail.buffer);
    expect(fresh.g.rows.buffer.byteLength).toBe(4 * 1_100);
    expect(fresh.g.rows.length).toBe(1_000);
    expect(fresh.g.rows[0]).toBe(7);
    expect(fresh.g.tail[599]).toBe(9);
    expect(fresh.g.rows[599]).toBe(7);
  });

  it('reads a saved array into the live one where both have one type, length and buffer of their own, and nowhere else', () => {
    const fill = <T extends { length: number; [i: number]: number }>(a: T, k: number): T => {
      for (let i = 0; i < a.length; i++) a[i] = k + i;
      return a;
    };
    const rec = fill(sharedArray('i32', 4), 30);
    const twice = fill(sharedArray('i32', 3), 40);
    const saved = {
      a: fill(sharedArray('f32', 5), 1),
      b: fill(new Float64Array(3), 10),
      c: fill(sharedArray('i32', 4), 20),
      rec,
      recF: new Float32Array(rec.buffer),
      x: twice,
      y: twice,
      kind: fill(new Int8Array(2), 50),
      p: fill(sharedArray('u16', 2), 60),
      q: fill(sharedArray('u16', 2), 70),
      plainToShared: fill(new Int32Array(2), 80),
    };
    const file = path.join(tmp, 'inplace.bin');
    writeCheckpoint(file, saved, {});
    const shared = sharedArray('u16', 2);
    const fresh = {
      a: sharedArray('f32', 5),
      b: new Float64Array(3),
      // A live view shorter than its buffer, which has the saved array's size.
      c: new Int32Array(new SharedArrayBuffer(16), 0, 3),
      rec: sharedArray('i32', 4),
      recF: new Float32Array(4),
      x: sharedArray('i32', 3),
      y: sharedArray('i32', 3),
      kind: new Uint8Array(2),
      p: shared,
      q: shared,
      plainToShared: sharedArray('i32', 2),
    };
    const before = { ...fresh };
    const overwritten = readCheckpoint(file).restoreInto(fresh);
    // In place: same type and length, a buffer of its own on both sides (p takes the live buffer
    // p and q shared; q then gets its own).
    expect(overwritten).toEqual([before.a, before.b, before.p]);
    expect(fresh.a).toBe(before.a);
    expect(fresh.b).toBe(before.b);
    expect(fresh.p).toBe(before.p);
    // Replaced: another length, a saved buffer with two views (two arrays, or one array reached
    // twice), another type, shared on one side only, a live buffer taken already.
    for (const k of ['c', 'rec', 'recF', 'x', 'y', 'kind', 'q', 'plainToShared'] as const) expect(fresh[k], k).not.toBe(before[k]);
    expect(fresh.x).toBe(fresh.y);
    expect(fresh.recF.buffer).toBe(fresh.rec.buffer);
    expect(fresh.plainToShared.buffer).toBeInstanceOf(ArrayBuffer);
    for (const k of Object.keys(saved) as Array<keyof typeof saved>) expect(Array.from(fresh[k]), k).toEqual(Array.from(saved[k]));
  });

  it('readField reads one field of the root apart, and restoreInto can then skip it; fields that share with the rest are refused', () => {
    const offsets = sharedArray('i32', 4);
    offsets.set([0, 2, 2, 3]);
    const targets = sharedArray('i32', 3);
    targets.set([1, 2, 0]);
    const saved = { agents: { opinion: sharedArray('f32', 3).fill(0.5) }, graph: { following: { offsets, targets } }, none: 1 };
    const file = path.join(tmp, 'field.bin');
    writeCheckpoint(file, saved, {});
    const ck = readCheckpoint(file);
    const g = ck.readField('graph') as typeof saved.graph;
    expect(Array.from(g.following.offsets)).toEqual([0, 2, 2, 3]);
    expect(Array.from(g.following.targets)).toEqual([1, 2, 0]);
    expect(g.following.targets.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(ck.readField('absent')).toBeUndefined();
    // The rest restores around the field, which keeps what the live root holds there.
    const liveGraph = { following: g.following };
    const fresh = { agents: { opinion: sharedArray('f32', 3) }, graph: liveGraph, none: 0 };
    ck.restoreInto(fresh, ['graph']);
    expect(fresh.graph).toBe(liveGraph);
    expect(fresh.graph.following.targets).toBe(g.following.targets);
    expect(Array.from(fresh.agents.opinion)).toEqual([0.5, 0.5, 0.5]);
    expect(fresh.none).toBe(1);
    // A field whose buffer or object is also reached from elsewhere cannot be read apart.
    const shared = sharedArray('i32', 3);
    const both = path.join(tmp, 'shared-field.bin');
    writeCheckpoint(both, { graph: { t: shared }, other: { t: new Int8Array(shared.buffer) } }, {});
    expect(() => readCheckpoint(both).readField('graph')).toThrow(/shares objects or buffers/);
    const obj = { x: 1 };
    const refs = path.join(tmp, 'shared-object.bin');
    writeCheckpoint(refs, { other: obj, graph: { obj } }, {});
    expect(() => readCheckpoint(refs).readField('graph')).toThrow(/shares objects or buffers/);
    writeCheckpoint(refs, { graph: { obj }, other: obj }, {});
    expect(() => readCheckpoint(refs).readField('graph')).toThrow(/shares objects or buffers/);
  });

  it('a truncated or foreign file is refused, and a failed write leaves no checkpoint', () => {
    const file = path.join(tmp, 'b.bin');
    writeCheckpoint(file, build(), {});
    const bytes = fs.readFileSync(file);
    fs.writeFileSync(path.join(tmp, 'cut.bin'), bytes.subarray(0, bytes.length - 8));
    expect(() => readCheckpoint(path.join(tmp, 'cut.bin'))).toThrow(/truncated/);
    fs.writeFileSync(path.join(tmp, 'other.bin'), 'not a checkpoint at all');
    expect(() => readCheckpoint(path.join(tmp, 'other.bin'))).toThrow(/not a socsim checkpoint/);
    expect(() => writeCheckpoint(path.join(tmp, 'c.bin'), { f: new DataView(new ArrayBuffer(4)) }, {})).toThrow();
    expect(fs.existsSync(path.join(tmp, 'c.bin'))).toBe(false);
  });
});

/** The CheckpointError reading `file` throws (fails the test when it reads). */
function refusal(file: string): CheckpointError {
  try {
    readCheckpoint(file);
  } catch (err) {
    expect(err).toBeInstanceOf(CheckpointError);
    return err as CheckpointError;
  }
  throw new Error(`${file} was read`);
}

describe('checkpoint verification', () => {
  // A world whose file has a header, JSON, padding, several buffers and the trailer.
  const world = () => {
    const w = build();
    w.columns.opinion.set([0.1, -0.2, 0.3, 0.4, 0.5]);
    w.counter.bump(4);
    return w;
  };

  it('every byte is covered: bytes changed anywhere in the file are refused as one line naming the file, before anything is restored', () => {
    const file = path.join(tmp, 'flip.bin');
    writeCheckpoint(file, world(), { step: 3 });
    const good = fs.readFileSync(file);
    const size = good.length;
    expect(good.readUInt32LE(8)).toBe(CHECKPOINT_VERSION);
    expect(Number(good.readBigUInt64LE(16))).toBe(size);
    const json = good.readUInt32LE(12);
    const cases: Array<[string, number, number, string]> = [
      // where, offset, bytes set to 0xFF, the problem
      ['the magic', 0, 1, 'not a socsim checkpoint: it does not start with SOCSIMCK'],
      ['the file length', 16, 1, 'checksum mismatch in the header'],
      ['the header check', 30, 1, 'checksum mismatch in the header'],
      ['the JSON', 32 + 10, 1, 'checksum mismatch'],
      ['the JSON, made invalid', 32 + json - 1, 1, 'checksum mismatch'],
      ['a buffer', size - 40, 1, 'checksum mismatch'],
      ['the trailer', size - 1, 1, 'checksum mismatch'],
      // As probed on a run: 64 bytes in the middle (before, accepted and restored as garbage).
      ['64 bytes in the middle', Math.floor(size / 2) - 32, 64, 'checksum mismatch'],
    ];
    for (const [where, at, n, problem] of cases) {
      const bad = Buffer.from(good);
      bad.fill(0xff, at, at + n);
      if (bad.equals(good)) bad.fill(0x00, at, at + n);
      fs.writeFileSync(file, bad);
      const err = refusal(file);
      expect(err.message, where).toBe(`${file}: ${problem}`);
      expect(err.kind, where).toBe('damaged');
    }
    fs.writeFileSync(file, good);
    expect(readCheckpoint<{ step: number }>(file).meta).toEqual({ step: 3 });
  });

  it('a truncated file says how much of it is there, not a JSON or read error', () => {
    const file = path.join(tmp, 'whole.bin');
    writeCheckpoint(file, world(), {});
    const good = fs.readFileSync(file);
    const size = good.length;
    const cut = path.join(tmp, 'cut-short.bin');
    // Inside the JSON, inside the buffers, the trailer half gone.
    for (const keep of [40, size - 100, size - 16]) {
      fs.writeFileSync(cut, good.subarray(0, keep));
      expect(refusal(cut).message).toBe(`${cut}: truncated: ${keep} of ${size} bytes`);
    }
    for (const keep of [0, 20]) {
      fs.writeFileSync(cut, good.subarray(0, keep));
      expect(refusal(cut).message).toBe(`${cut}: truncated: ${keep} bytes, less than the 32-byte header`);
    }
    fs.writeFileSync(cut, Buffer.concat([good, Buffer.alloc(8)]));
    expect(refusal(cut).message).toBe(`${cut}: ${size + 8} bytes where its header says ${size}`);
    expect(refusal(path.join(tmp, 'absent.bin'))).toMatchObject({ kind: 'missing', problem: 'missing' });
  });

  it('another format version is refused by its number; a damaged version field is damage', () => {
    const file = path.join(tmp, 'version.bin');
    writeCheckpoint(file, world(), {});
    const good = fs.readFileSync(file);
    // A later version (its header check holds): the header's first 32 bytes keep their layout.
    const later = Buffer.from(good);
    later.writeUInt32LE(CHECKPOINT_VERSION + 1, 8);
    createHash('sha256').update(later.subarray(0, 24)).digest().copy(later, 24, 0, 8);
    fs.writeFileSync(file, later);
    expect(refusal(file)).toMatchObject({ kind: 'version', message: `${file}: format version ${CHECKPOINT_VERSION + 1}, this socsim reads ${CHECKPOINT_VERSION}` });
    // The version changed and the header check not: damage, not a version.
    later.copy(good, 8, 8, 12);
    fs.writeFileSync(file, good);
    expect(refusal(file).message).toBe(`${file}: checksum mismatch in the header`);
    // Version 1 (before checksums): "SOCSIMCK", version, JSON length, the JSON, the buffers.
    const json = Buffer.from(JSON.stringify({ meta: {}, tree: { $obj: 0, f: {} }, buffers: [] }));
    const v1 = Buffer.alloc(16);
    v1.write('SOCSIMCK', 0, 'latin1');
    v1.writeUInt32LE(1, 8);
    v1.writeUInt32LE(json.length, 12);
    fs.writeFileSync(file, Buffer.concat([v1, json]));
    expect(refusal(file)).toMatchObject({ kind: 'version', message: `${file}: format version 1, this socsim reads ${CHECKPOINT_VERSION}` });
  });

  it('with `previous`, the checkpoint replaced is kept under that name; a failed write changes neither', () => {
    const file = path.join(tmp, 'rot.bin');
    const prev = path.join(tmp, 'rot.prev.bin');
    writeCheckpoint(file, world(), { step: 1 }, { previous: prev });
    expect(fs.existsSync(prev)).toBe(false);
    writeCheckpoint(file, world(), { step: 2 }, { previous: prev });
    writeCheckpoint(file, world(), { step: 3 }, { previous: prev });
    expect(readCheckpoint(file).meta).toEqual({ step: 3 });
    expect(readCheckpoint(prev).meta).toEqual({ step: 2 });
    expect(() => writeCheckpoint(file, { f: new DataView(new ArrayBuffer(4)) }, { step: 4 }, { previous: prev })).toThrow();
    expect(readCheckpoint(file).meta).toEqual({ step: 3 });
    expect(readCheckpoint(prev).meta).toEqual({ step: 2 });
    expect(fs.existsSync(`${file}.tmp`)).toBe(false);
    // Without `previous` the newest is replaced and the previous one stays as it is.
    writeCheckpoint(file, world(), { step: 5 });
    expect(readCheckpoint(file).meta).toEqual({ step: 5 });
    expect(readCheckpoint(prev).meta).toEqual({ step: 2 });
  });
});

// A column past 4 GiB (10^8 agents' interest vectors are 6.4 GB): a Uint8Array over its whole
// buffer is refused, so the file is written and read through views of parts of it. Needs ~4.3 GB
// of disk and ~9 GB of memory: SOCSIM_BIG_FILE_TESTS=1 npx vitest run tests/sim-core/checkpoint.test.ts
describe.runIf(process.env.SOCSIM_BIG_FILE_TESTS === '1')('checkpoint of a buffer past 4 GiB', () => {
  it('writes and restores it', () => {
    const n = 2 ** 30 + 3; // float32: 4 GiB + 12 bytes
    const big = sharedArray('f32', n);
    for (const i of [0, 1, 2 ** 28, 2 ** 30 - 1, 2 ** 30, n - 1]) big[i] = (i % 1000) + 0.5;
    const file = path.join(tmp, 'big.ckpt');
    expect(writeCheckpoint(file, { big }, {})).toBeGreaterThan(2 ** 32);
    const live = { big: new Float32Array(1) };
    readCheckpoint(file).restoreInto(live);
    expect(live.big.length).toBe(n);
    for (const i of [0, 1, 2 ** 28, 2 ** 30 - 1, 2 ** 30, n - 1]) expect(live.big[i]).toBe((i % 1000) + 0.5);
    fs.rmSync(file);
  });
});
