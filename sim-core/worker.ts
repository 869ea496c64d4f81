/**
 * Worker body for the kernel pool: imports the kernel's declaring module by URL (once), resolves
 * array ids to typed-array views over the shared buffers it has been given, and runs chunks of
 * the run until none is left to claim.
 * Each task carries the executor's release log (ids of arrays the main thread has dropped); the
 * worker forgets those, and when it has let go of enough bytes it collects its heap, because its
 * views keep the shared buffers alive until then and this isolate allocates too little for V8 to
 * collect on its own. A task that names a forgotten array reports it missing and the executor
 * sends the handle again.
 */
import { threadId } from 'node:worker_threads';
import type { AnyKernel } from './kernel.ts';
import type { ArrayRef, Task, TaskResult } from './exec.ts';
import { releaseMemory, type TypedArray } from './table.ts';

/** Collect once this many bytes of dropped views have accumulated. */
const COLLECT_BYTES = 16 << 20;

const arrays = new Map<number, TypedArray>();
const modules = new Map<string, Record<string, AnyKernel>>();
/** Entries of the release log applied so far. */
let applied = 0;
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

async function forget(task: Task): Promise<void> {
  const end = task.logStart + task.forget.length;
  for (let i = Math.max(applied, task.logStart); i < end; i++) {
    const id = task.forget[i - task.logStart];
    const arr = arrays.get(id);
    if (arr) {
      dropped += arr.byteLength;
      arrays.delete(id);
    }
  }
  if (end > applied) applied = end;
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

export default async function runTask(task: Task): Promise<TaskResult> {
  await forget(task);
  const k = await kernelOf(task);
  if (task.defs) for (const d of task.defs) arrays.set(d.id, new CTORS[d.type](d.buffer, d.byteOffset, d.length));
  let missing: number[] | undefined;
  const entries = Object.entries(task.args).map(([name, v]) => {
    if (v !== null && typeof v === 'object' && '$array' in v) {
      const id = (v as ArrayRef).$array;
      const arr = arrays.get(id);
      if (!arr) (missing ??= []).push(id);
      return [name, arr];
    }
    return [name, v];
  });
  if (missing) return { missing, worker: threadId, applied };
  // Built in one go, not property by property: V8 turns an object that gets more than a dozen
  // properties by computed-key stores into a hash table, and kernels read their arguments in
  // their inner loops (2.5x on the feed kernel, whose call has ~40 arguments).
  const args = Object.fromEntries(entries) as Record<string, unknown>;
  // Take chunks until none is left (exec.ts, Task.claims).
  const claims = new Int32Array(task.claims);
  const count = task.ranges.length / 2;
  const chunks: number[] = [];
  const results: Array<number[] | undefined> = [];
  for (let c = Atomics.add(claims, task.slot, 1); c < count; c = Atomics.add(claims, task.slot, 1)) {
    chunks.push(c);
    results.push(k.fn(args, task.ranges[2 * c], task.ranges[2 * c + 1]) ?? undefined);
  }
  return { chunks, results, worker: threadId, applied };
}
