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

export default function runTask(task: Task): { missing?: number[]; result?: number[] } {
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
  const fn = kernels[task.kernel] as (a: unknown, s: number, e: number) => number[] | void;
  return { result: fn(args, task.start, task.end) ?? undefined };
}
