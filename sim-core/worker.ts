/**
 * Worker body for the kernel pool (`pool.ts`): parks in Atomics.wait until its posted word moves,
 * takes each task off its port, imports the kernel's declaring module by URL (once), resolves
 * array ids to typed-array views over the shared buffers it has been given, claims chunks of the
 * run until none is left, posts the results and bumps its finished word.
 * Each task carries the ids of arrays the main thread has dropped; the worker forgets those, and
 * when it has let go of enough bytes it collects its heap, because its views keep the shared
 * buffers alive until then and this isolate allocates too little for V8 to collect on its own.
 */
import { receiveMessageOnPort } from 'node:worker_threads';
import type { AnyKernel } from './kernel.ts';
import type { ArrayRef, Task, TaskResult, WorkerSetup } from './pool.ts';
import { releaseMemory, type TypedArray } from './table.ts';

/** Collect once this many bytes of dropped views have accumulated. */
const COLLECT_BYTES = 16 << 20;
/** After a task, watch for the next one this long before sleeping: a step's kernels come back to back. */
const SPIN_MS = 0.05;

const arrays = new Map<number, TypedArray>();
const modules = new Map<string, Record<string, AnyKernel>>();
let dropped = 0;

const CTORS: Record<string, new (b: SharedArrayBuffer, o: number, l: number) => TypedArray> = {
  Float32Array,
  Float64Array,
  Int8Array,
  Uint8Array,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
};

async function forget(ids: number[]): Promise<void> {
  for (const id of ids) {
    const arr = arrays.get(id);
    if (arr) {
      dropped += arr.byteLength;
      arrays.delete(id);
    }
  }
  if (dropped >= COLLECT_BYTES) {
    dropped = 0;
    await releaseMemory();
  }
}

async function kernelOf(task: Task): Promise<AnyKernel> {
  let list = modules.get(task.module);
  if (!list) {
    list = ((await import(task.module)) as { kernels?: Record<string, AnyKernel> }).kernels;
    if (!list) throw new Error(`${task.module} has no kernels export`);
    modules.set(task.module, list);
  }
  const k = list[task.kernel];
  if (!k) throw new Error(`${task.module} does not declare kernel ${task.kernel}`);
  return k;
}

async function runTask(task: Task): Promise<TaskResult> {
  await forget(task.forget);
  const k = await kernelOf(task);
  for (const d of task.defs) arrays.set(d.id, new CTORS[d.type](d.buffer, d.byteOffset, d.length));
  const entries = Object.entries(task.args).map(([name, v]) => {
    if (v !== null && typeof v === 'object' && '$array' in v) {
      const arr = arrays.get((v as ArrayRef).$array);
      if (!arr) throw new Error(`worker lacks array ${(v as ArrayRef).$array} for kernel ${task.kernel}`);
      return [name, arr];
    }
    return [name, v];
  });
  // Built in one go, not property by property: V8 turns an object that gets more than a dozen
  // properties by computed-key stores into a hash table, and kernels read their arguments in
  // their inner loops (2.5x on the feed kernel, whose call has ~40 arguments).
  const args = Object.fromEntries(entries) as Record<string, unknown>;
  const claims = new Int32Array(task.claims);
  const count = task.ranges.length / 2;
  const chunks: number[] = [];
  const results: Array<number[] | undefined> = [];
  for (let c = Atomics.add(claims, task.slot, 1); c < count; c = Atomics.add(claims, task.slot, 1)) {
    chunks.push(c);
    results.push(k.fn(args, task.ranges[2 * c], task.ranges[2 * c + 1]) ?? undefined);
  }
  return { seq: task.seq, chunks, results, held: arrays.size };
}

/** The worker's loop: never returns (the pool terminates the thread). */
export async function serve({ control, index, port }: WorkerSetup): Promise<never> {
  const ctl = new Int32Array(control);
  const posted = 2 * index;
  const finished = posted + 1;
  let seen = 0;
  for (;;) {
    let now = Atomics.load(ctl, posted);
    if (now === seen) {
      const until = performance.now() + SPIN_MS;
      while ((now = Atomics.load(ctl, posted)) === seen && performance.now() < until);
      if (now === seen) Atomics.wait(ctl, posted, seen);
    }
    for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
      const task = m.message as Task;
      let out: TaskResult;
      try {
        out = await runTask(task);
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        out = { seq: task.seq, error: { name: e.name, message: e.message, stack: e.stack }, held: arrays.size };
      }
      port.postMessage(out);
      seen = task.seq;
      Atomics.store(ctl, finished, seen);
      Atomics.notify(ctl, finished);
    }
  }
}
