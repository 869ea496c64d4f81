/**
 * The `cpu` backend's pool executor: runs a kernel's chunks on the calling thread and `threads - 1`
 * worker threads over SharedArrayBuffers (the dispatch rules are in `exec.ts`).
 *
 * Signalling goes through shared memory, not the event loop: each worker owns two words of a
 * shared Int32Array, tasks posted and tasks finished. A run puts its task on the worker's message
 * port, bumps the posted word and wakes the worker (Atomics.notify); the worker, parked in
 * Atomics.wait (after a short spin, so back-to-back kernels find it awake), takes the task off its
 * port with receiveMessageOnPort, claims chunks, posts its results and bumps the finished word;
 * the calling thread, once it has no chunk left to claim, checks that word and waits for it with
 * Atomics.waitAsync only if the worker is still busy. On a 2-core machine a `fill` over 200k rows
 * (4 chunks, both threads) costs about a third of what a message round trip per task (as piscina
 * does it) costs; a bare post-and-answer between two threads this way takes some tens of us.
 *
 * Arrays: each worker learns an array (its SharedArrayBuffer handle, no copy) the first time a
 * task of its uses it, and the executor remembers which worker knows which array, so a task
 * always carries exactly the handles its worker lacks. The executor holds arrays only weakly;
 * when the main thread drops one, a finalizer removes it from every worker's set and queues its
 * id for those workers, which forget it at their next task, so a buffer lives no longer with a
 * pool than without one (a worker collects its heap once it has dropped enough bytes).
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { checkArgs, type AnyKernel } from './kernel.ts';
import { chunkRanges, kernelArgs, kernelRanges, sumPartials, type Executor, type RunOptions } from './exec.ts';
import { releaseMemory, type TypedArray } from './table.ts';

/** The workers' entry, in the language this module runs in: workerMain.ts from the sources (Node strips the types), workerMain.js when compiled. */
const WORKER_ENTRY = new URL(`./workerMain${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/**
 * How long the calling thread watches a busy worker's finished word before it yields to the event
 * loop: the worker is usually finishing its last chunk, and waking through the event loop costs
 * more than that.
 */
const WAIT_SPIN_MS = 0.2;

/** Claim counters: more than the runs that are ever in flight at once. */
const CLAIM_SLOTS = 256;

export interface ArrayDef {
  id: number;
  buffer: SharedArrayBuffer;
  type: string;
  byteOffset: number;
  length: number;
}

/** Marker for an array argument inside a task message. */
export interface ArrayRef {
  $array: number;
}

export interface Task {
  /** The task's number on its worker (1, 2, ...): the value of the posted word once it is sent. */
  seq: number;
  /** URL of the module whose `kernels` export declares the kernel. */
  module: string;
  kernel: string;
  /** The run's chunks, flattened: chunk c is rows [ranges[2c], ranges[2c + 1]). */
  ranges: number[];
  /**
   * Claim counter: every thread takes chunks by Atomics.add on claims[slot] until every chunk is
   * taken, so a thread slowed by other load on the machine simply takes fewer. Which thread ran a
   * chunk changes nothing: results come back indexed by chunk.
   */
  claims: SharedArrayBuffer;
  slot: number;
  args: Record<string, unknown>;
  /** Handles of the arrays this worker does not hold yet. */
  defs: ArrayDef[];
  /** Ids of arrays the main thread has dropped: the worker lets go of its views. */
  forget: number[];
}

/**
 * A message that only lists dropped arrays: the worker forgets them and posts nothing back; with
 * `collect`, it also collects its heap before it marks the message finished (`release`).
 */
export interface ForgetMessage {
  seq: number;
  forget: number[];
  collect?: boolean;
}

/** What a worker posts back for task `seq`: the chunks it ran and their partial results, or its error. */
export interface TaskResult {
  seq: number;
  chunks?: number[];
  results?: Array<number[] | undefined>;
  error?: { name: string; message: string; stack?: string };
  /** Arrays the worker holds after the task (for tests of the release path). */
  held: number;
}

/** What a worker is started with. */
export interface WorkerSetup {
  /** Word 2 * index: tasks posted to this worker; word 2 * index + 1: tasks it has finished. */
  control: SharedArrayBuffer;
  index: number;
  port: MessagePort;
}

interface PoolWorker {
  worker: Worker;
  port: MessagePort;
  posted: number;
  /** Runs waiting on this worker: it is ref'd (keeps the process alive) only while one is. */
  inFlight: number;
  /** Ids of the arrays the worker holds. */
  known: Set<number>;
  /** Dropped ids the worker still holds, sent with its next task. */
  forget: number[];
  /** Results read off the port before their run asked for them (runs may overlap). */
  inbox: Map<number, TaskResult>;
  dead?: Error;
}

/** Atomics.waitAsync (V8 has it; TypeScript's lib for this target does not declare it). */
const waitAsync = (Atomics as unknown as {
  waitAsync(a: Int32Array, index: number, value: number): { async: false; value: string } | { async: true; value: Promise<string> };
}).waitAsync;

function isTypedArray(v: unknown): v is TypedArray {
  return ArrayBuffer.isView(v) && !(v instanceof DataView);
}

export class PoolExecutor implements Executor {
  readonly threads: number;
  private readonly control: Int32Array;
  private readonly pool: PoolWorker[];
  private readonly ids = new WeakMap<TypedArray, number>();
  /** Held weakly: the executor must not keep alive an array the simulation has dropped. */
  private readonly arrays = new Map<number, WeakRef<TypedArray>>();
  private readonly finalizer = new FinalizationRegistry<number>((id) => {
    if (this.dropped(id) && !this.flushing) {
      this.flushing = true;
      setImmediate(() => this.flushForget());
    }
  });
  /** A flush of the dropped ids is scheduled. */
  private flushing = false;
  private nextId = 1;
  private readonly claimView = new Int32Array(new SharedArrayBuffer(4 * CLAIM_SLOTS));
  private nextSlot = 0;
  private closing = false;

  constructor(threads: number) {
    this.threads = threads;
    const n = threads - 1;
    this.control = new Int32Array(new SharedArrayBuffer(8 * Math.max(1, n)));
    this.pool = Array.from({ length: n }, (_, index) => this.start(index));
  }

  private start(index: number): PoolWorker {
    const { port1, port2 } = new MessageChannel();
    const setup: WorkerSetup = { control: this.control.buffer as SharedArrayBuffer, index, port: port2 };
    const worker = new Worker(WORKER_ENTRY, { workerData: setup, transferList: [port2] });
    worker.unref();
    const w: PoolWorker = { worker, port: port1, posted: 0, inFlight: 0, known: new Set(), forget: [], inbox: new Map() };
    // A run waiting on this worker's finished word is woken, finds `dead` and fails.
    const died = (err: Error) => {
      w.dead ??= err;
      Atomics.notify(this.control, 2 * index + 1);
    };
    worker.on('error', died);
    worker.on('exit', (code) => {
      if (!this.closing) died(new Error(`kernel worker ${index} exited (code ${code})`));
    });
    return w;
  }

  /** Array `id` is gone on the main thread: queue it for the workers that hold it (true if any does). */
  private dropped(id: number): boolean {
    this.arrays.delete(id);
    let held = false;
    for (const w of this.pool) {
      if (w.known.delete(id)) {
        w.forget.push(id);
        held = true;
      }
    }
    return held;
  }

  /**
   * Returns the memory of every array the simulation has dropped to the system now: collects the
   * main heap, sends each worker the ids it still holds, and waits until every worker has let go
   * of them and collected its own heap. Without it, a large dropped buffer (an edge list after CSR
   * construction, an old CSR after a rebuild) lives on until the finalizers run, which is after
   * the main thread next yields, and then until the worker next collects (a file written in
   * between, such as graph.arrow's source column, adds to the peak).
   */
  async release(): Promise<void> {
    // A new macrotask first: WeakRefs dereferenced in the current one keep their targets alive.
    await new Promise((r) => setImmediate(r));
    await releaseMemory();
    // The finalizers of what that collection freed may not have run yet.
    for (const [id, ref] of this.arrays) if (ref.deref() === undefined) this.dropped(id);
    await Promise.all(
      this.pool.map(async (w, i) => {
        if (w.dead) return;
        const seq = ++w.posted;
        w.port.postMessage({ seq, forget: w.forget.splice(0), collect: true } satisfies ForgetMessage);
        if (w.inFlight++ === 0) w.worker.ref();
        Atomics.store(this.control, 2 * i, seq);
        Atomics.notify(this.control, 2 * i, 1);
        try {
          for (let f = Atomics.load(this.control, 2 * i + 1); f < seq && !w.dead; f = Atomics.load(this.control, 2 * i + 1)) {
            const wait = waitAsync(this.control, 2 * i + 1, f);
            if (wait.async) await wait.value;
          }
        } finally {
          if (--w.inFlight === 0) w.worker.unref();
        }
      }),
    );
  }

  private idOf(arr: TypedArray): number {
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
    return id;
  }

  private defOf(id: number): ArrayDef {
    const arr = this.arrays.get(id)?.deref();
    if (!arr) throw new Error(`array ${id} was released while a kernel still used it`);
    return { id, buffer: arr.buffer as SharedArrayBuffer, type: arr.constructor.name, byteOffset: arr.byteOffset, length: arr.length };
  }

  /**
   * Tells each idle worker at once which arrays the main thread has dropped (a worker busy with
   * runs learns it with its next task anyway), so their buffers are freed without waiting for the
   * next run that needs a worker, which on a small population can be a rebuild a day later.
   */
  private flushForget(): void {
    this.flushing = false;
    if (this.closing) return;
    this.pool.forEach((w, i) => {
      if (w.dead || w.inFlight > 0 || w.forget.length === 0) return;
      const seq = ++w.posted;
      w.port.postMessage({ seq, forget: w.forget.splice(0) } satisfies ForgetMessage);
      Atomics.store(this.control, 2 * i, seq);
      Atomics.notify(this.control, 2 * i, 1);
    });
  }

  /** Sends a task to worker `i` and wakes it; returns the task's number. */
  private post(i: number, task: Omit<Task, 'seq' | 'defs' | 'forget'>, used: number[]): number {
    const w = this.pool[i];
    const defs: ArrayDef[] = [];
    for (const id of used) {
      if (w.known.has(id)) continue;
      w.known.add(id);
      defs.push(this.defOf(id));
    }
    const seq = ++w.posted;
    w.port.postMessage({ ...task, seq, defs, forget: w.forget.splice(0) } satisfies Task);
    if (w.inFlight++ === 0) w.worker.ref();
    Atomics.store(this.control, 2 * i, seq);
    Atomics.notify(this.control, 2 * i, 1);
    return seq;
  }

  /** Waits for worker `i` to finish task `seq` and returns its result. */
  private async collect(i: number, seq: number): Promise<TaskResult> {
    const w = this.pool[i];
    const done = 2 * i + 1;
    try {
      for (;;) {
        // Read the word before the port: the worker posts its result before it bumps the word,
        // so once the word says `seq` is finished, its result is on the port.
        let finished = Atomics.load(this.control, done);
        if (finished < seq && !w.dead) {
          const until = performance.now() + WAIT_SPIN_MS;
          while ((finished = Atomics.load(this.control, done)) < seq && performance.now() < until);
        }
        for (let m = receiveMessageOnPort(w.port); m; m = receiveMessageOnPort(w.port)) {
          const r = m.message as TaskResult;
          w.inbox.set(r.seq, r);
        }
        const out = w.inbox.get(seq);
        if (out) {
          w.inbox.delete(seq);
          return out;
        }
        if (w.dead) throw w.dead;
        if (finished >= seq) throw new Error(`kernel worker ${i} finished task ${seq} without a result`);
        const wait = waitAsync(this.control, done, finished);
        if (wait.async) await wait.value;
      }
    } finally {
      if (--w.inFlight === 0) w.worker.unref();
    }
  }

  async run(kernel: AnyKernel, args: object, rows: number, opts?: RunOptions): Promise<number[][]> {
    checkArgs(kernel, args);
    const wire: Record<string, unknown> = {};
    const used: number[] = [];
    for (const [k, v] of Object.entries(args as Record<string, unknown>)) {
      if (isTypedArray(v)) {
        const id = this.idOf(v);
        used.push(id);
        wire[k] = { $array: id } satisfies ArrayRef;
      } else wire[k] = v;
    }
    const ranges = chunkRanges(rows, kernelRanges(kernel, opts));
    const slot = this.nextSlot;
    this.nextSlot = (slot + 1) % CLAIM_SLOTS;
    Atomics.store(this.claimView, slot, 0);
    const task = { module: kernel.module, kernel: kernel.name, ranges: ranges.flat(), claims: this.claimView.buffer as SharedArrayBuffer, slot, args: wire };
    const helpers = Math.min(this.pool.length, ranges.length - 1);
    // Checked before any task goes out, so no worker is left with a task nobody collects.
    const dead = this.pool.slice(0, helpers).find((w) => w.dead);
    if (dead) throw dead.dead;
    const seqs: number[] = [];
    for (let i = 0; i < helpers; i++) seqs.push(this.post(i, task, used));
    const results: number[][] = ranges.map(() => []);
    // The calling thread claims chunks too: it starts at once, while the workers wake up.
    let own: unknown;
    try {
      const count = ranges.length;
      const local = kernelArgs(args);
      for (let c = Atomics.add(this.claimView, slot, 1); c < count; c = Atomics.add(this.claimView, slot, 1)) {
        results[c] = kernel.fn(local, ranges[c][0], ranges[c][1]) ?? [];
      }
    } catch (err) {
      own = err;
    }
    // Wait for every worker before failing, so no chunk is still running when the caller reacts.
    const settled = await Promise.allSettled(seqs.map((seq, i) => this.collect(i, seq)));
    if (own !== undefined) throw own;
    for (const s of settled) {
      if (s.status === 'rejected') throw s.reason;
      const out = s.value;
      if (out.error) {
        const err = new Error(`${out.error.message} (in kernel ${kernel.name} on a worker)`);
        err.name = out.error.name;
        if (out.error.stack) err.stack = `${err.name}: ${err.message}\n${out.error.stack.split('\n').slice(1).join('\n')}`;
        throw err;
      }
      out.chunks!.forEach((c, k) => (results[c] = out.results![k] ?? []));
    }
    return results;
  }

  async reduce(kernel: AnyKernel, args: object, rows: number, opts?: RunOptions): Promise<number[]> {
    return sumPartials(await this.run(kernel, args, rows, opts));
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.pool.map((w) => w.worker.terminate()));
  }
}
