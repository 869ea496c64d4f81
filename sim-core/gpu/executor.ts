/**
 * The `webgpu` backend's executor: runs the kernels that have a WGSL version (gpuKernels.ts) on
 * the device and every other kernel on the CPU executor it wraps, keeping each array where it was
 * last written.
 *
 * Residency: every array a GPU kernel touches gets a device buffer the first time, uploaded from
 * the host; it stays there across steps. Each array has two flags, host copy valid and device copy
 * valid: a GPU kernel uploads the arguments whose device copy is stale and leaves its outputs valid
 * on the device only; a CPU kernel first reads back the arguments whose host copy is stale and
 * leaves its outputs valid on the host only. So the CSR is uploaded once per graph, and a voter
 * step's scratch arrays never cross the bus.
 *
 * Packs (gpuKernels.ts `Pack`: read-only arrays bound as one buffer, for kernels that read more
 * arrays than an adapter's storage bindings allow) are copies: each array carries a version, moved
 * by every write a kernel (on either side) or hostWrote reports, and a pack re-copies a member
 * whose version moved, from the device when only the device copy is valid.
 *
 * The contract with code outside the executor: `sync()` makes every array's host copy valid (the
 * runner calls it before it reads agent columns for checkpoints and at the end of a run), and
 * `capture()` gives copies of some arrays as they stand, read back while later kernels run (the
 * runner's snapshots); `sync(arrays)` reads back only some arrays, or their first elements (the
 * apply phase: the rows of the step's active users). Arrays are written on the host only before
 * their first kernel, or between kernels through `hostWrote(array, from, to)`, which marks those
 * elements of the device copy stale: the next kernel that binds the array uploads only them (the
 * post table's columns, appended to every step, go up a step's rows at a time), or through
 * `hostWroteAt(array, indices, n)` for scattered elements, whose words go up with their indices
 * and a scatter pass writes them in place (the counters apply raises at random rows). A call's
 * `hostTables`, parameter tables the host rewrites at will, are uploaded at every call instead
 * (whole, or the elements the call names). Phases that write columns in plain JavaScript after a
 * GPU kernel has used them must say so; the parity tests (byte-identical Arrow files on both
 * backends) catch a phase that does not.
 */
import type { AnyKernel, CallArgs, Kernel, KernelSpec } from '../kernel.ts';
import { releaseArrays, sumPartials, type Executor, type Queued, type RunOptions } from '../exec.ts';
import type { TypedArray } from '../table.ts';
import type { Gpu } from './device.ts';
import { bindGroup, grid, recordPass } from './dispatch.ts';
import { PassClock } from './passClock.ts';
import { Uploader } from './upload.ts';
import { gpuKernelFor, isPack, isSplit, packBytes, packOffsets, type GpuCall, type Pack } from './gpuKernels.ts';
import { SCATTER_WORDS_WGSL } from './kernels.wgsl.ts';
import { IndexList } from '../indexList.ts';

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
}

const deviceValid = (r: Resident) => r.staleFrom >= r.staleTo;
const hostValid = (r: Resident) => r.hostFrom >= r.hostTo;
function deviceStale(r: Resident, from = 0, to = r.bytes): void {
  // Whole words: an upload's last partial word is padded with zeros (upload.ts).
  r.staleFrom = Math.min(r.staleFrom, from & ~3);
  r.staleTo = Math.max(r.staleTo, Math.min(r.bytes, Math.ceil(to / 4) * 4));
}

/** A compiled shader with its group-0 layout, and the buffers its calls reuse. */
interface Program {
  id: number;
  pipeline: GPUComputePipeline;
  layout: GPUBindGroupLayout;
  uniform?: GPUBuffer;
  result?: GPUBuffer;
}

/** Bind groups kept (sim-core/gpu/executor.ts `bindGroups`): a step's few dozen, many times over. */
const BIND_GROUPS = 1024;

const isArray = (v: unknown): v is TypedArray => ArrayBuffer.isView(v) && !(v instanceof DataView);

export class GpuExecutor implements Executor {
  readonly threads: number;
  private readonly resident = new WeakMap<TypedArray, Resident>();
  /** Arrays whose only valid copy is on the device (strong references until synced). */
  private readonly deviceOnly = new Set<TypedArray>();
  private readonly programs = new Map<string, Program>();
  /**
   * Bind groups by program and bound buffers (ids, offsets, sizes), the least recently used
   * dropped past BIND_GROUPS: a step binds the same buffers every time, and creating a bind group
   * (and a uniform buffer) for each call was most of a small kernel's host time. A buffer's id is
   * never reused, so a group of a destroyed buffer is only ever dropped.
   */
  private readonly bindGroups = new Map<string, GPUBindGroup>();
  private readonly bufferIds = new WeakMap<GPUBuffer, number>();
  private nextBufferId = 0;
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
  /** Kernels run on the device and on the CPU so far, by name (for tests and the bench). */
  readonly counts = { gpu: new Map<string, number>(), cpu: new Map<string, number>() };
  /**
   * Bytes copied between host and device so far, by the kernel that needed them: `up` the arrays,
   * pack members and host tables a GPU kernel uploaded, `down` what a CPU kernel read back and the
   * GPU kernel's result words; what sync() reads back is counted under `(sync)`, capture() (the
   * runner's snapshots) not at all.
   */
  readonly transfers = new Map<string, { up: number; down: number }>();
  /** The kernel whose transfers are being counted. */
  private current = '';
  /**
   * With `timeKernels`: milliseconds from encoding each GPU kernel to the queue finishing it, by
   * name. Waiting for every kernel serialises the queue, so the bench times steps without it.
   */
  readonly kernelMs = new Map<string, number[]>();
  /**
   * With `timeKernels` on a device with 'timestamp-query': milliseconds between the start and the
   * end of each GPU kernel's pass on the device's clock, by name (no host work, no queue latency).
   */
  readonly kernelDeviceMs = new Map<string, number[]>();
  /** timeKernels' device clock, made at the first dispatch where the device has timestamps. */
  private clock?: PassClock;
  /** Calls of capture() so far (tests check that snapshots overlap the next step). */
  captures = 0;
  /** The scatter pass of hostWroteAt's words, compiled at the first call after one. */
  private scatter?: Program;
  private scattered = false;
  /** Buffers of a call's scatter passes, destroyed once it is submitted. */
  private transient: GPUBuffer[] = [];
  /** Host-to-device copies (upload.ts). */
  private readonly uploader: Uploader;

  constructor(
    readonly gpu: Gpu,
    private readonly cpu: Executor,
    private readonly opts: { timeKernels?: boolean; maxBindingBytes?: number } = {},
  ) {
    this.threads = cpu.threads;
    this.uploader = new Uploader(gpu.device);
  }

  async run<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<number[][]> {
    const call = this.callOf(kernel, args, rows);
    if (!call) return this.onCpu(kernel, args, rows, opts);
    return [await (await this.submit(kernel, call)).sums];
  }

  async reduce<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<number[]> {
    return sumPartials(await this.run(kernel, args, rows, opts));
  }

  /** On the device: the result words are copied for reading in queue order and read back while later kernels run. */
  async queueReduce<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<Queued> {
    const call = this.callOf(kernel, args, rows);
    if (!call) return { sums: Promise.resolve(sumPartials(await this.onCpu(kernel, args, rows, opts))) };
    return this.submit(kernel, call);
  }

  private callOf<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number): GpuCall | undefined {
    return rows > 0 ? gpuKernelFor(kernel as unknown as AnyKernel, args as Record<string, unknown>, rows, this.gpu, this.opts.maxBindingBytes) : undefined;
  }

  private async submit<S extends KernelSpec>(kernel: Kernel<S>, call: GpuCall): Promise<Queued> {
    const name = (kernel as unknown as AnyKernel).name;
    bump(this.counts.gpu, name);
    const t0 = performance.now();
    this.current = name;
    const queued = await this.dispatch(call);
    if (call.resultWords) this.count(call.resultWords * 4, 'down');
    if (this.opts.timeKernels) {
      await this.gpu.device.queue.onSubmittedWorkDone();
      push(this.kernelMs, name, performance.now() - t0);
      if (this.clock) push(this.kernelDeviceMs, name, await this.clock.elapsedMs());
    }
    return queued;
  }

  /**
   * Reads back every array whose host copy is stale, or those of `arrays`; an entry with a length
   * reads back only its first `length` elements (the rest stays stale on the host).
   */
  async sync(arrays?: ReadonlyArray<TypedArray | { array: TypedArray; length: number }>): Promise<void> {
    this.current = '(sync)';
    for (const x of arrays ?? [...this.deviceOnly]) {
      const bytes = isArray(x) ? await this.toHost(x) : await this.toHost(x.array, x.length * x.array.BYTES_PER_ELEMENT);
      this.count(bytes, 'down');
    }
  }

  /**
   * Copies of `arrays` as they stand now. Arrays whose only valid copy is on the device are copied
   * on the device into staging buffers, in queue order, so later kernels do not change them; the
   * promise resolves once the copies are mapped, while the caller goes on submitting kernels. The
   * rest are copied from the host at once. Their residency does not change.
   */
  async capture(arrays: readonly TypedArray[]): Promise<TypedArray[]> {
    const { device } = this.gpu;
    const enc = device.createCommandEncoder();
    const staged: Array<{ read: GPUBuffer; bytes: number } | TypedArray> = arrays.map((arr) => {
      const r = this.resident.get(arr);
      if (!r || hostValid(r)) return arr.slice();
      const size = Math.max(16, Math.ceil(r.bytes / 4) * 4);
      const read = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      enc.copyBufferToBuffer(r.buffer, 0, read, 0, size);
      return { read, bytes: r.bytes };
    });
    device.queue.submit([enc.finish()]);
    this.captures++;
    return Promise.all(
      staged.map(async (x, i) => {
        if (isArray(x)) return x;
        await x.read.mapAsync(GPUMapMode.READ);
        const Ctor = arrays[i].constructor as new (b: ArrayBuffer) => TypedArray;
        const copy = new Ctor(x.read.getMappedRange().slice(0, x.bytes));
        x.read.unmap();
        x.read.destroy();
        return copy;
      }),
    );
  }

  /** The host wrote elements [from, to) of `arr` (all of it by default) outside the executor: that part of its device copy is stale. */
  hostWrote(arr: TypedArray, from = 0, to = arr.length): void {
    this.bump(arr);
    const r = this.resident.get(arr);
    if (!r) return;
    if (!hostValid(r)) throw new Error('hostWrote: the array was written on the host while its only valid copy was on the device (call sync() first)');
    if (to > from) deviceStale(r, from * arr.BYTES_PER_ELEMENT, to * arr.BYTES_PER_ELEMENT);
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
      if (i >= 0 && i < arr.length) list.push((i * B) >> 2);
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

  private count(bytes: number, way: 'up' | 'down'): void {
    if (bytes === 0) return;
    let t = this.transfers.get(this.current);
    if (!t) this.transfers.set(this.current, (t = { up: 0, down: 0 }));
    t[way] += bytes;
  }

  private bump(arr: TypedArray): void {
    this.versions.set(arr, (this.versions.get(arr) ?? 0) + 1);
  }

  /** The CPU pool's release (device buffers of dropped arrays are destroyed by their finalizer). */
  release(): Promise<void> {
    return releaseArrays(this.cpu);
  }

  async close(): Promise<void> {
    this.uploader.destroy();
    await this.cpu.close();
    this.gpu.close();
  }

  private async onCpu<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<number[][]> {
    const k = kernel as unknown as AnyKernel;
    this.current = k.name;
    for (const v of Object.values(args as object)) if (isArray(v)) this.count(await this.toHost(v), 'down');
    const out = await this.cpu.run(kernel, args, rows, opts);
    for (const name of opts?.announced ? [] : Object.keys(k.spec.writes)) {
      const v = (args as Record<string, unknown>)[name];
      if (!isArray(v)) continue;
      this.bump(v);
      const r = this.resident.get(v);
      if (r) deviceStale(r);
    }
    bump(this.counts.cpu, k.name);
    return out;
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
  private async toDevice(arr: TypedArray, enc: GPUCommandEncoder): Promise<GPUBuffer> {
    const r = this.residentOf(arr);
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

  /** Reads back the stale part of arr's host copy (only below byte `upTo` if given); returns the bytes read. */
  private async toHost(arr: TypedArray, upTo = Infinity): Promise<number> {
    const r = this.resident.get(arr);
    if (!r || hostValid(r)) return 0;
    const from = r.hostFrom;
    const to = Math.min(r.hostTo, Math.ceil(upTo / 4) * 4);
    if (to <= from) return 0;
    await this.readBack(r.buffer, to - from, from, new Uint8Array(arr.buffer, arr.byteOffset + from, to - from));
    r.hostFrom = to;
    if (hostValid(r)) this.deviceOnly.delete(arr);
    return to - from;
  }

  /**
   * `bytes` bytes of `src` from byte `offset` (a multiple of 4), read back into `into` (a new array
   * by default), straight from the mapped range.
   */
  private async readBack(src: GPUBuffer, bytes: number, offset = 0, into: Uint8Array<ArrayBufferLike> = new Uint8Array(bytes)): Promise<Uint8Array<ArrayBufferLike>> {
    const { device } = this.gpu;
    // Whole words, within the buffer (its size and offset are multiples of 4).
    const size = Math.min(Math.max(16, Math.ceil(bytes / 4) * 4), src.size - offset);
    const read = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(src, offset, read, 0, size);
    device.queue.submit([enc.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    into.set(new Uint8Array(read.getMappedRange(), 0, bytes));
    read.unmap();
    read.destroy();
    return into;
  }

  /**
   * The buffer of a pack, its members brought up to date: a member slot that held another array
   * or offset, or an array whose version moved since it was copied, is copied in from the array's
   * own device buffer (recorded on `enc`, before the kernel's pass), that buffer first brought up
   * to date (so a member the host appended to uploads only the new part); a host table (which the
   * host may have rewritten unannounced) is uploaded from the host at every call.
   */
  private async packBuffer(x: Pack, shader: string, hostTables: ReadonlyMap<TypedArray, readonly [number, number]>, enc: GPUCommandEncoder): Promise<GPUBuffer> {
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

  /** The program of a shader, compiled once; a shader that does not compile throws here. */
  private async program(shader: string): Promise<Program> {
    let p = this.programs.get(shader);
    if (!p) {
      const { device } = this.gpu;
      device.pushErrorScope('validation');
      const module = device.createShaderModule({ code: shader });
      const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
      const err = await device.popErrorScope();
      if (err) throw new Error(`a WGSL kernel failed to compile: ${err.message}`);
      p = { id: this.programs.size, pipeline, layout: pipeline.getBindGroupLayout(0) };
      this.programs.set(shader, p);
    }
    return p;
  }

  /**
   * The program's uniform buffer holding `words`. One per program, rewritten by every call: a
   * queue write is ordered after the submissions before it, so a queued pass reads its own words.
   */
  private uniforms(p: Program, words: Uint32Array): GPUBuffer {
    if (!p.uniform || p.uniform.size < words.byteLength) {
      p.uniform?.destroy();
      p.uniform = this.gpu.device.createBuffer({ size: words.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    }
    this.gpu.device.queue.writeBuffer(p.uniform, 0, words);
    return p.uniform;
  }

  private bindGroupOf(p: Program, buffers: ReadonlyArray<GPUBuffer | GPUBufferBinding>): GPUBindGroup {
    let key = String(p.id);
    for (const b of buffers) {
      const buffer = 'buffer' in b ? b.buffer : b;
      let id = this.bufferIds.get(buffer);
      if (id === undefined) this.bufferIds.set(buffer, (id = this.nextBufferId++));
      key += 'buffer' in b ? ` ${id}:${b.offset}:${b.size}` : ` ${id}`;
    }
    let group = this.bindGroups.get(key);
    if (group) this.bindGroups.delete(key);
    else group = bindGroup(this.gpu.device, p.layout, buffers);
    this.bindGroups.set(key, group);
    if (this.bindGroups.size > BIND_GROUPS) this.bindGroups.delete(this.bindGroups.keys().next().value!);
    return group;
  }

  /**
   * One compute pass of `call`: bindings 0 the uniform words, then its arrays, then its result
   * buffer, whose copy for reading is queued right after the pass; resolves once both are submitted.
   */
  private async dispatch(call: GpuCall): Promise<Queued> {
    const { device } = this.gpu;
    const g = grid(call.gridRows, this.gpu.limits.maxComputeWorkgroupsPerDimension);
    const words = [call.gridRows, g.stride, ...call.params];
    const uniform = new Uint32Array(Math.ceil(words.length / 4) * 4);
    uniform.set(words);
    const prog = await this.program(call.shader);
    if (this.scattered && !this.scatter) this.scatter = await this.program(SCATTER_WORDS_WGSL);
    const buffers: Array<GPUBuffer | GPUBufferBinding> = [this.uniforms(prog, uniform)];
    const hostTables = new Map<TypedArray, readonly [number, number]>();
    for (const t of call.hostTables ?? []) {
      const [table, from, to] = isArray(t) ? [t, 0, t.length] : [t.table, t.from, t.to];
      hostTables.set(table, [from, to]);
      const r = this.resident.get(table);
      if (r && to > from) deviceStale(r, from * table.BYTES_PER_ELEMENT, to * table.BYTES_PER_ELEMENT);
    }
    // Device-side copies into packs are recorded before the pass.
    const enc = device.createCommandEncoder();
    for (const x of call.arrays) {
      if (isPack(x)) {
        buffers.push(await this.packBuffer(x, call.shader, hostTables, enc));
        continue;
      }
      if (!isSplit(x)) {
        buffers.push(await this.toDevice(x, enc));
        continue;
      }
      // One buffer, bound as x.parts ranges of its first x.bytes (whole words); unused ranges repeat the first.
      const buffer = await this.toDevice(x.split, enc);
      const bytes = Math.max(4, Math.ceil(Math.min(x.bytes ?? x.split.byteLength, x.split.byteLength) / 4) * 4);
      for (let i = 0; i < x.parts; i++) {
        const offset = i * x.partBytes < bytes ? i * x.partBytes : 0;
        buffers.push({ buffer, offset, size: Math.min(x.partBytes, bytes - offset) });
      }
    }
    // The result words: the program's buffer, cleared before the pass (its last copy for reading
    // was queued before this clear).
    let result: GPUBuffer | undefined;
    if (call.resultWords) {
      const size = Math.max(16, call.resultWords * 4);
      if (!prog.result || prog.result.size < size) {
        prog.result?.destroy();
        prog.result = device.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
      }
      result = prog.result;
      enc.clearBuffer(result);
      buffers.push(result);
    }
    if (this.opts.timeKernels && this.gpu.timestamps) this.clock ??= new PassClock(device);
    recordPass(enc, prog.pipeline, this.bindGroupOf(prog, buffers), g, this.clock?.querySet);
    this.clock?.record(enc);
    device.queue.submit([enc.finish()]);
    for (const b of this.transient) b.destroy();
    this.transient = [];
    for (const arr of call.writes) {
      const r = this.resident.get(arr)!;
      r.hostFrom = 0;
      r.hostTo = r.bytes;
      this.deviceOnly.add(arr);
      this.bump(arr);
    }
    if (!result) return { sums: Promise.resolve([]) };
    // readBack submits its copy before it first waits.
    const sums = this.readBack(result, call.resultWords! * 4).then((bytes) => {
      const out = Array.from(new Uint32Array(bytes.buffer, 0, call.resultWords!));
      return call.finish ? call.finish(out) : out;
    });
    sums.catch(() => undefined); // a failure surfaces where the sums are awaited
    return { sums };
  }
}

function bump(m: Map<string, number>, name: string): void {
  m.set(name, (m.get(name) ?? 0) + 1);
}

function push(m: Map<string, number[]>, name: string, x: number): void {
  const xs = m.get(name);
  if (xs) xs.push(x);
  else m.set(name, [x]);
}
