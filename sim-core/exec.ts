/**
 * The `cpu` backend's executor: runs a kernel from `kernels.ts` over fixed row chunks, in the main
 * thread (threads = 1) or on a piscina pool of worker threads over SharedArrayBuffers.
 *
 * Determinism: chunk boundaries depend only on the row count (and an optional fixed partition
 * count), never on the thread count, and per-chunk partial results come back indexed by chunk, so
 * callers combine them in chunk order. Randomness inside kernels is keyed by row or edge index.
 *
 * Sharing: a task message carries the kernel name, the row range, scalar arguments and small
 * integer ids for its arrays. Each worker learns an array (its SharedArrayBuffer handle, no copy)
 * the first time a task uses it; later tasks send only the id.
 */
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { kernels, type KernelArgs, type KernelName } from './kernels.ts';
import { sharedArray, type TypedArray } from './table.ts';

/** Default rows per chunk: large enough to amortise a task message, small enough to balance. */
export const CHUNK_ROWS = 1 << 16;

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
  kernel: string;
  /** Module that exports `kernels` with this kernel, for kernels registered outside sim-core. */
  module?: string;
  start: number;
  end: number;
  args: Record<string, unknown>;
  defs?: ArrayDef[];
}

/** Marker for an array argument inside a task message. */
export interface ArrayRef {
  $array: number;
}

export interface Executor {
  readonly threads: number;
  /** Runs a kernel over rows [0, rows); returns each chunk's partial result, in chunk order. */
  run<K extends KernelName>(kernel: K, args: KernelArgs<K>, rows: number, opts?: RunOptions): Promise<number[][]>;
  run(kernel: string, args: object, rows: number, opts?: RunOptions): Promise<number[][]>;
  /** Runs a reducing kernel and sums the chunk partials element-wise, in chunk order. */
  reduce<K extends KernelName>(kernel: K, args: KernelArgs<K>, rows: number, opts?: RunOptions): Promise<number[]>;
  reduce(kernel: string, args: object, rows: number, opts?: RunOptions): Promise<number[]>;
  close(): Promise<void>;
}

export type KernelFn = (args: never, start: number, end: number) => number[] | void;

const registered = new Map<string, { fn: KernelFn; module: string }>();

/**
 * Adds kernels defined above sim-core (e.g. the recommender's per-user top-k). They follow the
 * contract in kernels.ts. `moduleUrl` is the defining module's `import.meta.url`; it must export
 * the same functions as `kernels`, so worker threads can import them by URL.
 */
export function registerKernels(moduleUrl: string, fns: Record<string, KernelFn>): void {
  for (const [name, fn] of Object.entries(fns)) {
    if (name in kernels) throw new Error(`kernel ${name} already exists in sim-core`);
    registered.set(name, { fn, module: moduleUrl });
  }
}

function kernelFn(name: string): Kernel {
  const fn = (kernels as Record<string, unknown>)[name] ?? registered.get(name)?.fn;
  if (!fn) throw new Error(`unknown kernel ${name}`);
  return fn as Kernel;
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

function sumPartials(parts: number[][]): number[] {
  const total: number[] = [];
  for (const p of parts) {
    if (!p) continue;
    for (let i = 0; i < p.length; i++) total[i] = (total[i] ?? 0) + p[i];
  }
  return total;
}

type Kernel = (args: object, start: number, end: number) => number[] | void;

/** Runs every chunk in the calling thread, in chunk order. */
class InlineExecutor implements Executor {
  readonly threads = 1;
  async run(kernel: string, args: object, rows: number, opts?: RunOptions): Promise<number[][]> {
    const fn = kernelFn(kernel);
    return chunkRanges(rows, opts).map(([a, b]) => fn(args, a, b) ?? []);
  }
  async reduce(kernel: string, args: object, rows: number, opts?: RunOptions): Promise<number[]> {
    return sumPartials(await this.run(kernel, args, rows, opts));
  }
  async close(): Promise<void> {}
}

function isTypedArray(v: unknown): v is TypedArray {
  return ArrayBuffer.isView(v) && !(v instanceof DataView);
}

/** Runs chunks concurrently on a pool of `threads` workers that live as long as the executor. */
class PoolExecutor implements Executor {
  private readonly pool: Piscina;
  private readonly ids = new WeakMap<TypedArray, number>();
  private readonly defs = new Map<number, ArrayDef>();
  private nextId = 1;

  constructor(readonly threads: number) {
    this.pool = new Piscina({
      filename: fileURLToPath(new URL('./worker.mjs', import.meta.url)),
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Infinity,
      // Chunks are queued all at once; let each worker hold a couple so none idles between tasks.
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
      this.defs.set(id, {
        id,
        buffer: arr.buffer,
        type: arr.constructor.name,
        byteOffset: arr.byteOffset,
        length: arr.length,
      });
    }
    return { $array: id };
  }

  async run(kernel: string, args: object, rows: number, opts?: RunOptions): Promise<number[][]> {
    kernelFn(kernel);
    const module = registered.get(kernel)?.module;
    const wire: Record<string, unknown> = {};
    const used: number[] = [];
    for (const [k, v] of Object.entries(args as Record<string, unknown>)) {
      if (isTypedArray(v)) {
        const ref = this.refOf(v);
        used.push(ref.$array);
        wire[k] = ref;
      } else wire[k] = v;
    }
    const ranges = chunkRanges(rows, opts);
    const settled = await Promise.allSettled(
      ranges.map(async ([start, end]) => {
        const task: Task = module ? { kernel, module, start, end, args: wire } : { kernel, start, end, args: wire };
        let out = (await this.pool.run(task)) as { missing?: number[]; result?: number[] };
        if (out.missing) {
          // The retry may land on another worker, which may lack other arrays: send them all.
          task.defs = [...new Set(used)].map((id) => this.defs.get(id)!);
          out = (await this.pool.run(task)) as { missing?: number[]; result?: number[] };
          if (out.missing) throw new Error(`worker could not resolve arrays ${out.missing.join(', ')}`);
        }
        return out.result ?? [];
      }),
    );
    // Wait for every chunk before failing, so no task is still running when the caller reacts.
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return settled.map((r) => (r as PromiseFulfilledResult<number[]>).value);
  }

  async reduce(kernel: string, args: object, rows: number, opts?: RunOptions): Promise<number[]> {
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
  const counts = await exec.run('countMask', { mask }, rows, { chunkRows: CHUNK_ROWS });
  const starts = sharedArray('f64', counts.length);
  let total = 0;
  for (let c = 0; c < counts.length; c++) {
    starts[c] = total;
    total += counts[c][0];
  }
  const out = sharedArray('i32', total);
  await exec.run('compactMask', { mask, out, starts, chunkRows: CHUNK_ROWS }, rows, { chunkRows: CHUNK_ROWS });
  return out;
}
