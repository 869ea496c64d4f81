/**
 * Which kernel calls run on the device, and how: for a kernel of sim-core/kernels.ts with a WGSL
 * version (kernels.wgsl.ts) and arguments that version handles, the call's shader, its arrays in
 * binding order, its uniform words and which arrays it writes. Every other call returns undefined
 * and the executor runs it on the CPU, so a kernel moves to the GPU one declaration at a time.
 *
 * A call stays on the CPU when the GPU could not give the same bytes or cannot bind the data:
 * - sampleNeighbor and gatherNeighbor on Float64Array offsets (past 2^31 edges), or on a row of
 *   2^21 or more neighbours (rng_below equals the CPU's float product only below that; rng.wgsl.ts);
 * - thresholdMark on a row of 2^28 or more neighbours (the share comparison; kernels.wgsl.ts);
 * - u8 kernels (gather, gatherNeighbor, countCodes) and copy over part of an array, since they
 *   write whole words;
 * - the opinion kernels on f64 columns or with a parameter that is not finite (the software f32
 *   of softfloat.wgsl.ts takes finite f32 values);
 * - the opinion statistics' sums (treeSum, treeCentralSums) on f64 columns, or about a centre that
 *   is not a finite, normal or zero f64 (the software f64 of softf64.wgsl.ts);
 * - an array larger than the adapter's largest storage binding, except CSR targets, which are
 *   bound as up to splitParts() ranges of one buffer (kernels.wgsl.ts), as long as that buffer is
 *   within the adapter's largest buffer;
 * - a call with more storage bindings than the adapter allows per shader.
 */
import type { AnyKernel } from '../kernel.ts';
import { kernels as core } from '../kernels.ts';
import { kernels as tree, TREE_GROUP } from '../treeSums.ts';
import type { TypedArray } from '../table.ts';
import type { Gpu } from './device.ts';
import { keyWords } from './rng.wgsl.ts';
import { WORKGROUP } from './dispatch.ts';
import { TREE_CENTRAL_WGSL, TREE_CENTRAL_WORDS, TREE_SUM_WGSL, TREE_SUM_WORDS, f64Words, treeCentralValues, treeSumValues } from './treeSums.wgsl.ts';
import { BOUNDED_STEP_F32_WGSL, SEGMENT_BOUNDED_MEAN_F32_WGSL, SEGMENT_MEAN_F32_WGSL, f32Bits } from './opinionKernels.wgsl.ts';
import { MAX_SPLIT_PARTS, splitParts, APPLY_MARKS_U8_WGSL, COMPACT_MASK_U8_WGSL, COPY_WORDS_WGSL, COUNT_CODES_U8_WGSL, GATHER_WORDS_WGSL, COUNT_MASK_U8_WGSL, GATHER_NEIGHBOR_U8_WGSL, GATHER_U8_WGSL, SAMPLE_NEIGHBOR_WGSL, SPREAD_U8_WGSL, THRESHOLD_MARK_U8_WGSL, TRANSITION_U8_WGSL, bernoulliWords } from './kernels.wgsl.ts';

/** An array bound as `parts` ranges of `partBytes` (kernels.wgsl.ts SPLIT_TARGETS). */
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
/** The CPU's f64 share c / deg compares with an f32 threshold as the exact share does below this degree (kernels.wgsl.ts). */
const EXACT_SHARE = 2 ** 28;

/** Finite as an f32 (the parameters the software f32 of softfloat.wgsl.ts takes). */
const finite32 = (v: unknown) => typeof v === 'number' && Number.isFinite(Math.fround(v));
const is = (k: AnyKernel, decl: { name: string; module: string }) => k.name === decl.name && k.module === decl.module;
const words = (bytes: number) => Math.ceil(bytes / 4);

/**
 * The call for kernel k, or undefined for the CPU. `maxBinding` is the largest storage binding in
 * bytes (the adapter's, or less to test splitting): CSR targets past it are split into up to
 * splitParts(adapter) ranges; any other array past it keeps the call on the CPU.
 */
export function gpuKernelFor(k: AnyKernel, a: Record<string, unknown>, rows: number, gpu: Gpu, maxBinding = gpu.limits.maxStorageBufferBindingSize): GpuCall | undefined {
  // Ranges start at multiples of the offset alignment.
  const align = gpu.limits.minStorageBufferOffsetAlignment;
  const partBytes = Math.floor(maxBinding / align) * align;
  const parts = splitParts(gpu.limits);
  const call = build(k, a, rows, partBytes, parts, gpu.limits.maxStorageBuffersPerShaderStage);
  if (!call) return undefined;
  const fits = (x: TypedArray | Split | Pack) =>
    isPack(x) ? packBytes(x.pack) <= maxBinding : isSplit(x) ? x.parts > 0 && (x.bytes ?? x.split.byteLength) <= x.parts * partBytes && x.split.byteLength <= gpu.limits.maxBufferSize : x.byteLength <= maxBinding;
  // A shader with more storage bindings than the adapter allows would not compile.
  const bindings = call.arrays.reduce((n, x) => n + (!isPack(x) && isSplit(x) ? x.parts : 1), call.resultWords ? 1 : 0);
  return bindings <= gpu.limits.maxStorageBuffersPerShaderStage && call.arrays.every(fits) ? call : undefined;
}

/** What a kernel's WGSL builder gets besides its arguments: how CSR targets are split. */
export interface SplitPlan {
  /** Bytes of each range of a split array. */
  partBytes: number;
  /** Ranges a split array is bound as (splitParts of the adapter). */
  parts: number;
  /**
   * Ranges a split array can be bound as beside `others` other storage bindings (a result buffer
   * counts), at most MAX_SPLIT_PARTS: for kernels that bind more than splitParts assumes.
   */
  partsBeside(others: number): number;
}

/** Builds a kernel's GPU call, or returns undefined to keep that call on the CPU. */
export type GpuBuilder = (a: Record<string, unknown>, rows: number, plan: SplitPlan) => GpuCall | undefined;

const registered = new Map<string, GpuBuilder>();
const keyOfKernel = (k: { name: string; module: string }) => `${k.module}#${k.name}`;

/**
 * Declares the WGSL version of a kernel declared outside sim-core (the platform's kernels register
 * theirs in platform/gpuKernels.ts), so that gpuKernelFor finds it like the core kernels below.
 */
export function registerGpuKernel(decl: { name: string; module: string }, build: GpuBuilder): void {
  registered.set(keyOfKernel(decl), build);
}

/** Whether each named argument is an array of the given type: a builder's first check. */
export function typedArgs(a: Record<string, unknown>, types: Record<string, abstract new (...args: never[]) => ArrayBufferView>): boolean {
  return Object.entries(types).every(([k, T]) => a[k] instanceof T);
}

export const isSplit = (x: TypedArray | Split | Pack): x is Split => 'split' in x;
export const isPack = (x: TypedArray | Split | Pack): x is Pack => 'pack' in x;

function build(k: AnyKernel, a: Record<string, unknown>, rows: number, partBytes: number, parts: number, storageLimit: number): GpuCall | undefined {
  const part = partBytes / 4;
  if (is(k, core.sampleNeighbor)) {
    const { offsets, targets, out } = a as { offsets: TypedArray; targets: Int32Array; out: Int32Array };
    if (!(offsets instanceof Int32Array) || offsets.length < rows + 1 || maxDegree(offsets) >= EXACT_BELOW) return undefined;
    return { shader: SAMPLE_NEIGHBOR_WGSL(parts), gridRows: rows, params: [part, ...keyWords(a.key as number)], arrays: [offsets, { split: targets, partBytes, parts }, out], writes: [out] };
  }
  if (is(k, core.gatherNeighbor)) {
    const { offsets, targets, src, out } = a as { offsets: TypedArray; targets: Int32Array; src: TypedArray; out: TypedArray };
    if (!(offsets instanceof Int32Array) || offsets.length < rows + 1 || maxDegree(offsets) >= EXACT_BELOW) return undefined;
    if (!(src instanceof Uint8Array && out instanceof Uint8Array) || src === out || out.length !== rows || src.length < rows) return undefined;
    const params = [part, rows, ...keyWords(a.key as number)];
    return { shader: GATHER_NEIGHBOR_U8_WGSL(parts), gridRows: words(rows), params, arrays: [offsets, { split: targets, partBytes, parts }, src, out], writes: [out] };
  }
  if (is(k, core.countMask) || is(k, core.compactMask)) {
    // u8 masks (the social platform's active users); one workgroup per chunk of the CPU's chunking.
    const { mask } = a as { mask: TypedArray };
    const chunkRows = a.chunkRows as number;
    if (!(mask instanceof Uint8Array) || mask.length < rows || !(chunkRows > 0)) return undefined;
    const chunks = Math.ceil(rows / chunkRows);
    const params = [rows, chunkRows, chunks];
    if (is(k, core.countMask)) return { shader: COUNT_MASK_U8_WGSL, gridRows: chunks * WORKGROUP, params, arrays: [mask], writes: [], resultWords: chunks, wordPerChunk: true };
    const { starts, out } = a as { starts: TypedArray; out: TypedArray };
    if (!(starts instanceof Int32Array && out instanceof Int32Array) || starts.length < chunks) return undefined;
    return { shader: COMPACT_MASK_U8_WGSL, gridRows: chunks * WORKGROUP, params, arrays: [mask, starts, out], writes: [out] };
  }
  if (is(k, core.gather)) {
    const { src, index, out } = a as { src: TypedArray; index: Int32Array; out: TypedArray };
    if (src.BYTES_PER_ELEMENT === 4 && src.constructor === out.constructor && src !== out && out.length >= rows && index.length >= rows) {
      // Only rows [0, rows) of out are written: the host keeps the rest.
      return { shader: GATHER_WORDS_WGSL, gridRows: rows, params: [], arrays: [src, index, out], writes: [{ array: out, from: 0, to: rows }] };
    }
    if (!(src instanceof Uint8Array && out instanceof Uint8Array) || out.length !== rows || index.length < rows) return undefined;
    return { shader: GATHER_U8_WGSL, gridRows: words(rows), params: [rows], arrays: [src, index, out], writes: [out] };
  }
  if (is(k, core.copy)) {
    const { src, out } = a as { src: TypedArray; out: TypedArray };
    if (src.constructor !== out.constructor || out.length !== rows || src.length !== rows) return undefined;
    return { shader: COPY_WORDS_WGSL, gridRows: words(out.byteLength), params: [], arrays: [src, out], writes: [out] };
  }
  if (is(k, core.countCodes)) {
    const { codes } = a as { codes: TypedArray };
    const bins = a.k as number;
    if (!(codes instanceof Uint8Array) || codes.length !== rows || bins > 256) return undefined;
    return { shader: COUNT_CODES_U8_WGSL, gridRows: words(rows), params: [rows], arrays: [codes], writes: [], resultWords: 256, finish: (w) => w.slice(0, bins) };
  }
  if (is(k, core.spread)) {
    const { offsets, targets, state, next } = a as { offsets: TypedArray; targets: Int32Array; state: TypedArray; next: TypedArray };
    if (!(offsets instanceof Int32Array) || offsets.length < rows + 1 || !(state instanceof Uint8Array && next instanceof Uint8Array) || state === next) return undefined;
    const params = [part, a.from as number, a.susceptible as number, a.mark as number, ...keyWords(a.key as number), ...bernoulliWords(a.p as number)];
    return { shader: SPREAD_U8_WGSL(parts), gridRows: rows, params, arrays: [offsets, { split: targets, partBytes, parts }, state, next], writes: [next], resultWords: 2 };
  }
  if (is(k, core.thresholdMark)) {
    const { offsets, targets, state, threshold, next } = a as { offsets: TypedArray; targets: Int32Array; state: TypedArray; threshold: TypedArray; next: TypedArray };
    if (!(offsets instanceof Int32Array) || offsets.length < rows + 1 || maxDegree(offsets) >= EXACT_SHARE) return undefined;
    if (!(state instanceof Uint8Array && next instanceof Uint8Array && threshold instanceof Float32Array) || state === next || threshold.length < rows) return undefined;
    return { shader: THRESHOLD_MARK_U8_WGSL(parts), gridRows: rows, params: [part, a.from as number, a.value as number, a.mark as number], arrays: [offsets, { split: targets, partBytes, parts }, state, threshold, next], writes: [next], resultWords: 1 };
  }
  if (is(k, core.transition)) {
    const { state } = a as { state: TypedArray };
    if (!(state instanceof Uint8Array) || state.length !== rows) return undefined;
    const params = [rows, a.from as number, a.to as number, ...keyWords(a.key as number), ...bernoulliWords(a.p as number)];
    return { shader: TRANSITION_U8_WGSL, gridRows: words(rows), params, arrays: [state], writes: [state], resultWords: 1 };
  }
  if (is(k, core.applyMarks)) {
    const { state, next } = a as { state: TypedArray; next: TypedArray };
    if (!(state instanceof Uint8Array && next instanceof Uint8Array) || state.length !== rows || next.length !== rows || state === next) return undefined;
    return { shader: APPLY_MARKS_U8_WGSL, gridRows: words(rows), params: [rows, a.when as number], arrays: [state, next], writes: [state, next], resultWords: 1 };
  }
  if (is(k, core.segmentMean) || is(k, core.segmentBoundedMean)) {
    const { offsets, targets, x, out } = a as { offsets: TypedArray; targets: Int32Array; x: TypedArray; out: TypedArray };
    if (!(offsets instanceof Int32Array) || offsets.length < rows + 1 || !(x instanceof Float32Array && out instanceof Float32Array) || x === out) return undefined;
    const arrays = [offsets, { split: targets, partBytes, parts }, x, out];
    if (is(k, core.segmentMean)) {
      if (!finite32(a.selfWeight)) return undefined;
      return { shader: SEGMENT_MEAN_F32_WGSL(parts), gridRows: rows, params: [part, f32Bits(a.selfWeight as number)], arrays, writes: [out] };
    }
    if (Number.isNaN(a.eps)) return undefined;
    return { shader: SEGMENT_BOUNDED_MEAN_F32_WGSL(parts), gridRows: rows, params: [part, f32Bits(a.eps as number), a.self ? 1 : 0, a.strict ? 1 : 0], arrays, writes: [out] };
  }
  if (is(k, core.boundedStep)) {
    const { x, partner, out } = a as { x: TypedArray; partner: Int32Array; out: TypedArray };
    if (!(x instanceof Float32Array && out instanceof Float32Array) || x === out || !finite32(a.mu) || Number.isNaN(a.eps)) return undefined;
    return { shader: BOUNDED_STEP_F32_WGSL, gridRows: rows, params: [f32Bits(a.eps as number), f32Bits(a.mu as number)], arrays: [x, partner, out], writes: [out] };
  }
  if (is(k, tree.treeSum) || is(k, tree.treeCentralSums)) {
    const { x } = a as { x: TypedArray };
    if (!(x instanceof Float32Array) || x.length < rows) return undefined;
    const groups = Math.ceil(rows / TREE_GROUP);
    const gridRows = groups * WORKGROUP;
    if (is(k, tree.treeSum)) return { shader: TREE_SUM_WGSL, gridRows, params: [rows, groups, 0, 0], arrays: [x], writes: [], resultWords: groups * TREE_SUM_WORDS, finish: treeSumValues };
    // The centre as an f64 the software f64 takes: finite, normal or zero.
    const c = a.c as number;
    if (!Number.isFinite(c) || (c !== 0 && Math.abs(c) < 2 ** -1022)) return undefined;
    return { shader: TREE_CENTRAL_WGSL, gridRows, params: [rows, groups, ...f64Words(c)], arrays: [x], writes: [], resultWords: groups * TREE_CENTRAL_WORDS, finish: treeCentralValues };
  }
  const partsBeside = (others: number) => Math.max(0, Math.min(MAX_SPLIT_PARTS, storageLimit - others));
  return registered.get(keyOfKernel(k))?.(a, rows, { partBytes, parts, partsBeside });
}
