/**
 * The `webgpu` backend's executor: runs the kernels that have a WGSL version (gpuKernels.ts) on
 * the device and every other kernel on the CPU executor it wraps, keeping each array where it was
 * last written.
 *
 * Residency (residency.ts): every array a GPU kernel touches gets a device buffer, kept across
 * steps; each array's valid copy is on the side that last wrote it, and a kernel on the other side
 * first copies what it reads across. So the CSR is uploaded once per graph, and a voter step's
 * scratch arrays never cross the bus. Packs (read-only arrays bound as one buffer) are copies
 * refreshed when a member changes.
 *
 * The contract with code outside the executor: `sync()` makes every array's host copy valid (the
 * runner calls it before it reads agent columns for checkpoints and at the end of a run), and
 * `capture()` gives copies of some arrays as they stand, read back while later kernels run (the
 * runner's snapshots); `sync(arrays)` reads back only some arrays, or their first elements (the
 * apply phase: the rows of the step's active users). Arrays are written on the host only before
 * their first kernel, or between kernels through `hostWrote(array, from, to)` (outside the span a
 * GPU kernel left valid on the device only: the impression counts' live rows), which marks those
 * elements of the device copy stale: the next kernel that binds the array uploads only them (the
 * post table's columns, appended to every step, go up a step's rows at a time), or through
 * `hostWroteAt(array, indices, n)` for scattered elements, whose words go up with their indices
 * and a scatter pass writes them in place (the counters apply raises at random rows). A table's
 * compaction and growth, and an array rebuilt from pieces of another (the following rows at the
 * daily rebuild), are repeated on the device (`hostMoved`, `hostCopied`, `hostRearranged`). A call's
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
import { Residency, isArray } from './residency.ts';
import { Uploader } from './upload.ts';
import { gpuKernelFor, isPack, isSplit, type GpuCall } from './gpuKernels.ts';
import { COPY_PIECES_WGSL, SCATTER_WORDS_WGSL } from './kernels.wgsl.ts';

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

export class GpuExecutor implements Executor {
  readonly gpu: Gpu;
  private readonly cpu: Executor;
  private readonly opts: { timeKernels?: boolean; maxBindingBytes?: number };
  readonly threads: number;
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
  /** Read-back round trips so far: a sync or a CPU kernel's arguments take one, however many arrays. */
  get readRounds(): number {
    return this.res.readRounds;
  }
  /** Host-to-device copies (upload.ts). */
  private readonly uploader: Uploader;
  /** Which copy of each array is valid, the device buffers and the packs. */
  private readonly res: Residency;

  constructor(gpu: Gpu, cpu: Executor, opts: { timeKernels?: boolean; maxBindingBytes?: number } = {}) {
    this.gpu = gpu;
    this.cpu = cpu;
    this.opts = opts;
    this.threads = cpu.threads;
    this.uploader = new Uploader(gpu.device);
    this.res = new Residency(gpu, this.uploader, (bytes, way) => this.count(bytes, way));
  }

  /** Throws the device's first uncaught error (device.ts `failure`): the work after it is not valid. */
  private check(): void {
    if (this.gpu.failure) throw new Error(`the GPU reported an error, so results from here on would be wrong: ${this.gpu.failure.split('\n')[0]}`);
  }

  async run<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<number[][]> {
    this.check();
    const call = this.callOf(kernel, args, rows);
    if (!call) return this.onCpu(kernel, args, rows, opts);
    const sums = await (await this.submit(kernel, call)).sums;
    return call.wordPerChunk ? sums.map((w) => [w]) : [sums];
  }

  async reduce<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<number[]> {
    return sumPartials(await this.run(kernel, args, rows, opts));
  }

  /** On the device: the result words are copied for reading in queue order and read back while later kernels run. */
  async queueReduce<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<Queued> {
    this.check();
    const call = this.callOf(kernel, args, rows);
    if (!call) return { sums: Promise.resolve(sumPartials(await this.onCpu(kernel, args, rows, opts))) };
    const queued = await this.submit(kernel, call);
    return call.wordPerChunk ? { sums: queued.sums.then((w) => sumPartials(w.map((x) => [x]))) } : queued;
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
    this.check();
    this.current = '(sync)';
    const list = (arrays ?? this.res.stale()).map((x) => (isArray(x) ? { array: x } : { array: x.array, upTo: x.length * x.array.BYTES_PER_ELEMENT }));
    this.count(await this.res.toHostAll(list), 'down');
    // What the device reported while the read-back waited (the last kernels' errors).
    this.check();
  }

  /**
   * Copies of `arrays` as they stand now. Arrays whose only valid copy is on the device are copied
   * on the device into staging buffers, in queue order, so later kernels do not change them; the
   * promise resolves once the copies are mapped, while the caller goes on submitting kernels. The
   * rest are copied from the host at once. Their residency does not change.
   */
  async capture(arrays: readonly TypedArray[]): Promise<TypedArray[]> {
    this.check();
    const { device } = this.gpu;
    const enc = device.createCommandEncoder();
    // An array whose copies are each partly stale (a kernel wrote some rows, the host others since) is read back first.
    this.count(await this.res.toHostAll(arrays.filter((arr) => !this.res.hostValid(arr) && !this.res.deviceValid(arr)).map((array) => ({ array }))), 'down');
    const staged: Array<{ read: GPUBuffer; bytes: number } | TypedArray> = arrays.map((arr) => {
      const r = this.res.deviceCopy(arr);
      if (!r || this.res.hostValid(arr)) return arr.slice();
      const size = Math.max(16, Math.ceil(r.bytes / 4) * 4);
      const read = this.res.reads.take(size);
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
        this.res.reads.give(x.read);
        return copy;
      }),
    );
  }

  /** The host wrote elements [from, to) of `arr` (all of it by default) outside the executor: that part of its device copy is stale. */
  hostWrote(arr: TypedArray, from = 0, to = arr.length): void {
    this.res.hostWrote(arr, from, to);
  }

  /** The host wrote elements at[0..n) of `arr` outside the executor: those words of its device copy are stale. */
  hostWroteAt(arr: TypedArray, at: Int32Array, n: number): void {
    this.res.hostWroteAt(arr, at, n);
  }

  /** See Executor.hostMoved: the device copy moves on the device. */
  hostMoved(arr: TypedArray, from: number, to: number, count: number): void {
    this.res.hostMoved(arr, from, to, count);
  }

  /** See Executor.hostCopied: dst's device copy is made from src's on the device. */
  hostCopied(dst: TypedArray, src: TypedArray, count: number): void {
    this.res.hostCopied(dst, src, count);
  }

  /** See Executor.hostRearranged: dst's device copy is made from pieces of src's on the device. */
  hostRearranged(dst: TypedArray, src: TypedArray, pieces: ArrayLike<number>): void {
    this.res.hostRearranged(dst, src, pieces);
  }

  private count(bytes: number, way: 'up' | 'down'): void {
    if (bytes === 0) return;
    let t = this.transfers.get(this.current);
    if (!t) this.transfers.set(this.current, (t = { up: 0, down: 0 }));
    t[way] += bytes;
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
    this.count(await this.res.toHostAll(Object.values(args as object).filter(isArray).map((array) => ({ array }))), 'down');
    const out = await this.cpu.run(kernel, args, rows, opts);
    for (const name of opts?.announced ? [] : Object.keys(k.spec.writes)) {
      const v = (args as Record<string, unknown>)[name];
      const rows = opts?.wroteRows?.find((w) => w.array === v);
      if (rows) this.res.hostWrote(rows.array, rows.from, rows.to);
      else if (isArray(v)) this.res.wroteOnHost(v);
    }
    bump(this.counts.cpu, k.name);
    return out;
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
    if (this.res.scattered && !this.res.scatter) this.res.scatter = await this.program(SCATTER_WORDS_WGSL);
    if (this.res.rearranged && !this.res.copyPieces) this.res.copyPieces = await this.program(COPY_PIECES_WGSL);
    const buffers: Array<GPUBuffer | GPUBufferBinding> = [this.uniforms(prog, uniform)];
    const hostTables = new Map<TypedArray, readonly [number, number]>();
    for (const t of call.hostTables ?? []) {
      const [table, from, to] = isArray(t) ? [t, 0, t.length] : [t.table, t.from, t.to];
      hostTables.set(table, [from, to]);
      this.res.tableStale(table, from, to);
    }
    // Device-side copies into packs are recorded before the pass.
    const enc = device.createCommandEncoder();
    for (const x of call.arrays) {
      if (isPack(x)) {
        buffers.push(await this.res.packBuffer(x, call.shader, hostTables, enc));
        continue;
      }
      if (!isSplit(x)) {
        buffers.push(await this.res.toDevice(x, enc));
        continue;
      }
      // One buffer, bound as x.parts ranges of its first x.bytes (whole words); unused ranges repeat the first.
      const buffer = await this.res.toDevice(x.split, enc);
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
    this.res.submitted();
    for (const w of call.writes) isArray(w) ? this.res.wroteOnDevice(w) : this.res.wroteOnDevice(w.array, w.from, w.to);
    if (!result) return { sums: Promise.resolve([]) };
    // reads.read submits its copy before it first waits.
    const sums = this.res.reads.read(result, call.resultWords! * 4).then((bytes) => {
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
