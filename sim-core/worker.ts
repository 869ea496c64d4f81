/**
 * Worker body for the kernel pool: resolves array ids to typed-array views over the shared
 * buffers it has been given (kept for the worker's life) and runs one kernel chunk.
 */
import { kernels } from './kernels.ts';
import type { ArrayDef, ArrayRef, Task } from './exec.ts';
import type { TypedArray } from './table.ts';

// Weakly held: once the main thread drops an array (e.g. the edge list after CSR construction),
// the worker lets go too; if it is collected while still in use, the next task reports it missing
// and the executor sends the handle again.
const arrays = new Map<number, WeakRef<TypedArray>>();

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

function learn(def: ArrayDef): void {
  arrays.set(def.id, new WeakRef(new CTORS[def.type](def.buffer, def.byteOffset, def.length)));
}

type Kernel = (a: unknown, s: number, e: number) => number[] | void;
const loaded = new Map<string, Record<string, Kernel>>();

async function kernelOf(task: Task): Promise<Kernel> {
  const core = (kernels as Record<string, Kernel>)[task.kernel];
  if (core) return core;
  if (!task.module) throw new Error(`unknown kernel ${task.kernel}`);
  let mod = loaded.get(task.module);
  if (!mod) {
    mod = ((await import(task.module)) as { kernels: Record<string, Kernel> }).kernels;
    loaded.set(task.module, mod);
  }
  const fn = mod[task.kernel];
  if (!fn) throw new Error(`${task.module} does not export kernel ${task.kernel}`);
  return fn;
}

export default async function runTask(task: Task): Promise<{ missing?: number[]; result?: number[] }> {
  const fn = await kernelOf(task);
  const held: TypedArray[] = [];
  if (task.defs) for (const d of task.defs) learn(d);
  const args: Record<string, unknown> = {};
  let missing: number[] | undefined;
  for (const [k, v] of Object.entries(task.args)) {
    if (v !== null && typeof v === 'object' && '$array' in v) {
      const id = (v as ArrayRef).$array;
      const arr = arrays.get(id)?.deref();
      if (!arr) {
        arrays.delete(id);
        (missing ??= []).push(id);
      } else held.push(arr);
      args[k] = arr;
    } else args[k] = v;
  }
  if (missing) return { missing };
  return { result: fn(args, task.start, task.end) ?? undefined };
}
