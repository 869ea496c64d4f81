/**
 * Where each array's valid copy is, for the `webgpu` executor (executor.ts): every array a GPU
 * kernel touches gets a device buffer the first time, uploaded from the host, and it stays there
 * across steps. Each array has two flags, host copy valid and device copy valid: a GPU kernel
 * uploads the arguments whose device copy is stale (`toDevice`) and leaves its outputs valid on the
 * device only (`wroteOnDevice`), or the elements it wrote where it names them (a table's live rows:
 * the host copy of the rest stays valid, and the host may append rows beside them); a CPU kernel
 * first reads back the arguments whose host copy is stale (`toHostAll`, one round trip for all of
 * them) and leaves its outputs valid on the host only (`wroteOnHost`). So the CSR is uploaded once per graph, and a voter step's
 * scratch arrays never cross the bus. Each side's stale part is one span of bytes.
 *
 * Packs (gpuKernels.ts `Pack`: read-only arrays bound as one buffer, for kernels that read more
 * arrays than an adapter's storage bindings allow) are copies: each array carries a version, moved
 * by every write a kernel (on either side) or hostWrote reports, and a pack re-copies a member
 * whose version moved, from the device when only the device copy is valid (`packBuffer`).
 *
 * Host writes outside kernels come through `hostWrote(array, from, to)`, which marks those elements
 * of the device copy stale (the next kernel that binds the array uploads only them), or
 * `hostWroteAt(array, indices, n)` for scattered elements, whose words go up with their indices and
 * a scatter pass writes them in place. A table's compaction and growth (`hostMoved`, `hostCopied`)
 * are repeated on the device: its copy moves or is copied there, stale ranges with it; an array
 * rebuilt from pieces of another (`hostRearranged`: the following rows folded with a day's follows)
 * is copied together on the device by a pass, the host's new elements then going up as written.
 */
import type { TypedArray } from '../table.ts';
import type { Gpu } from './device.ts';
import { bindGroup, recordPass } from './dispatch.ts';
import type { Uploader } from './upload.ts';
import { packBytes, packOffsets, type Pack } from './gpuKernels.ts';
import { PIECE_WORDS } from './kernels.wgsl.ts';
import { IndexList } from '../indexList.ts';
import { ReadBuffers } from './readBuffers.ts';

interface Resident {
  buffer: GPUBuffer;
  /** Bytes of the array (the buffer is padded to a multiple of 4). */
  bytes: number;
  /**
   * Bytes [hostFrom, hostTo) of the host copy are out of date (a GPU kernel wrote the array; a
   * partial sync reads back a prefix); the host copy is valid when the range is empty.
   */
  hostFrom: number;
  hostTo: number;
  /**
   * Bytes [staleFrom, staleTo) of the device copy are out of date (word-aligned); the device copy
   * is valid when the range is empty. A whole upload or a ranged hostWrote widens it.
   */
  staleFrom: number;
  staleTo: number;
  /** Words of the device copy out of date besides that range, at scattered indices (hostWroteAt). */
  sparse?: IndexList;
  /**
   * The device copy is still to be made from pieces of another array's (hostRearranged): `words`
   * holds triples (destination word, source word, words), pieces of at most PIECE_WORDS; `src`
   * (held so that its finalizer keeps `from` alive) is the array whose buffer that is.
   */
  pieces?: { src: TypedArray; from: GPUBuffer; words: Uint32Array };
}

/**
 * The buffer of the packs that start with a given array (gpuKernels.ts `Pack`): which array each
 * member slot holds, at which word offset, and at which version.
 */
interface PackBuffer {
  buffer: GPUBuffer;
  bytes: number;
  members: TypedArray[];
  offsets: number[];
  versions: number[];
}

/** A compiled pass: its pipeline and group-0 layout (the scatter pass of hostWroteAt's words). */
export interface Pass {
  pipeline: GPUComputePipeline;
  layout: GPUBindGroupLayout;
}

const deviceValid = (r: Resident) => r.staleFrom >= r.staleTo;
const hostValid = (r: Resident) => r.hostFrom >= r.hostTo;
/** A device copy still to be made from pieces (hostRearranged) is instead taken as stale, to go up whole. */
function unpiece(r: Resident): void {
  if (!r.pieces) return;
  r.pieces.from.destroy();
  r.pieces = undefined;
  deviceStale(r);
}
function deviceStale(r: Resident, from = 0, to = r.bytes): void {
  // Whole words: an upload's last partial word is padded with zeros (upload.ts).
  r.staleFrom = Math.min(r.staleFrom, from & ~3);
  r.staleTo = Math.max(r.staleTo, Math.min(r.bytes, Math.ceil(to / 4) * 4));
}

export const isArray = (v: unknown): v is TypedArray => ArrayBuffer.isView(v) && !(v instanceof DataView);

export class Residency {
  private readonly gpu: Gpu;
  private readonly uploader: Uploader;
  private readonly count: (bytes: number, way: 'up' | 'down') => void;
  private readonly resident = new WeakMap<TypedArray, Resident>();
  /** Arrays whose only valid copy is on the device (strong references until synced). */
  private readonly deviceOnly = new Set<TypedArray>();
  /**
   * Writes seen per array (by a kernel on either side, or hostWrote): a pack refreshes a member
   * whose version moved since it last copied it.
   */
  private readonly versions = new WeakMap<TypedArray, number>();
  /**
   * Pack buffers, by their first member and then by shader: a kernel's packs of one call and the
   * next differ in their per-step members (the active list), so a pack starts with an array that
   * stays (a column) and the buffer is reused, growing when needed, with only the changed members
   * copied in. Two kernels whose packs start with the same column (act and postContent: interest)
   * get a buffer each: one kernel's members would overwrite the other's slots at other offsets,
   * which that kernel's record of its slots would still call fresh.
   */
  private readonly packs = new WeakMap<TypedArray, Map<string, PackBuffer>>();
  private readonly freed = new FinalizationRegistry<GPUBuffer>((b) => b.destroy());
  /** Mappable buffers for read-backs, kept between them. */
  readonly reads: ReadBuffers;
  /** Round trips of toHostAll so far (one per call that read anything back). */
  readRounds = 0;
  /** The scatter pass of hostWroteAt's words, set by the executor once `scattered` (it compiles it). */
  scatter?: Pass;
  /** hostWroteAt has been called: the executor should provide `scatter`. */
  scattered = false;
  /** The pass that copies hostRearranged's pieces, set by the executor once `rearranged`. */
  copyPieces?: Pass;
  /** hostRearranged has been called: the executor should provide `copyPieces`. */
  rearranged = false;
  /** Buffers of a call's scatter passes, destroyed once it is submitted (`submitted`). */
  private transient: GPUBuffer[] = [];

  /** `count`: bytes moved, for the executor's transfer figures. */
  constructor(gpu: Gpu, uploader: Uploader, count: (bytes: number, way: 'up' | 'down') => void) {
    this.gpu = gpu;
    this.uploader = uploader;
    this.count = count;
    this.reads = new ReadBuffers(gpu.device);
  }

  /** Arrays whose host copy is stale, for a full sync. */
  stale(): TypedArray[] {
    return [...this.deviceOnly];
  }

  /** Whether arr's host copy is valid (true for an array the device never saw). */
  hostValid(arr: TypedArray): boolean {
    const r = this.resident.get(arr);
    return !r || hostValid(r);
  }

  /** arr's device buffer and bytes, if it has one. */
  deviceCopy(arr: TypedArray): { buffer: GPUBuffer; bytes: number } | undefined {
    return this.resident.get(arr);
  }

  bump(arr: TypedArray): void {
    this.versions.set(arr, (this.versions.get(arr) ?? 0) + 1);
  }

  /**
   * The host wrote elements [from, to) of `arr` (all of it by default) outside the executor: that
   * part of its device copy is stale. The host may write outside the range a GPU kernel wrote (a
   * table's new rows past those a kernel counted in), but not inside it: the device stale range
   * that results must not reach the host's stale one, which only the device holds.
   */
  hostWrote(arr: TypedArray, from = 0, to = arr.length): void {
    this.bump(arr);
    const r = this.resident.get(arr);
    if (!r || to <= from) return;
    const B = arr.BYTES_PER_ELEMENT;
    const lo = Math.min(r.staleFrom, (from * B) & ~3);
    const hi = Math.max(r.staleTo, Math.min(r.bytes, Math.ceil((to * B) / 4) * 4));
    if (!hostValid(r) && lo < r.hostTo && r.hostFrom < hi) {
      throw new Error(`hostWrote: elements ${from}..${to} written on the host where (or next to where) the only valid copy is on the device, bytes ${r.hostFrom}..${r.hostTo} (call sync() first)`);
    }
    deviceStale(r, from * B, to * B);
  }

  /** The host wrote elements at[0..n) of `arr` outside the executor: those words of its device copy are stale. */
  hostWroteAt(arr: TypedArray, at: Int32Array, n: number): void {
    this.bump(arr);
    const r = this.resident.get(arr);
    if (!r || n === 0 || (r.staleFrom === 0 && r.staleTo >= r.bytes)) return;
    if (!hostValid(r)) throw new Error('hostWroteAt: the array was written on the host while its only valid copy was on the device (call sync() first)');
    const list = (r.sparse ??= new IndexList());
    const B = arr.BYTES_PER_ELEMENT;
    for (let k = 0; k < n; k++) {
      const i = at[k];
      // Every word of the element (two of an f64).
      if (i >= 0 && i < arr.length) for (let w = (i * B) >> 2; w <= ((i + 1) * B - 1) >> 2; w++) list.push(w);
    }
    // Past the array's size in index-value pairs (writes piling up while no kernel binds it), the
    // whole array goes up instead.
    if (8 * list.n >= r.bytes) {
      deviceStale(r);
      list.clear();
    }
    this.scattered = true;
  }

  /**
   * The host moved elements [from, from + count) of arr down to `to` (copyWithin, to < from) and
   * no longer uses those from to + count on (a compaction): the device copy moves the same way, by
   * a copy on the device submitted now, and both sides' stale ranges and scattered words move with
   * the elements (past them they are dropped). A move of whole words copies the last partial word
   * whole (its bytes past the elements are unused); a u8 or u16 column shifted by other than a
   * multiple of 4 bytes is taken as written on the host instead, which its host copy must then hold.
   */
  hostMoved(arr: TypedArray, from: number, to: number, count: number): void {
    this.bump(arr);
    const r = this.resident.get(arr);
    if (!r || count <= 0) return;
    unpiece(r);
    if (to >= from) throw new Error(`hostMoved: elements move down only (from ${from} to ${to})`);
    const B = arr.BYTES_PER_ELEMENT;
    const [s, t, L] = [from * B, to * B, count * B];
    const words = s % 4 === 0 && t % 4 === 0;
    // Bytes the device moves: whole words, or none.
    const M = words ? Math.ceil(L / 4) * 4 : 0;
    if (!words && !hostValid(r) && Math.min(t & ~3, s) < r.hostTo && r.hostFrom < Math.max(t + L, s + L)) {
      throw new Error(`hostMoved: elements ${from}..${from + count} moved on the host where the only valid copy is on the device, bytes ${r.hostFrom}..${r.hostTo} (call sync() first)`);
    }
    // Where an interval of bytes lies after the move: before the destination it stays, inside it
    // comes from the source, past it nothing is kept. One covering span.
    const moved = (a: number, b: number): [number, number] => {
      const parts = [
        [a, Math.min(b, t)],
        [Math.max(a, s) - (s - t), Math.min(b, s + M) - (s - t)],
      ].filter(([x, y]) => x < y);
      return parts.length ? [Math.min(...parts.map((p) => p[0])), Math.max(...parts.map((p) => p[1]))] : [r.bytes, 0];
    };
    if (M > 0) {
      // WebGPU copies only between different buffers: the moved copy goes to a new buffer, with
      // the bytes around it (a device copy of 2.5 GB takes milliseconds; sending it up, seconds).
      const { device } = this.gpu;
      const old = r.buffer;
      const buffer = device.createBuffer({ size: old.size, usage: old.usage });
      const enc = device.createCommandEncoder();
      if (t > 0) enc.copyBufferToBuffer(old, 0, buffer, 0, t);
      enc.copyBufferToBuffer(old, s, buffer, t, M);
      if (t + M < old.size) enc.copyBufferToBuffer(old, t + M, buffer, t + M, old.size - t - M);
      device.queue.submit([enc.finish()]);
      old.destroy();
      r.buffer = buffer;
      this.freed.register(arr, buffer);
    }
    if (!deviceValid(r)) [r.staleFrom, r.staleTo] = moved(r.staleFrom, r.staleTo);
    if (!hostValid(r)) {
      [r.hostFrom, r.hostTo] = moved(r.hostFrom, r.hostTo);
      if (hostValid(r)) this.deviceOnly.delete(arr);
    }
    if (r.sparse && r.sparse.n > 0) {
      // Scattered stale words move with their elements.
      const old = r.sparse;
      const list = new IndexList();
      const [sw, sEnd, tw] = [s >> 2, (s + M) >> 2, t >> 2];
      for (let k = 0; k < old.n; k++) {
        const w = old.at[k];
        if (w >= sw && w < sEnd) list.push(w - (sw - tw));
        else if (w < tw) list.push(w);
      }
      r.sparse = list;
    }
    if (M === 0) deviceStale(r, t, t + L);
  }

  /**
   * The host copied elements [0, count) of src into the new array dst, whose elements past count
   * are unused until written, and drops src: dst's device buffer is made now as a copy of src's on
   * the device (its stale ranges and scattered words carried over), if src has one.
   */
  hostCopied(dst: TypedArray, src: TypedArray, count: number): void {
    this.bump(dst);
    const rs = this.resident.get(src);
    if (!rs || this.resident.has(dst) || count <= 0) return;
    unpiece(rs);
    const rd = this.residentOf(dst);
    // Whole words: the bytes of the last one past count are unused.
    const M = Math.min(Math.ceil((count * src.BYTES_PER_ELEMENT) / 4) * 4, rs.buffer.size, rd.buffer.size);
    const enc = this.gpu.device.createCommandEncoder();
    enc.copyBufferToBuffer(rs.buffer, 0, rd.buffer, 0, M);
    this.gpu.device.queue.submit([enc.finish()]);
    [rd.staleFrom, rd.staleTo] = [rd.bytes, 0];
    if (!deviceValid(rs) && rs.staleFrom < M) deviceStale(rd, rs.staleFrom, Math.min(rs.staleTo, M));
    if (!hostValid(rs) && rs.hostFrom < M) {
      [rd.hostFrom, rd.hostTo] = [rs.hostFrom, Math.min(rs.hostTo, M)];
      this.deviceOnly.add(dst);
    }
    // src is superseded: a full sync need not read it back, nor keep it alive.
    this.deviceOnly.delete(src);
    if (rs.sparse && rs.sparse.n > 0) {
      const list = (rd.sparse = new IndexList());
      for (let k = 0; k < rs.sparse.n; k++) if (rs.sparse.at[k] < M >> 2) list.push(rs.sparse.at[k]);
    }
  }

  /**
   * The host made the new array dst from pieces of src (Executor.hostRearranged; triples of
   * elements) and drops src: dst's device copy will be made from src's by a pass (flushPieces, at
   * the first kernel that binds dst), and src's buffer goes with it. The host announces the rest of
   * dst after this. Where src has no device copy, dst simply goes up whole at its first kernel, as
   * it does where the pass cannot be used: elements other than 4 or 8 bytes, a device copy of src
   * not up to date, or an array past a storage binding.
   */
  hostRearranged(dst: TypedArray, src: TypedArray, pieces: ArrayLike<number>): void {
    this.bump(dst);
    const rs = this.resident.get(src);
    if (!rs || dst === src || this.resident.has(dst)) return;
    if (!hostValid(rs)) throw new Error('hostRearranged: the host read an array whose only valid copy was on the device (call sync() first)');
    const B = src.BYTES_PER_ELEMENT;
    const w = B / 4;
    let count = 0;
    for (let k = 0; k + 2 < pieces.length; k += 3) {
      const [d, s, n] = [pieces[k], pieces[k + 1], pieces[k + 2]];
      if (n < 0 || d < 0 || s < 0 || d + n > dst.length || s + n > src.length) throw new Error(`hostRearranged: piece ${k / 3} (${d}, ${s}, ${n}) lies outside the arrays (${dst.length} and ${src.length} elements)`);
      count += Math.ceil((n * w) / PIECE_WORDS);
    }
    this.resident.delete(src);
    const binding = this.gpu.limits.maxStorageBufferBindingSize;
    if (B % 4 !== 0 || dst.BYTES_PER_ELEMENT !== B || !deviceValid(rs) || rs.pieces || (rs.sparse && rs.sparse.n > 0) || rs.buffer.size > binding || dst.byteLength > binding) {
      unpiece(rs);
      rs.buffer.destroy();
      return;
    }
    const words = new Uint32Array(3 * count);
    let at = 0;
    for (let k = 0; k + 2 < pieces.length; k += 3) {
      const [d, s, n] = [pieces[k], pieces[k + 1], pieces[k + 2]];
      for (let o = 0; o < n * w; o += PIECE_WORDS) {
        words[at++] = d * w + o;
        words[at++] = s * w + o;
        words[at++] = Math.min(PIECE_WORDS, n * w - o);
      }
    }
    const rd = this.residentOf(dst);
    [rd.staleFrom, rd.staleTo] = [rd.bytes, 0];
    rd.pieces = { src, from: rs.buffer, words };
    this.rearranged = true;
  }

  /** Elements [from, to) of a host table (rewritten by the host at will) go up at the next call that binds it. */
  tableStale(table: TypedArray, from: number, to: number): void {
    const r = this.resident.get(table);
    if (r && to > from) deviceStale(r, from * table.BYTES_PER_ELEMENT, to * table.BYTES_PER_ELEMENT);
  }

  /** A CPU kernel wrote arr: its host copy is the valid one. */
  wroteOnHost(arr: TypedArray): void {
    this.bump(arr);
    const r = this.resident.get(arr);
    if (r) deviceStale(r);
  }

  /**
   * A GPU kernel wrote elements [from, to) of arr (all of it by default; it has a device buffer):
   * there its device copy is the valid one. The host's stale range is one span, so it grows to
   * cover both this one and any it had.
   */
  wroteOnDevice(arr: TypedArray, from = 0, to = arr.length): void {
    const r = this.resident.get(arr)!;
    const B = arr.BYTES_PER_ELEMENT;
    const lo = (from * B) & ~3;
    const hi = Math.min(r.bytes, Math.ceil((to * B) / 4) * 4);
    this.bump(arr);
    if (hi <= lo) return;
    const valid = hostValid(r);
    r.hostFrom = valid ? lo : Math.min(r.hostFrom, lo);
    r.hostTo = valid ? hi : Math.max(r.hostTo, hi);
    this.deviceOnly.add(arr);
  }

  /** Whether arr's device copy is valid (false for an array the device never saw). */
  deviceValid(arr: TypedArray): boolean {
    const r = this.resident.get(arr);
    return !!r && deviceValid(r) && !r.pieces && !(r.sparse && r.sparse.n > 0);
  }

  /** Destroys the buffers of the scatter passes recorded for a call, once it is submitted. */
  submitted(): void {
    for (const b of this.transient) b.destroy();
    this.transient = [];
  }

  private residentOf(arr: TypedArray): Resident {
    let r = this.resident.get(arr);
    if (!r) {
      const size = Math.max(16, Math.ceil(arr.byteLength / 4) * 4);
      const buffer = this.gpu.device.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
      r = { buffer, bytes: arr.byteLength, hostFrom: arr.byteLength, hostTo: 0, staleFrom: 0, staleTo: arr.byteLength };
      this.resident.set(arr, r);
      this.freed.register(arr, buffer);
    }
    return r;
  }

  /** arr's device buffer, brought up to date: its stale range uploaded, its scattered words written by a pass recorded on `enc`. */
  async toDevice(arr: TypedArray, enc: GPUCommandEncoder): Promise<GPUBuffer> {
    const r = this.residentOf(arr);
    if (r.pieces) this.flushPieces(r);
    if (r.sparse && r.sparse.n > 0) this.flushSparse(arr, r, enc);
    if (!deviceValid(r)) {
      const part = new Uint8Array(arr.buffer, arr.byteOffset + r.staleFrom, r.staleTo - r.staleFrom);
      await this.uploader.write(r.buffer, r.staleFrom, part);
      this.count(part.byteLength, 'up');
      r.staleFrom = r.bytes;
      r.staleTo = 0;
    }
    return r.buffer;
  }

  /**
   * Reads back the stale part of each array's host copy (of an entry with `upTo`, only below that
   * byte) in one round trip: every copy in one submission, their mappings awaited together (one
   * round trip each was ~1.3 ms on the H100, and apply reads back five arrays at once). Returns
   * the bytes read.
   */
  async toHostAll(list: ReadonlyArray<{ array: TypedArray; upTo?: number }>): Promise<number> {
    // One copy per array, as far as any entry asks.
    const want = new Map<TypedArray, number>();
    for (const { array, upTo = Infinity } of list) want.set(array, Math.max(want.get(array) ?? 0, upTo));
    const jobs: Array<{ arr: TypedArray; r: Resident; from: number; to: number; size: number; read: GPUBuffer }> = [];
    const enc = this.gpu.device.createCommandEncoder();
    for (const [arr, upTo] of want) {
      const r = this.resident.get(arr);
      if (!r || hostValid(r)) continue;
      const from = r.hostFrom;
      const to = Math.min(r.hostTo, Math.ceil(upTo / 4) * 4);
      if (to <= from) continue;
      // Whole words, within the buffer (its size and the offset are multiples of 4).
      const size = Math.min(Math.max(16, Math.ceil((to - from) / 4) * 4), r.buffer.size - from);
      const read = this.reads.take(size);
      enc.copyBufferToBuffer(r.buffer, from, read, 0, size);
      jobs.push({ arr, r, from, to, size, read });
    }
    if (jobs.length === 0) return 0;
    this.gpu.device.queue.submit([enc.finish()]);
    this.readRounds++;
    try {
      await Promise.all(jobs.map((j) => j.read.mapAsync(GPUMapMode.READ, 0, j.size)));
    } catch (err) {
      for (const j of jobs) j.read.destroy();
      throw err;
    }
    let bytes = 0;
    for (const j of jobs) {
      new Uint8Array(j.arr.buffer, j.arr.byteOffset + j.from, j.to - j.from).set(new Uint8Array(j.read.getMappedRange(0, j.size), 0, j.to - j.from));
      j.read.unmap();
      this.reads.give(j.read);
      j.r.hostFrom = j.to;
      if (hostValid(j.r)) this.deviceOnly.delete(j.arr);
      bytes += j.to - j.from;
    }
    return bytes;
  }

  /**
   * Brings r's scattered stale words up to date: their indices and values go up in one buffer and
   * a scatter pass (recorded on `enc`, before the kernel's) writes them. Where that would move more
   * bytes than the range the words span, or the array is past a storage binding, the span goes up
   * as a range instead.
   */
  private flushSparse(arr: TypedArray, r: Resident, enc: GPUCommandEncoder): void {
    const list = r.sparse!;
    const n = list.n;
    list.clear();
    let lo = Infinity;
    let hi = -1;
    for (let k = 0; k < n; k++) {
      const w = list.at[k];
      if (w < lo) lo = w;
      if (w > hi) hi = w;
    }
    if (!this.scatter || 8 * n >= 4 * (hi - lo + 1) || r.bytes > this.gpu.limits.maxStorageBufferBindingSize || (arr.byteOffset & 3) !== 0) {
      deviceStale(r, lo * 4, (hi + 1) * 4);
      return;
    }
    const words = new Uint32Array(arr.buffer, arr.byteOffset, arr.byteLength >> 2);
    // A last partial word as the device holds it: the array's bytes, then zeros (an upload's padding).
    const tail = new Uint8Array(4);
    tail.set(new Uint8Array(arr.buffer, arr.byteOffset + words.length * 4, arr.byteLength - words.length * 4));
    const tailWord = new Uint32Array(tail.buffer)[0];
    const iv = new Uint32Array(1 + 2 * n);
    iv[0] = n;
    for (let k = 0; k < n; k++) {
      const w = list.at[k];
      iv[1 + k] = w;
      iv[1 + n + k] = w < words.length ? words[w] : tailWord;
    }
    const { device } = this.gpu;
    const buf = device.createBuffer({ size: iv.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(buf, 0, iv);
    this.transient.push(buf);
    this.count(iv.byteLength, 'up');
    const groups = Math.min(Math.ceil(n / 64), this.gpu.limits.maxComputeWorkgroupsPerDimension);
    recordPass(enc, this.scatter.pipeline, bindGroup(device, this.scatter.layout, [buf, r.buffer]), { x: groups, y: 1 });
  }

  /**
   * Makes r's device copy from the pieces of hostRearranged, in a submission of its own (so before
   * the uploads and the scatter pass of the host's writes since), then frees the source's buffer.
   * Without the pass (the executor did not compile it) the array goes up whole.
   */
  private flushPieces(r: Resident): void {
    const { from, words } = r.pieces!;
    r.pieces = undefined;
    const { device } = this.gpu;
    if (!this.copyPieces) deviceStale(r);
    else if (words.length > 0) {
      const buf = device.createBuffer({ size: words.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
      device.queue.writeBuffer(buf, 0, words);
      this.count(words.byteLength, 'up');
      const n = words.length / 3;
      const x = Math.min(n, this.gpu.limits.maxComputeWorkgroupsPerDimension);
      const enc = device.createCommandEncoder();
      recordPass(enc, this.copyPieces.pipeline, bindGroup(device, this.copyPieces.layout, [buf, from, r.buffer]), { x, y: Math.ceil(n / x) });
      device.queue.submit([enc.finish()]);
      buf.destroy();
    }
    from.destroy();
  }

  /**
   * The buffer of a pack, its members brought up to date: a member slot that held another array
   * or offset, or an array whose version moved since it was copied, is copied in from the array's
   * own device buffer (recorded on `enc`, before the kernel's pass), that buffer first brought up
   * to date (so a member the host appended to uploads only the new part); a host table (which the
   * host may have rewritten unannounced) is uploaded from the host at every call.
   */
  async packBuffer(x: Pack, shader: string, hostTables: ReadonlyMap<TypedArray, readonly [number, number]>, enc: GPUCommandEncoder): Promise<GPUBuffer> {
    const first = x.pack[0];
    const bytes = Math.max(16, packBytes(x.pack));
    let byShader = this.packs.get(first);
    if (!byShader) this.packs.set(first, (byShader = new Map()));
    let pb = byShader.get(shader);
    if (!pb || pb.bytes < bytes) {
      pb?.buffer.destroy();
      const buffer = this.gpu.device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
      pb = { buffer, bytes, members: [], offsets: [], versions: [] };
      byShader.set(shader, pb);
      this.freed.register(first, buffer);
    }
    const offsets = packOffsets(x.pack);
    for (let i = 0; i < x.pack.length; i++) {
      const m = x.pack[i];
      const v = this.versions.get(m) ?? 0;
      const size = Math.ceil(m.byteLength / 4) * 4;
      const host = hostTables.get(m);
      const fresh = pb.members[i] === m && pb.offsets[i] === offsets[i] && pb.versions[i] === v && !host;
      if (fresh || size === 0) continue;
      if (host) {
        // Whole words: the last partial one is padded with zeros.
        const from = (host[0] * m.BYTES_PER_ELEMENT) & ~3;
        const to = Math.min(m.byteLength, Math.ceil((host[1] * m.BYTES_PER_ELEMENT) / 4) * 4);
        if (to > from) {
          await this.uploader.write(pb.buffer, offsets[i] * 4 + from, new Uint8Array(m.buffer, m.byteOffset + from, to - from));
          this.count(to - from, 'up');
        }
      } else enc.copyBufferToBuffer(await this.toDevice(m, enc), 0, pb.buffer, offsets[i] * 4, size);
      [pb.members[i], pb.offsets[i], pb.versions[i]] = [m, offsets[i], v];
    }
    return pb.buffer;
  }
}
