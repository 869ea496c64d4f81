/**
 * The `cpu` backend's executors: run a declared kernel (`kernel.ts`) over fixed row chunks, in the
 * main thread (threads = 1) or on it and a piscina pool of worker threads over SharedArrayBuffers. Both
 * run the same declarations, so the kernel list is the same for every executor.
 *
 * Determinism: chunk boundaries depend only on the row count (and an optional fixed partition
 * count), never on the thread count, and per-chunk partial results come back indexed by chunk, so
 * callers combine them in chunk order. Randomness inside kernels is keyed by row or edge index.
 *
 * Dispatch: `threads` counts the calling thread, which runs chunks too, beside `threads - 1`
 * workers. A run sends one task per worker (not one per chunk), then the calling thread and the
 * workers claim the run's chunks from a shared counter until none is left: a run costs at most
 * `threads - 1` messages however many chunks it has, a one-chunk run none, the calling thread
 * starts at once while the workers wake, and a thread slowed by other load on the machine simply
 * claims fewer chunks.
 *
 * Sharing: a task message carries the kernel's module and name, the chunk ranges, scalar arguments
 * and small integer ids for its arrays. Each worker learns an array (its SharedArrayBuffer handle,
 * no copy) the first time a task uses it; later tasks send only the id. Memory: the executor holds
 * arrays only weakly; when the main thread drops an array (an old CSR after a rebuild, the post
 * table before it grew), a finalizer appends its id to a release log, and every task carries the
 * part of the log some worker has not yet applied, so each worker forgets it at its next task and
 * a buffer lives no longer with a pool than without one. (Idle piscina workers are parked in
 * Atomics.wait, so a message on a channel would not be read until their next task anyway.)
 */
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { checkArgs, type AnyKernel, type CallArgs, type Kernel, type KernelSpec } from './kernel.ts';
import { kernels as core } from './kernels.ts';
import { sharedArray, type TypedArray } from './table.ts';

/** Default rows per chunk: large enough to amortise a task message, small enough to balance. */
export const CHUNK_ROWS = 1 << 16;

/** Claim counters of the pool: more than the runs that are ever in flight at once. */
const CLAIM_SLOTS = 256;

export interface RunOptions {
  /** Rows per chunk (default CHUNK_ROWS). */
  chunkRows?: number;
  /** Split the rows into exactly this many equal ranges instead (e.g. CSR construction passes). */
  parts?: number;
}

export interface ArrayDef {
  id: number;
  buffer: SharedArrayBuffer;
  type: string;
  byteOffset: number;
  length: number;
}

export interface Task {
  /** URL of the module whose `kernels` export declares the kernel. */
  module: string;
  kernel: string;
  /** The run's chunks, flattened: chunk c is rows [ranges[2c], ranges[2c + 1]). */
  ranges: number[];
  /**
   * Claim counter: workers take chunks by Atomics.add on claims[slot] until every chunk is taken,
   * so one task per worker serves the whole run (no message per chunk) and a worker that falls
   * behind (the machine is shared) takes fewer chunks. Which worker ran a chunk changes nothing:
   * results come back indexed by chunk.
   */
  claims: SharedArrayBuffer;
  slot: number;
  args: Record<string, unknown>;
  defs?: ArrayDef[];
  /** Release log entries [logStart, logStart + forget.length): ids the main thread has dropped. */
  logStart: number;
  forget: number[];
}

/** What a worker sends back: the chunks it ran and their partial results, or the array ids it lacks. */
export interface TaskResult {
  missing?: number[];
  chunks?: number[];
  results?: Array<number[] | undefined>;
  /** The worker's thread id and how much of the release log it has applied. */
  worker: number;
  applied: number;
}

/** Marker for an array argument inside a task message. */
export interface ArrayRef {
  $array: number;
}

export interface Executor {
  readonly threads: number;
  /** Runs a kernel over rows [0, rows); returns each chunk's partial result, in chunk order. */
  run<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<number[][]>;
  /** Runs a reducing kernel and sums the chunk partials element-wise, in chunk order. */
  reduce<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<number[]>;
  /**
   * Makes the host copy of every array valid (an executor that keeps arrays on a device reads
   * them back; sim-core/gpu/executor.ts). Callers run it before reading arrays outside kernels.
   */
  sync?(): Promise<void>;
  /**
   * Copies of the arrays' contents as they stand now, in kernel order; the promise resolves once
   * they are on the host, and kernels may be run meanwhile (a device copies them while it goes on
   * with the next kernels). Executors without it hold every array on the host.
   */
  capture?(arrays: readonly TypedArray[]): Promise<TypedArray[]>;
  /**
   * The host wrote `array` outside kernels (an intervention's plain JavaScript): an executor that
   * keeps a device copy drops it. Code that writes an array a kernel has used calls this after.
   */
  hostWrote?(array: TypedArray): void;
  /**
   * Queues a reducing kernel: once the returned promise resolves, kernels run after it can no
   * longer change what it reads, but its sums may still be on their way (a device reads them back
   * while it goes on with the next kernels). Executors without it: `queueReduce` below waits for
   * the sums.
   */
  queueReduce?<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<Queued>;
  close(): Promise<void>;
}

/** Sums on their way (wrapped: a promise resolving to a promise would wait for both). */
export interface Queued {
  sums: Promise<number[]>;
}

/** `exec.queueReduce`, or `reduce` with its sums already there where the executor has none. */
export async function queueReduce<S extends KernelSpec>(exec: Executor, kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<Queued> {
  if (exec.queueReduce) return exec.queueReduce(kernel, args, rows, opts);
  return { sums: Promise.resolve(await exec.reduce(kernel, args, rows, opts)) };
}

/** The row ranges a run is split into: a function of (rows, options) only. */
export function chunkRanges(rows: number, opts: RunOptions = {}): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  if (rows <= 0) return ranges;
  if (opts.parts) {
    const p = Math.max(1, Math.min(opts.parts, rows));
    for (let i = 0; i < p; i++) {
      const a = Math.floor((rows * i) / p);
      const b = Math.floor((rows * (i + 1)) / p);
      if (b > a) ranges.push([a, b]);
    }
    return ranges;
  }
  const size = opts.chunkRows ?? CHUNK_ROWS;
  for (let a = 0; a < rows; a += size) ranges.push([a, Math.min(rows, a + size)]);
  return ranges;
}

/** The chunking a kernel runs under: a sequential kernel (`KernelSpec.sequential`) is one chunk. */
export function kernelRanges(kernel: AnyKernel, opts: RunOptions = {}): RunOptions {
  return kernel.spec.sequential ? { parts: 1 } : opts;
}

export function sumPartials(parts: number[][]): number[] {
  const total: number[] = [];
  for (const p of parts) {
    if (!p) continue;
    for (let i = 0; i < p.length; i++) total[i] = (total[i] ?? 0) + p[i];
  }
  return total;
}

/** Runs every chunk in the calling thread, in chunk order. */
class InlineExecutor implements Executor {
  readonly threads = 1;
  async run(kernel: AnyKernel, args: object, rows: number, opts?: RunOptions): Promise<number[][]> {
    checkArgs(kernel, args);
    return chunkRanges(rows, kernelRanges(kernel, opts)).map(([a, b]) => kernel.fn(args, a, b) ?? []);
  }
  async reduce(kernel: AnyKernel, args: object, rows: number, opts?: RunOptions): Promise<number[]> {
    return sumPartials(await this.run(kernel, args, rows, opts));
  }
  async close(): Promise<void> {}
}

function isTypedArray(v: unknown): v is TypedArray {
  return ArrayBuffer.isView(v) && !(v instanceof DataView);
}

/**
 * Runs chunks concurrently on the calling thread and a pool of `threads - 1` workers that live as
 * long as the executor.
 */
class PoolExecutor implements Executor {
  private readonly pool: Piscina;
  private readonly ids = new WeakMap<TypedArray, number>();
  /** Held weakly: the executor must not keep alive an array the simulation has dropped. */
  private readonly arrays = new Map<number, WeakRef<TypedArray>>();
  /** Released ids from position `logStart` of the release log on; older ones every worker has applied. */
  private log: number[] = [];
  private logStart = 0;
  private readonly applied = new Map<number, number>();
  private readonly finalizer = new FinalizationRegistry<number>((id) => {
    this.arrays.delete(id);
    this.log.push(id);
  });
  private nextId = 1;
  /** Claim counters, one slot per run in flight (runs may overlap), reused round-robin. */
  private readonly claims = new SharedArrayBuffer(4 * CLAIM_SLOTS);
  private readonly claimView = new Int32Array(this.claims);
  private nextSlot = 0;

  /** Worker threads: the calling thread is one of the `threads` that run chunks. */
  private readonly workers: number;

  constructor(readonly threads: number) {
    this.workers = threads - 1;
    this.pool = new Piscina({
      filename: fileURLToPath(new URL('./worker.mjs', import.meta.url)),
      minThreads: this.workers,
      maxThreads: this.workers,
      idleTimeout: Infinity,
      concurrentTasksPerWorker: 1,
    });
  }

  private refOf(arr: TypedArray): ArrayRef {
    let id = this.ids.get(arr);
    if (id === undefined) {
      if (!(arr.buffer instanceof SharedArrayBuffer)) {
        throw new Error('kernel arrays must live on a SharedArrayBuffer when threads > 1 (use sharedArray)');
      }
      id = this.nextId++;
      this.ids.set(arr, id);
      this.arrays.set(id, new WeakRef(arr));
      this.finalizer.register(arr, id);
    }
    return { $array: id };
  }

  private defOf(id: number): ArrayDef {
    const arr = this.arrays.get(id)?.deref();
    if (!arr) throw new Error(`array ${id} was released while a kernel still used it`);
    return { id, buffer: arr.buffer as SharedArrayBuffer, type: arr.constructor.name, byteOffset: arr.byteOffset, length: arr.length };
  }

  async run(kernel: AnyKernel, args: object, rows: number, opts?: RunOptions): Promise<number[][]> {
    checkArgs(kernel, args);
    const forget = this.log.slice();
    const logStart = this.logStart;
    const wire: Record<string, unknown> = {};
    const used: number[] = [];
    // Arrays no worker has seen go with the task: a worker that had to ask for them would come
    // back after the calling thread had taken every chunk (each set-up kernel gets new arrays).
    const fresh: number[] = [];
    for (const [k, v] of Object.entries(args as Record<string, unknown>)) {
      if (isTypedArray(v)) {
        const known = this.ids.has(v);
        const ref = this.refOf(v);
        used.push(ref.$array);
        if (!known) fresh.push(ref.$array);
        wire[k] = ref;
      } else wire[k] = v;
    }
    const ranges = chunkRanges(rows, kernelRanges(kernel, opts));
    const flat = ranges.flat();
    const slot = this.nextSlot;
    this.nextSlot = (slot + 1) % CLAIM_SLOTS;
    Atomics.store(this.claimView, slot, 0);
    const results: number[][] = ranges.map(() => []);
    const pending = Promise.allSettled(
      Array.from({ length: Math.min(this.workers, ranges.length - 1) }, async () => {
        const task: Task = { module: kernel.module, kernel: kernel.name, ranges: flat, claims: this.claims, slot, args: wire, logStart, forget };
        if (fresh.length > 0) task.defs = fresh.map((id) => this.defOf(id));
        let out = (await this.pool.run(task)) as TaskResult;
        this.applied.set(out.worker, out.applied);
        if (out.missing) {
          // The retry may land on another worker, which may lack other arrays: send them all.
          task.defs = [...new Set(used)].map((id) => this.defOf(id));
          out = (await this.pool.run(task)) as TaskResult;
          this.applied.set(out.worker, out.applied);
          if (out.missing) throw new Error(`worker could not resolve arrays ${out.missing.join(', ')}`);
        }
        out.chunks!.forEach((c, i) => (results[c] = out.results![i] ?? []));
      }),
    );
    // The calling thread claims chunks too: it starts at once, while the workers wake up.
    let own: unknown;
    try {
      const count = ranges.length;
      for (let c = Atomics.add(this.claimView, slot, 1); c < count; c = Atomics.add(this.claimView, slot, 1)) {
        results[c] = kernel.fn(args, ranges[c][0], ranges[c][1]) ?? [];
      }
    } catch (err) {
      own = err;
    }
    const settled = await pending;
    // Wait for every task before failing, so no chunk is still running when the caller reacts.
    if (own !== undefined) throw own;
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    this.trimLog();
    return results;
  }

  /** Drops the log entries every worker has applied (all of them once each worker has reported). */
  private trimLog(): void {
    if (this.applied.size < this.workers) return;
    const done = Math.min(...this.applied.values());
    if (done > this.logStart) {
      this.log = this.log.slice(done - this.logStart);
      this.logStart = done;
    }
  }

  async reduce(kernel: AnyKernel, args: object, rows: number, opts?: RunOptions): Promise<number[]> {
    return sumPartials(await this.run(kernel, args, rows, opts));
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}

/** Creates the `cpu` executor: inline for one thread, a worker pool otherwise. */
export function createExecutor(threads: number): Executor {
  return threads <= 1 ? new InlineExecutor() : new PoolExecutor(threads);
}

/**
 * Stable compaction: the rows with mask[i] !== 0, in row order, as a new shared Int32Array.
 * Two passes (count per chunk, prefix sum, write), so chunks run in parallel.
 */
export async function compact(exec: Executor, mask: TypedArray, rows: number): Promise<Int32Array> {
  const counts = await exec.run(core.countMask, { mask }, rows, { chunkRows: CHUNK_ROWS });
  const starts = sharedArray('f64', counts.length);
  let total = 0;
  for (let c = 0; c < counts.length; c++) {
    starts[c] = total;
    total += counts[c][0];
  }
  const out = sharedArray('i32', total);
  await exec.run(core.compactMask, { mask, out, starts, chunkRows: CHUNK_ROWS }, rows, { chunkRows: CHUNK_ROWS });
  return out;
}
