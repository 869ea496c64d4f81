/**
 * The `cpu` backend's executors: run a declared kernel (`kernel.ts`) over fixed row chunks, in the
 * main thread (threads = 1) or on it and a pool of worker threads over SharedArrayBuffers
 * (`pool.ts`). Both run the same declarations, so the kernel list is the same for every executor.
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
 * claims fewer chunks. A task message carries the kernel's module and name, the chunk ranges,
 * scalar arguments and small integer ids for its arrays (handles only the first time a worker
 * sees an array).
 */
import { setFlagsFromString } from 'node:v8';
import { checkArgs, type AnyKernel, type CallArgs, type Kernel, type KernelSpec } from './kernel.ts';
import { kernels as core } from './kernels.ts';
import { releaseMemory, sharedArray, type TypedArray } from './table.ts';

/**
 * V8's budget for the bytecode its optimising compiler inlines into one function (920 bytes by
 * default), raised for the process (V8 flags are global to its isolates, so workers share it).
 * Large kernels call many small helpers per row (the act kernel: 8 hashed draws, 8 probabilities
 * each through inSessions32, float32 exp and pow); past the budget each call stays a call, its
 * float result boxed on the heap. At 3000, on one thread with the arguments of a 1M-agent social
 * step, act takes ~35% less time and the feed kernel ~7% less than at the default, with the same
 * bytes (1500 and 5000 do no better). Compiling only happens when a function gets hot, so setting
 * it as executors load comes before any kernel is optimised.
 */
setFlagsFromString('--max-inlined-bytecode-size-cumulative=3000');

/** Default rows per chunk: large enough to amortise a task message, small enough to balance. */
export const CHUNK_ROWS = 1 << 16;

export interface RunOptions {
  /** Rows per chunk (default CHUNK_ROWS). */
  chunkRows?: number;
  /** Split the rows into exactly this many equal ranges instead (e.g. CSR construction passes). */
  parts?: number;
  /**
   * For an executor that keeps device copies (sim-core/gpu/executor.ts), when it runs the kernel on
   * the CPU: the caller reports with hostWrote what the kernel wrote that a device copy must see,
   * instead of every written array going stale on the device whole.
   */
  announced?: boolean;
  /**
   * For such an executor, when it runs the kernel on the CPU: of these written arrays, only
   * elements [from, to) changed, and only those go stale on the device (not the whole array).
   */
  wroteRows?: ReadonlyArray<{ array: TypedArray; from: number; to: number }>;
}

export interface Executor {
  readonly threads: number;
  /** Runs a kernel over rows [0, rows); returns each chunk's partial result, in chunk order. */
  run<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<number[][]>;
  /** Runs a reducing kernel and sums the chunk partials element-wise, in chunk order. */
  reduce<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<number[]>;
  /**
   * Makes the host copy of every array valid, or of those in `arrays` (of an entry with a length,
   * its first `length` elements): an executor that keeps arrays on a device reads them back
   * (sim-core/gpu/executor.ts). Callers run it before reading arrays outside kernels.
   */
  sync?(arrays?: ReadonlyArray<TypedArray | { array: TypedArray; length: number }>): Promise<void>;
  /**
   * Copies of the arrays' contents as they stand now, in kernel order; the promise resolves once
   * they are on the host, and kernels may be run meanwhile (a device copies them while it goes on
   * with the next kernels). Executors without it hold every array on the host.
   */
  capture?(arrays: readonly TypedArray[]): Promise<TypedArray[]>;
  /**
   * The host wrote elements [from, to) of `array` (all of it by default) outside kernels (an
   * intervention's or the apply phase's plain JavaScript): an executor that keeps a device copy
   * marks that part stale. Code that writes an array a kernel has used calls this after.
   */
  hostWrote?(array: TypedArray, from?: number, to?: number): void;
  /**
   * As hostWrote, for elements at scattered indices (`at[0..n)`, repeats allowed): counters raised
   * at random rows, a few users' latest posts. A device copy gets those elements only.
   */
  hostWroteAt?(array: TypedArray, at: Int32Array, n: number): void;
  /**
   * The host moved elements [from, from + count) of `array` down to `to` (`array.copyWithin(to,
   * from, from + count)`, to < from: a table compacting its rows) and no longer uses the elements
   * from to + count on until it writes them anew. An executor that keeps a device copy moves that
   * copy the same way on the device, instead of taking the moved elements as written (which would
   * send them all up again). Executors with hostWrote have it.
   */
  hostMoved?(array: TypedArray, from: number, to: number, count: number): void;
  /**
   * The host copied elements [0, count) of `src` into the new array `dst` (a table growing into
   * larger arrays) and will not use src again, nor dst's elements past count until it writes them:
   * an executor that keeps a device copy of src makes dst's by a copy on the device.
   */
  hostCopied?(dst: TypedArray, src: TypedArray, count: number): void;
  /**
   * The host made the new array `dst` from pieces of `src` (the following rows folded with a day's
   * follows), which it will not use again: for each triple (d, s, n) of `pieces`, elements
   * [d, d + n) of dst are elements [s, s + n) of src as src was before (in place, dst may be a view
   * of src's memory), and the host announces the rest of dst with hostWrote or hostWroteAt after
   * this call. An executor that keeps a device copy of src makes dst's from it on the device.
   */
  hostRearranged?(dst: TypedArray, src: TypedArray, pieces: ArrayLike<number>): void;
  /**
   * Queues a reducing kernel: once the returned promise resolves, kernels run after it can no
   * longer change what it reads, but its sums may still be on their way (a device reads them back
   * while it goes on with the next kernels). Executors without it: `queueReduce` below waits for
   * the sums.
   */
  queueReduce?<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<Queued>;
  /**
   * Returns the memory of the arrays the caller has dropped to the system now, on every thread
   * that held them (the worker pool's `release`). Executors without it: a collection of the
   * calling thread's heap (`releaseArrays` below).
   */
  release?(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Frees dropped shared arrays now rather than at some later collection (V8 does not count their
 * size as heap pressure): call it after dropping the last reference to a large array, before
 * allocating the next.
 */
export async function releaseArrays(exec: Executor): Promise<void> {
  if (exec.release) await exec.release();
  else {
    // A new macrotask first, as the pool's release does: called from inside a phase, a collection
    // in the same task left the arrays that phase had just dropped alive.
    await new Promise((r) => setImmediate(r));
    await releaseMemory();
  }
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

/**
 * A kernel call's arguments as the calling thread's chunks read them: a copy built in one go
 * (Object.fromEntries), as a worker builds its own. Kernels read their arguments in their inner
 * loops. A phase's object literal (a spread and ~40 properties) had a new hidden class at every
 * call, so a kernel's optimised code saw a new shape of its argument each step and degraded to
 * generic property loads: the feed kernel ran 1.39 s on the calling thread against 0.56 s for a
 * fresh copy of the function on the same arguments (1M agents, one thread).
 */
export function kernelArgs(args: object): object {
  return Object.fromEntries(Object.entries(args));
}

/** Runs every chunk in the calling thread, in chunk order. */
export class InlineExecutor implements Executor {
  readonly threads = 1;
  async run(kernel: AnyKernel, args: object, rows: number, opts?: RunOptions): Promise<number[][]> {
    checkArgs(kernel, args);
    const local = kernelArgs(args);
    return chunkRanges(rows, kernelRanges(kernel, opts)).map(([a, b]) => kernel.fn(local, a, b) ?? []);
  }
  async reduce(kernel: AnyKernel, args: object, rows: number, opts?: RunOptions): Promise<number[]> {
    return sumPartials(await this.run(kernel, args, rows, opts));
  }
  async close(): Promise<void> {}
}

/**
 * Stable compaction: the rows with mask[i] !== 0, in row order, as a new shared Int32Array.
 * Two passes (count per chunk, prefix sum, write), so chunks run in parallel. On a device both
 * passes run there and only the chunk counts come back (the rows stay on the device until read).
 */
export async function compact(exec: Executor, mask: TypedArray, rows: number): Promise<Int32Array> {
  const counts = await exec.run(core.countMask, { mask, chunkRows: CHUNK_ROWS }, rows, { chunkRows: CHUNK_ROWS });
  const starts = sharedArray('i32', counts.length);
  let total = 0;
  for (let c = 0; c < counts.length; c++) {
    starts[c] = total;
    total += counts[c][0];
  }
  const out = sharedArray('i32', total);
  await exec.run(core.compactMask, { mask, out, starts, chunkRows: CHUNK_ROWS }, rows, { chunkRows: CHUNK_ROWS });
  return out;
}
