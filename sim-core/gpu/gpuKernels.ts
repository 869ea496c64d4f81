/**
 * Which kernel calls run on the device, and how: a kernel declared with a WGSL version
 * (sim-core/kernel.ts `kernel.gpu`, sim-core/gpu/wgslKernel.ts) whose builder accepts the call's
 * arguments gets the executor's call: its shader, its arrays in binding order, its uniform words
 * and which arrays it writes, all laid out from the kernel's spec. Every other call returns
 * undefined and the executor runs it on the CPU, so a kernel moves to the GPU one declaration at
 * a time, and a kernel declared with a WGSL version is always reachable here.
 *
 * Besides its builder's own checks, a call stays on the CPU when the device could not bind its
 * data: an array of a type its WGSL version does not take (WgslKernel.narrow; Float64Array CSR
 * offsets, past 2^31 edges), an absent optional array the shader binds, an array larger than the
 * adapter's largest storage binding, except split CSR targets, which are bound as up to
 * MAX_SPLIT_PARTS ranges of one buffer (wgslKernel.ts SPLIT_TARGETS) as long as that buffer is
 * within the adapter's largest buffer, or more storage bindings than the adapter allows per shader.
 */
import { checkArgs, type AnyKernel, type ArrayTag, type KernelSpec } from '../kernel.ts';
import type { TypedArray } from '../table.ts';
import type { Gpu } from './device.ts';
import { MAX_SPLIT_PARTS, layoutOf, paramWords, splitParts, type Launch, type WgslKernel } from './wgslKernel.ts';

/** An array bound as `parts` ranges of `partBytes` (wgslKernel.ts SPLIT_TARGETS). */
export interface Split {
  split: TypedArray;
  partBytes: number;
  parts: number;
  /**
   * Bytes bound from the array's start (default all of it): a table with room to grow binds only
   * the rows in use, so its capacity may pass the binding limit while they do not.
   */
  bytes?: number;
}

/**
 * Read-only arrays bound together as one storage buffer, each at a word offset (`packOffsets`),
 * so that a kernel reading many columns stays within the adapter's storage bindings per shader
 * (WebGPU's default is 8). The executor keeps the packed buffer and refreshes a member only when
 * that array changed since (sim-core/gpu/executor.ts); the shader must not write them.
 */
export interface Pack {
  pack: TypedArray[];
}

/** Word offset of each member of a pack: members follow each other, each padded to whole words. */
export function packOffsets(members: readonly TypedArray[]): number[] {
  const out: number[] = [];
  let w = 0;
  for (const m of members) {
    out.push(w);
    w += Math.ceil(m.byteLength / 4);
  }
  return out;
}

/** Bytes of a pack's buffer. */
export const packBytes = (members: readonly TypedArray[]) => members.reduce((n, m) => n + Math.ceil(m.byteLength / 4) * 4, 0);

/** Elements [from, to) of an array, the only ones a shader writes. */
export interface WrittenRows {
  array: TypedArray;
  from: number;
  to: number;
}

/** A host table of which the shader reads elements [from, to) only: those go up at every call. */
export interface HostRows {
  table: TypedArray;
  from: number;
  to: number;
}

export interface GpuCall {
  shader: string;
  /** Rows of the grid (words for packed kernels). */
  gridRows: number;
  /** Uniform words after (gridRows, stride). */
  params: number[];
  /** Storage bindings 1.. in order (a split array takes `parts` of them, a pack one). */
  arrays: Array<TypedArray | Split | Pack>;
  /**
   * Those of `arrays` the shader writes: whole, or only elements [from, to) (the host keeps a valid
   * copy of the rest, and may write there before reading those back: residency.ts hostWrote).
   */
  writes: Array<TypedArray | WrittenRows>;
  /**
   * Arrays among `arrays` that the host may rewrite between kernels without telling the executor:
   * uploaded at every call: the behaviour table (interventions and archetype rounds change it), the
   * recommender's records and candidate lists. Arrays whose host writes are announced
   * (executor.ts hostWrote, with the rows written) are not host tables. The shader must not write them.
   */
  hostTables?: Array<TypedArray | HostRows>;
  /** A result buffer of this many u32 words, bound last (zeroed), read back and passed to finish. */
  resultWords?: number;
  /**
   * The result words are the call's partials, one per chunk of the CPU's chunking (countMask): the
   * executor returns each as a partial of its own, so callers see the CPU's shape.
   */
  wordPerChunk?: boolean;
  finish?: (words: number[]) => number[];
}

/** Largest row degree of a CSR, cached per offsets array (CSRs are not changed in place). */
const maxDegrees = new WeakMap<Int32Array, number>();
export function maxDegree(offsets: Int32Array): number {
  let m = maxDegrees.get(offsets);
  if (m === undefined) {
    m = 0;
    for (let v = 0; v + 1 < offsets.length; v++) m = Math.max(m, offsets[v + 1] - offsets[v]);
    maxDegrees.set(offsets, m);
  }
  return m;
}

/** rng_below is exact below this many neighbours (rng.wgsl.ts). */
export const EXACT_BELOW = 2 ** 21;

export const isSplit = (x: TypedArray | Split | Pack): x is Split => 'split' in x;
export const isPack = (x: TypedArray | Split | Pack): x is Pack => 'pack' in x;

/** The constructor an array must have to be bound: its tag's one type, or the version's narrowing. */
const ONE_TYPE: Partial<Record<ArrayTag, string>> = { f32: 'Float32Array', f64: 'Float64Array', i8: 'Int8Array', u8: 'Uint8Array', i16: 'Int16Array', u16: 'Uint16Array', i32: 'Int32Array', u32: 'Uint32Array', offsets: 'Int32Array' };

/**
 * The types the arrays a version binds (in any variant) must have, by name, cached per version; an
 * array narrowed to `num` is left to the builder.
 */
const bindTypes = new WeakMap<WgslKernel, Array<[string, string]>>();
function typesOf(k: AnyKernel, def: WgslKernel): Array<[string, string]> {
  let t = bindTypes.get(def);
  if (!t) {
    const spec = k.spec as KernelSpec;
    const tags: Record<string, string> = { ...spec.reads, ...spec.writes };
    const used = new Set((def.variants ?? ['']).flatMap((v) => layoutOf(k.name, spec, def, v).used));
    t = [];
    for (const name of used) {
      if (def.narrow?.[name] === 'num') continue;
      const tag = (def.narrow?.[name] ?? tags[name].replace(/\?$/, '')) as ArrayTag;
      const ctor = ONE_TYPE[tag];
      if (!ctor) throw new Error(`kernel ${k.name}'s WGSL version binds ${name}, tagged ${tag}, without narrowing it (WgslKernel.narrow)`);
      t.push([name, ctor]);
    }
    bindTypes.set(def, t);
  }
  return t;
}

/**
 * The call for kernel k, or undefined for the CPU. `maxBinding` is the largest storage binding in
 * bytes (the adapter's, or less to test splitting): CSR targets past it are split into up to
 * splitParts(adapter) ranges (or as many as the builder asks for); any other array past it keeps
 * the call on the CPU.
 */
export function gpuKernelFor(k: AnyKernel, a: Record<string, unknown>, rows: number, gpu: Gpu, maxBinding = gpu.limits.maxStorageBufferBindingSize): GpuCall | undefined {
  const def = k.gpu;
  if (!def) return undefined;
  checkArgs(k, a);
  // Ranges start at multiples of the offset alignment.
  const align = gpu.limits.minStorageBufferOffsetAlignment;
  const partBytes = Math.floor(maxBinding / align) * align;
  for (const [name, ctor] of typesOf(k, def)) {
    const v = a[name];
    if (v !== undefined && (v as object).constructor.name !== ctor) return undefined;
  }
  const launch = def.build(a, rows, { partBytes, parts: splitParts(gpu.limits) });
  if (!launch) return undefined;
  const layout = layoutOf(k.name, k.spec, def, launch.variant ?? (def.variants ?? [''])[0]);
  const storage = gpu.limits.maxStorageBuffersPerShaderStage;
  const parts = !layout.split ? 0 : launch.parts === 'most' ? Math.min(MAX_SPLIT_PARTS, storage - layout.others) : (launch.parts ?? splitParts(gpu.limits));
  if (layout.split && parts < 1) return undefined;
  const call = callOf(k, def, layout, a, launch, partBytes, parts);
  if (!call) return undefined;
  const fits = (x: TypedArray | Split | Pack) =>
    isPack(x) ? packBytes(x.pack) <= maxBinding : isSplit(x) ? x.parts > 0 && (x.bytes ?? x.split.byteLength) <= x.parts * partBytes && x.split.byteLength <= gpu.limits.maxBufferSize : x.byteLength <= maxBinding;
  // A shader with more storage bindings than the adapter allows would not compile.
  const bindings = call.arrays.reduce((n, x) => n + (!isPack(x) && isSplit(x) ? x.parts : 1), call.resultWords ? 1 : 0);
  return bindings <= storage && call.arrays.every(fits) ? call : undefined;
}

/** The shader of a kernel's WGSL version for a variant (default its first) and `parts` ranges of a split array. */
export function shaderOf(k: AnyKernel, variant?: string, parts = 0): string {
  if (!k.gpu) throw new Error(`kernel ${k.name} has no WGSL version`);
  return layoutOf(k.name, k.spec, k.gpu, variant ?? (k.gpu.variants ?? [''])[0]).shader(parts);
}

/** The executor's call from a builder's launch: arrays, words and writes in the layout's order. */
function callOf(k: AnyKernel, def: WgslKernel, layout: ReturnType<typeof layoutOf>, a: Record<string, unknown>, launch: Launch, partBytes: number, parts: number): GpuCall | undefined {
  const arr = (name: string) => a[name] as TypedArray | undefined;
  const pack = layout.pack.map(arr);
  const arrays: GpuCall['arrays'] = [];
  if (pack.length > 0) {
    if (pack.some((m) => m === undefined)) return undefined;
    arrays.push({ pack: pack as TypedArray[] });
  }
  const writes: GpuCall['writes'] = [];
  for (const x of layout.arrays) {
    const v = arr(x.name);
    if (!v) return undefined;
    const bytes = launch.bytes?.[x.name];
    arrays.push(x.as === 'split' ? { split: v, partBytes, parts, bytes } : x.as === 'range' ? { split: v, partBytes, parts: 1, bytes } : v);
    if (!x.write) continue;
    const w = launch.wrote?.[x.name];
    writes.push(w ? { array: v, from: w[0], to: w[1] } : v);
  }
  if (!launch.resultWords !== !def.result) throw new Error(`kernel ${k.name}'s WGSL version ${def.result ? 'declares a result, but its builder gave no result words' : 'declares no result, but its builder gave result words'}`);
  const params = paramWords(k.name, layout, a, launch, partBytes / 4);
  if (pack.length > 0) params.push(...packOffsets(pack as TypedArray[]));
  const hostTables = launch.hostTables?.map((t) => (typeof t === 'string' ? arr(t)! : { table: arr(t[0])!, from: t[1], to: t[2] }));
  return {
    shader: layout.shader(parts),
    gridRows: launch.gridRows,
    params,
    arrays,
    writes,
    ...(hostTables ? { hostTables } : {}),
    ...(launch.resultWords ? { resultWords: launch.resultWords } : {}),
    ...(launch.wordPerChunk ? { wordPerChunk: true } : {}),
    ...(launch.finish ? { finish: launch.finish } : {}),
  };
}
