/**
 * How a kernel is declared. A kernel is one heavy loop over rows; it is declared once, with its
 * typed inputs, outputs and scalar parameters, its CPU loop and, where the device can give the
 * same bytes, its WGSL version (sim-core/gpu/wgslKernel.ts: the shader's body and a builder; the
 * bindings, the uniform words and the order of the arrays are generated from the spec), in the
 * `kernels` export of its module. Every executor (inline, worker pool, webgpu) runs that same
 * declaration: phases call `exec.run(kernel, args, rows)` with the declaration itself, the webgpu
 * executor takes the WGSL version from it (`kernel.gpu`) and runs the CPU loop when it has none
 * or its builder declines the call, and a worker thread imports the declaring module by its URL
 * and finds the kernel by name in its `kernels` export (or, for a study's plugin module, in its
 * default export's `kernels`). So there is no registry to forget and nothing registers by import
 * side effect.
 *
 * The contract of `fn(args, start, end)`:
 * - It writes only rows [start, end) of its `writes` arrays (or, where a kernel says so, only
 *   idempotent marks), so chunks can run in any order on any thread and give the same bytes.
 * - `reads` arrays are never written.
 * - Randomness comes only from `rng.ts`, keyed by a `key` parameter and the row or edge index.
 * - It may return a partial result (sums, counts) per chunk; callers combine partials in chunk
 *   order, never in completion order.
 * A WGSL version gives the same writes and partials, byte for byte, for every call its builder
 * accepts (the parity tests under tests/sim-core/gpu check each one).
 *
 * Array types are written as tags; a tag ending in `?` marks an optional argument.
 */
import type { TypedArray } from './table.ts';
import type { WgslKernel } from './gpu/wgslKernel.ts';

interface ArrayTypes {
  f32: Float32Array;
  f64: Float64Array;
  i8: Int8Array;
  u8: Uint8Array;
  i16: Int16Array;
  u16: Uint16Array;
  i32: Int32Array;
  u32: Uint32Array;
  /** Float32Array or Float64Array. */
  float: Float32Array | Float64Array;
  /** CSR row offsets: Int32Array, or Float64Array past 2^31 edges. */
  offsets: Int32Array | Float64Array;
  /** Any numeric typed array. */
  num: TypedArray;
}

export type ArrayTag = keyof ArrayTypes;
export type ArgTag = ArrayTag | `${ArrayTag}?`;

/** Constructors that satisfy each tag, for argument checks. */
const TAG_CTORS: Record<ArrayTag, readonly string[]> = {
  f32: ['Float32Array'],
  f64: ['Float64Array'],
  i8: ['Int8Array'],
  u8: ['Uint8Array'],
  i16: ['Int16Array'],
  u16: ['Uint16Array'],
  i32: ['Int32Array'],
  u32: ['Uint32Array'],
  float: ['Float32Array', 'Float64Array'],
  offsets: ['Int32Array', 'Float64Array'],
  num: ['Float32Array', 'Float64Array', 'Int8Array', 'Uint8Array', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array'],
};

export interface KernelSpec {
  /** Arrays the kernel only reads. */
  reads: Readonly<Record<string, ArgTag>>;
  /** Arrays the kernel writes (and may read): rows [start, end), or idempotent marks. */
  writes: Readonly<Record<string, ArgTag>>;
  /** Scalar parameters (numbers). */
  params: readonly string[];
  /**
   * The rows are the iterations of one loop that must run in order (each may read what an earlier
   * one wrote, anywhere in its arrays): executors always run it as a single chunk, on one thread.
   */
  sequential?: boolean;
}

type Req<R> = { [K in keyof R as R[K] extends `${string}?` ? never : K]: R[K] extends ArrayTag ? ArrayTypes[R[K]] : never };
type Opt<R> = { [K in keyof R as R[K] extends `${string}?` ? K : never]?: R[K] extends `${infer T extends ArrayTag}?` ? ArrayTypes[T] : never };
type Simplify<T> = { [K in keyof T]: T[K] };

/** The argument object of a kernel with spec S, as the kernel sees it. */
export type ArgsOf<S extends KernelSpec> = Simplify<Req<S['reads']> & Opt<S['reads']> & Req<S['writes']> & Opt<S['writes']> & { [P in S['params'][number]]: number }>;

type Loose<R> = { [K in keyof R as R[K] extends `${string}?` ? never : K]: TypedArray } & { [K in keyof R as R[K] extends `${string}?` ? K : never]?: TypedArray };

/**
 * The argument object as a caller passes it: names and parameters checked by the compiler; an
 * array may be any typed array (agent-table columns are typed only at run time), and `checkArgs`
 * checks its element type on every call.
 */
export type CallArgs<S extends KernelSpec> = Simplify<Loose<S['reads']> & Loose<S['writes']> & { [P in S['params'][number]]: number }>;

export interface Kernel<S extends KernelSpec = KernelSpec> {
  readonly name: string;
  /** URL of the module whose `kernels` export holds this kernel (for worker threads). */
  readonly module: string;
  readonly spec: S;
  fn(args: ArgsOf<S>, start: number, end: number): number[] | void;
  /** Its WGSL version, for the webgpu executor; absent: the kernel always runs on the CPU. */
  readonly gpu?: WgslKernel;
}

/** A kernel of any spec, as executors and lists hold them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyKernel = Kernel<any>;

/** A kernel before it is placed in a list (the list gives it its name and module). */
export interface KernelDecl<S extends KernelSpec> {
  spec: S;
  fn(args: ArgsOf<S>, start: number, end: number): number[] | void;
  gpu?: WgslKernel;
}

/**
 * Declares one kernel: its spec, its loop and optionally its WGSL version. `const` keeps the tags
 * literal for `ArgsOf`.
 */
export function kernel<const S extends KernelSpec>(spec: S, fn: (args: ArgsOf<S>, start: number, end: number) => number[] | void, gpu?: WgslKernel): KernelDecl<S> {
  return gpu ? { spec, fn, gpu } : { spec, fn };
}

/**
 * Names a module's kernels: `export const kernels = kernelList(import.meta.url, { fill: kernel(...) })`.
 * The key is the kernel's name; the module must export the result as `kernels`.
 */
// `any`: each entry has its own spec, and argument types are contravariant.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function kernelList<const L extends Record<string, KernelDecl<any>>>(
  module: string,
  decls: L,
): { readonly [K in keyof L]: L[K] extends KernelDecl<infer S> ? Kernel<S> : never } {
  const out: Record<string, AnyKernel> = {};
  for (const [name, d] of Object.entries(decls)) out[name] = Object.freeze(d.gpu ? { name, module, spec: d.spec, fn: d.fn, gpu: d.gpu } : { name, module, spec: d.spec, fn: d.fn });
  return Object.freeze(out) as never;
}

function isTypedArray(v: unknown): v is TypedArray {
  return ArrayBuffer.isView(v) && !(v instanceof DataView);
}

/**
 * Checks an argument object against the kernel's declaration: every required array present with a
 * type its tag allows, every parameter a finite number, nothing undeclared. Per call, not per row.
 */
export function checkArgs(k: AnyKernel, args: object): void {
  const a = args as Record<string, unknown>;
  const s = k.spec as KernelSpec;
  for (const [name, tag] of [...Object.entries(s.reads), ...Object.entries(s.writes)]) {
    const optional = tag.endsWith('?');
    const v = a[name];
    if (v === undefined && optional) continue;
    const ctors = TAG_CTORS[(optional ? tag.slice(0, -1) : tag) as ArrayTag];
    if (!isTypedArray(v) || !ctors.includes(v.constructor.name)) {
      throw new Error(`kernel ${k.name}: argument ${name} must be ${ctors.join(' or ')}, got ${v === undefined ? 'nothing' : (v as object).constructor?.name ?? typeof v}`);
    }
  }
  for (const p of s.params) {
    if (typeof a[p] !== 'number' || !Number.isFinite(a[p])) throw new Error(`kernel ${k.name}: parameter ${p} must be a finite number, got ${String(a[p])}`);
  }
  for (const name of Object.keys(a)) {
    if (!(name in s.reads) && !(name in s.writes) && !s.params.includes(name)) throw new Error(`kernel ${k.name}: undeclared argument ${name}`);
  }
}
