/**
 * Worker body for the kernel pool (`pool.ts`): parks in Atomics.wait until its posted word moves,
 * takes each message off its port (a task, or only a list of dropped arrays), imports the
 * kernel's declaring module by URL (once), resolves array ids to typed-array views over the
 * shared buffers it has been given, claims chunks of the run until none is left, posts the
 * results and bumps its finished word.
 * Tasks and those lists carry the ids of arrays the main thread has dropped; the worker forgets
 * them, and when it has let go of enough bytes it collects its heap, because its views keep the
 * shared buffers alive until then and this isolate allocates too little for V8 to collect on its
 * own.
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { AnyKernel } from './kernel.ts';
import type { ArrayRef, ForgetMessage, Task, TaskResult, WorkerSetup } from './pool.ts';
import { releaseMemory, type TypedArray } from './table.ts';

/**
 * A worker about to sleep collects its heap once the shared buffers it was handed or told to drop
 * since its last collection add up to this many bytes: their handles (and its kernels' scratch
 * buffers) are freed only when it collects, and it allocates too little for V8 to collect on its
 * own. Peak memory at --threads 2 over --threads 1 of a 40k-agent run that rebuilds its graph
 * every step (`npm run bench -- --only pool-rss` measures it): ~1.3x without this, ~1.25x with it,
 * ~1.15x with piscina's pool (whose own allocations made the worker collect). A threshold of 4 MB
 * made a 200k-agent run 10-20% slower.
 */
const CHURN_BYTES = 16 << 20;
/** After a task, watch for the next one this long before sleeping: a step's kernels come back to back. */
const SPIN_MS = 0.05;

const arrays = new Map<number, TypedArray>();
const modules = new Map<string, Record<string, AnyKernel>>();
/** Bytes of shared buffers received or dropped since the last collection. */
let churn = 0;

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

function forget(ids: number[]): void {
  for (const id of ids) {
    const arr = arrays.get(id);
    if (arr) {
      churn += arr.byteLength;
      arrays.delete(id);
    }
  }
}

async function kernelOf(task: Task): Promise<AnyKernel> {
  let list = modules.get(task.module);
  if (!list) {
    // A module's kernels are its `kernels` export, or a plugin module's default export's.
    const mod = (await import(task.module)) as { kernels?: Record<string, AnyKernel>; default?: { kernels?: Record<string, AnyKernel> } };
    list = mod.kernels ?? mod.default?.kernels;
    if (!list) throw new Error(`${task.module} has no kernels export`);
    modules.set(task.module, list);
  }
  const k = list[task.kernel];
  if (!k) throw new Error(`${task.module} does not declare kernel ${task.kernel}`);
  return k;
}

async function runTask(task: Task): Promise<TaskResult> {
  forget(task.forget);
  const k = await kernelOf(task);
  for (const d of task.defs) {
    const view = new CTORS[d.type](d.buffer, d.byteOffset, d.length);
    arrays.set(d.id, view);
    churn += view.byteLength;
  }
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

/** Runs one message off the port: a task (its result is posted back) or a list of dropped arrays. */
async function handle(port: MessagePort, msg: Task | ForgetMessage): Promise<void> {
  if (!('kernel' in msg)) {
    forget(msg.forget);
    if (msg.collect) {
      churn = 0;
      await releaseMemory();
    }
    return;
  }
  let out: TaskResult;
  try {
    out = await runTask(msg);
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    out = { seq: msg.seq, error: { name: e.name, message: e.message, stack: e.stack }, held: arrays.size };
  }
  port.postMessage(out);
}

/**
 * Takes one message off the port and handles it; returns its number, or 0 when the port is empty.
 * A function of its own, so nothing of a finished task (its arrays' handles) stays referenced from
 * the loop below while the worker sleeps.
 */
async function next(port: MessagePort): Promise<number> {
  const m = receiveMessageOnPort(port);
  if (!m) return 0;
  const msg = m.message as Task | ForgetMessage;
  await handle(port, msg);
  return msg.seq;
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
      if (now === seen && churn >= CHURN_BYTES) {
        churn = 0;
        await releaseMemory();
        now = Atomics.load(ctl, posted);
      }
      if (now === seen) Atomics.wait(ctl, posted, seen);
    }
    for (let seq = await next(port); seq > 0; seq = await next(port)) {
      seen = seq;
      Atomics.store(ctl, finished, seen);
      Atomics.notify(ctl, finished);
    }
  }
}
