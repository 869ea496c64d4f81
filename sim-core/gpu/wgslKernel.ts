/**
 * A kernel's WGSL version, declared with its CPU loop (sim-core/kernel.ts `kernel(spec, fn, gpu)`):
 * the shader's body (its helpers and `main`) and a builder that says, per call, whether the device
 * gives the CPU's bytes for these arguments, and over what grid. What the body and the builder
 * would otherwise both spell out is generated from the kernel's spec:
 *
 * - the uniform struct `p: Params`: rows and stride (dispatch.ts), `part` when an array is split,
 *   the builder's own `words`, the spec's parameters in order, each encoded as `params` says
 *   (default one u32 word), then the word offset `o_<name>` of each pack member (snake case);
 * - the storage bindings, from binding 1: the pack `inp` (the members, in spec order, bound as one
 *   buffer), then the spec's reads, then its writes, in declaration order, then the result words
 *   (`result`, bound last when the kernel has them);
 * - each array's and parameter's WGSL name, its spec name in snake case (`evAction` is
 *   `ev_action`; a WGSL reserved word, `rows` or `stride` gets a trailing underscore); each
 *   array read or read_write as the spec lists it, its element type i32 for the `i32` and
 *   `offsets` tags, u32 for every other tag (narrower columns are packed four or two to a word,
 *   floats are bit patterns), `atomic<..>` of it where `bind` says so;
 * - the arrays the executor binds, in that order, and which of them the call writes.
 *
 * The builder never lists bindings: it checks what only it knows (lengths, value ranges, exactness
 * bounds) and returns the grid and its words by name. sim-core/gpu/gpuKernels.ts turns that into
 * the executor's call; tests/sim-core/gpu/wgslBindings.test.ts checks every body against its
 * generated header.
 */
import { keyWords } from './rng.wgsl.ts';

/**
 * The parts of a kernel's spec that lay out its WGSL version: array tags by name, parameters
 * (sim-core/kernel.ts KernelSpec; kernel.ts refers to WgslKernel, so this module cannot import it).
 */
export interface SpecShape {
  reads: Readonly<Record<string, string>>;
  writes: Readonly<Record<string, string>>;
  params: readonly string[];
}

/** An array type a WGSL version can take (sim-core/kernel.ts ArrayTag), or `num`: the builder checks. */
export type BoundType = 'f32' | 'f64' | 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'num';

/**
 * How a spec parameter goes into Params: `u32` one word (the default), `i32` one word declared
 * i32 (a signed integer, its two's complement bits), `f32` its float32 bits,
 * `bool` 1 or 0, `key` a counter-RNG key as `<name>_lo`, `<name>_hi` (rng.wgsl.ts), `bernoulli` a
 * probability as `<name>_thr`, `<name>_always` (bernoulliWords), `f64` its words `<name>_hi`,
 * `<name>_lo`, `none` not at all (the builder reads it on the host).
 */
export type ParamWords = 'u32' | 'i32' | 'f32' | 'bool' | 'key' | 'bernoulli' | 'f64' | 'none';

/**
 * How an array binds, besides plainly: `atomic` as array<atomic<T>>; `bits` as array<u32> whatever
 * its tag (an i32 column read as its bit patterns); `pack` as a member of the
 * read-only pack `inp`; `split` (CSR targets, named `targets`) as up to MAX_SPLIT_PARTS ranges
 * read through `tgt(j)` (SPLIT_TARGETS); `range` as one binding of its first `Launch.bytes` bytes
 * (a table with room to grow); `none` not bound.
 */
export type Binding = 'atomic' | 'bits' | 'pack' | 'split' | 'range' | 'none';

/** The arguments as a builder sees them: arrays already of the types the bindings need. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type GpuArgs = { readonly [name: string]: any };

/** What a builder gets besides the arguments: how split arrays are bound. */
export interface SplitPlan {
  /** Bytes of each range of a split array (the largest binding, rounded down to the offset alignment). */
  partBytes: number;
  /** Ranges a split array is bound as (splitParts of the adapter). */
  parts: number;
}

/** One call on the device, as a builder describes it. */
export interface Launch {
  /** Rows of the grid (words for kernels over packed columns). */
  gridRows: number;
  /** Values of the kernel's `words`, by name. */
  words?: Readonly<Record<string, number>>;
  /** Which of the kernel's `variants` (default the first). */
  variant?: string;
  /**
   * Ranges of the split array: a number, or `most`, as many as the adapter's storage bindings
   * leave beside the kernel's others (at most MAX_SPLIT_PARTS); default SplitPlan.parts.
   */
  parts?: number | 'most';
  /** Bytes bound of a `range` or `split` array, from its start (default all of it). */
  bytes?: Readonly<Record<string, number>>;
  /**
   * Elements [from, to) of a written array, the only ones the shader writes (the host keeps a valid
   * copy of the rest); a written array not named here is written whole.
   */
  wrote?: Readonly<Record<string, readonly [number, number]>>;
  /**
   * Arrays the host may rewrite between kernels without telling the executor, uploaded at every
   * call (sim-core/gpu/gpuKernels.ts GpuCall.hostTables): whole, or only elements [from, to).
   */
  hostTables?: ReadonlyArray<string | readonly [string, number, number]>;
  /** Result words (zeroed, read back); the kernel must declare `result`. */
  resultWords?: number;
  /** The result words are the partials of the CPU's chunks, one each (gpuKernels.ts GpuCall). */
  wordPerChunk?: boolean;
  finish?: (words: number[]) => number[];
}

export interface WgslKernel {
  /** Params words the builder computes (Launch.words), before the spec's parameters; for every variant or per variant. */
  readonly words?: readonly string[] | ((variant: string) => readonly string[]);
  /** Encodings of the spec's parameters; a parameter not named is one u32 word. */
  readonly params?: Readonly<Record<string, ParamWords>>;
  /** Arrays not bound plainly, for every variant or per variant. */
  readonly bind?: Readonly<Record<string, Binding>> | ((variant: string) => Readonly<Record<string, Binding>>);
  /**
   * The one type an array whose tag allows several (`num`, `float`) must have for this body; other
   * types keep the call on the CPU. `num` here leaves the type to the builder (a copy of words
   * takes any 4-byte type). `offsets` arrays must be Int32Array (graphs past 2^31 edges stay on
   * the CPU).
   */
  readonly narrow?: Readonly<Record<string, BoundType>>;
  /** Result words bound last as `result`: `atomic` (array<atomic<u32>>) or `plain` (array<u32>). */
  readonly result?: 'atomic' | 'plain';
  /** Names of the shader's variants (the body's text and `bind` may depend on it); default one, ''. */
  readonly variants?: readonly string[];
  /** The WGSL after the generated header: helpers and `main`, for `parts` ranges of a split array. */
  body(v: { variant: string; parts: number }): string;
  /** This call on the device, or undefined to keep it on the CPU. */
  build(a: GpuArgs, rows: number, plan: SplitPlan): Launch | undefined;
}

/** Declares a kernel's WGSL version (the identity: for the type, and to mark it as one). */
export function wgslKernel(def: WgslKernel): WgslKernel {
  return Object.freeze({ ...def, [WGSL]: true });
}
const WGSL = Symbol('wgslKernel');
/** Whether a value is a WGSL version made by wgslKernel (tests find every one). */
export const isWgslKernel = (x: unknown): x is WgslKernel => typeof x === 'object' && x !== null && WGSL in x;

/** The most ranges a split array is bound as. */
export const MAX_SPLIT_PARTS = 8;
/** Storage bindings a split kernel of sim-core has besides its split array (thresholdMark's five, the most). */
const OTHER_STORAGE = 5;

/**
 * How many bindings a split array takes on an adapter unless its builder asks for `most`: what its
 * storage-buffer limit leaves beside five other arrays, at most MAX_SPLIT_PARTS (3 at WebGPU's
 * default limit of 8; 8 on lavapipe, whose limit is 16).
 */
export function splitParts(limits: { maxStorageBuffersPerShaderStage: number }): number {
  return Math.max(0, Math.min(MAX_SPLIT_PARTS, limits.maxStorageBuffersPerShaderStage - OTHER_STORAGE));
}

/**
 * CSR targets bound as `parts` read-only ranges from binding `first` on, each `p.part` elements
 * (the last one shorter, unused ones repeating the first), so a graph can pass the adapter's
 * largest storage binding; tgt(j) reads element j.
 */
export const SPLIT_TARGETS = (first: number, parts: number) => /* wgsl */ `
${Array.from({ length: parts }, (_, i) => `@group(0) @binding(${first + i}) var<storage, read> targets${i}: array<i32>;`).join('\n')}
fn tgt(j: u32) -> i32 {
  let c = j / p.part;
  let o = j - c * p.part;
  switch c {
${Array.from({ length: parts - 1 }, (_, i) => `    case ${i}u: { return targets${i}[o]; }`).join('\n')}
    default: { return targets${parts - 1}[o]; }
  }
}`;

/** The bits of Math.fround(v), as the shaders' f32 parameters. */
export function f32Bits(v: number): number {
  return new Uint32Array(Float32Array.of(v).buffer)[0];
}

const f64 = new Float64Array(1);
const f64w = new Uint32Array(f64.buffer);
/** An f64's words, high first. */
export function f64Words(v: number): [number, number] {
  f64[0] = v;
  return [f64w[1], f64w[0]];
}

/**
 * [threshold, always] of a Bernoulli(p) draw as the CPU makes it, `uniform(key, row) < p`:
 * uniform = hash / 2^32 exactly, so the draw succeeds iff hash < ceil(p 2^32), computed here in
 * f64 exactly; `always` covers p >= 1, whose threshold 2^32 is no u32.
 */
export function bernoulliWords(p: number): [number, number] {
  if (!(p > 0)) return [0, 0];
  const t = p * 4294967296;
  return t >= 4294967296 ? [0, 1] : [Math.ceil(t), 0];
}

/** Words of each encoding, by the field names they take. */
const ENCODINGS: Record<Exclude<ParamWords, 'none'>, { suffixes: readonly string[]; words(v: number): number[] }> = {
  u32: { suffixes: [''], words: (v) => [v] },
  i32: { suffixes: [''], words: (v) => [v] },
  f32: { suffixes: [''], words: (v) => [f32Bits(v)] },
  bool: { suffixes: [''], words: (v) => [v ? 1 : 0] },
  key: { suffixes: ['_lo', '_hi'], words: keyWords },
  bernoulli: { suffixes: ['_thr', '_always'], words: bernoulliWords },
  f64: { suffixes: ['_hi', '_lo'], words: f64Words },
};

/** WGSL keywords and reserved words a kernel's argument might be named, and Params' own fields. */
const RESERVED = new Set(['rows', 'stride', 'alias', 'break', 'case', 'const', 'continue', 'default', 'else', 'false', 'fn', 'for', 'if', 'let', 'loop', 'override', 'return', 'struct', 'switch', 'true', 'var', 'while', 'active', 'filter', 'from', 'get', 'layout', 'match', 'meta', 'mod', 'module', 'move', 'new', 'null', 'of', 'precision', 'ref', 'resource', 'self', 'set', 'shared', 'static', 'target', 'type', 'use', 'where', 'with']);

/** A spec name as a WGSL identifier: snake case; a reserved word gets a trailing underscore. */
export function wgslName(name: string): string {
  const s = snake(name);
  return RESERVED.has(s) ? `${s}_` : s;
}
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** One bound array of a layout (pack members are not among them). */
export interface BoundArray {
  name: string;
  as: 'plain' | 'atomic' | 'split' | 'range';
  write: boolean;
  /** The element type: i32 or u32. */
  elem: 'i32' | 'u32';
}

/** The generated part of a kernel's shader for one variant: what gpuKernels.ts binds, and the text. */
export interface Layout {
  /** Pack members, in spec order. */
  pack: string[];
  /** Arrays bound after the pack, in order. */
  arrays: BoundArray[];
  /** The builder's words, in order. */
  words: readonly string[];
  /** Params fields after rows and stride, in order. */
  fields: string[];
  /** Whether `part` is a field (some array is split). */
  split: boolean;
  /** The spec's parameters in Params, in order, with their encodings. */
  encoded: Array<{ param: string; enc: Exclude<ParamWords, 'none'> }>;
  /** Every array the shader reads or writes (the pack's members included), for the builder's type checks. */
  used: string[];
  /** The shader for `parts` ranges of the split array (built once per number). */
  shader(parts: number): string;
  /** Storage bindings besides the split array's ranges. */
  others: number;
}

const layouts = new WeakMap<WgslKernel, Map<string, Layout>>();

/** The layout of a kernel's WGSL version for a variant; throws where the version does not fit its spec. */
export function layoutOf(name: string, spec: SpecShape, def: WgslKernel, variant: string): Layout {
  let byVariant = layouts.get(def);
  if (!byVariant) layouts.set(def, (byVariant = new Map()));
  let l = byVariant.get(variant);
  if (!l) byVariant.set(variant, (l = makeLayout(name, spec, def, variant)));
  return l;
}

function makeLayout(kernel: string, spec: SpecShape, def: WgslKernel, variant: string): Layout {
  const fail = (why: string): never => {
    throw new Error(`kernel ${kernel}'s WGSL version: ${why}`);
  };
  if (!(def.variants ?? ['']).includes(variant)) fail(`no variant '${variant}' (it has ${(def.variants ?? ['']).map((v) => `'${v}'`).join(', ')})`);
  const bind = typeof def.bind === 'function' ? def.bind(variant) : (def.bind ?? {});
  const tags: Record<string, string> = { ...spec.reads, ...spec.writes };
  for (const name of Object.keys(bind)) if (!(name in tags)) fail(`bind names ${name}, which is not an array of its spec`);
  for (const name of Object.keys(def.narrow ?? {})) if (!(name in tags)) fail(`narrow names ${name}, which is not an array of its spec`);
  for (const name of Object.keys(def.params ?? {})) if (!spec.params.includes(name)) fail(`params names ${name}, which is not a parameter of its spec`);
  const pack: string[] = [];
  const arrays: BoundArray[] = [];
  for (const [name, tag] of [...Object.entries(spec.reads), ...Object.entries(spec.writes)]) {
    const write = name in spec.writes;
    const as = bind[name] ?? 'plain';
    if (as === 'none') continue;
    const base = tag.replace(/\?$/, '');
    if (as === 'pack') {
      if (write) fail(`${name} is written, so it cannot be in the read-only pack`);
      pack.push(name);
      continue;
    }
    if (as === 'split' && (name !== 'targets' || write)) fail(`only the read-only CSR targets, named targets, can be split (not ${name})`);
    arrays.push({ name, as: as === 'bits' ? 'plain' : as, write, elem: as !== 'bits' && (base === 'i32' || base === 'offsets') ? 'i32' : 'u32' });
  }
  const split = arrays.some((x) => x.as === 'split');
  const encoded: Layout['encoded'] = [];
  const signed = new Set<string>();
  const words = typeof def.words === 'function' ? def.words(variant) : (def.words ?? []);
  const fields = [...(split ? ['part'] : []), ...words];
  for (const param of spec.params) {
    const enc = def.params?.[param] ?? 'u32';
    if (enc === 'none') continue;
    encoded.push({ param, enc });
    for (const s of ENCODINGS[enc].suffixes) fields.push(wgslName(param) + s);
    if (enc === 'i32') signed.add(wgslName(param));
  }
  for (const m of pack) fields.push(`o_${snake(m)}`);
  if (new Set(fields).size !== fields.length || fields.includes('rows') || fields.includes('stride')) fail(`two Params fields share a name (${fields.join(', ')})`);
  const others = (pack.length > 0 ? 1 : 0) + arrays.filter((x) => x.as !== 'split').length + (def.result ? 1 : 0);
  const shaders = new Map<number, string>();
  const shader = (parts: number) => {
    let s = shaders.get(parts);
    if (s === undefined) shaders.set(parts, (s = header(pack, arrays, fields, signed, def.result, parts) + def.body({ variant, parts })));
    return s;
  };
  return { pack, arrays, words, fields, split, encoded, used: [...pack, ...arrays.map((x) => x.name)], shader, others };
}

/** Params and the bindings, as WGSL. */
function header(pack: string[], arrays: BoundArray[], fields: string[], signed: ReadonlySet<string>, result: WgslKernel['result'], parts: number): string {
  const lines = [`struct Params { ${['rows', 'stride', ...fields].map((f) => `${f}: ${signed.has(f) ? 'i32' : 'u32'}`).join(', ')} }`, '@group(0) @binding(0) var<uniform> p: Params;'];
  let b = 1;
  if (pack.length > 0) lines.push(`@group(0) @binding(${b++}) var<storage, read> inp: array<u32>;`);
  for (const x of arrays) {
    if (x.as === 'split') {
      lines.push(SPLIT_TARGETS(b, parts).trim());
      b += parts;
      continue;
    }
    const elem = x.as === 'atomic' ? `atomic<${x.elem}>` : x.elem;
    lines.push(`@group(0) @binding(${b++}) var<storage, ${x.write ? 'read_write' : 'read'}> ${wgslName(x.name)}: array<${elem}>;`);
  }
  if (result) lines.push(`@group(0) @binding(${b}) var<storage, read_write> result: array<${result === 'atomic' ? 'atomic<u32>' : 'u32'}>;`);
  return lines.join('\n') + '\n';
}

/** The Params words of a call after rows and stride (the pack's offsets excepted, which gpuKernels.ts appends). */
export function paramWords(kernel: string, l: Layout, a: GpuArgs, launch: Launch, part: number): number[] {
  const out: number[] = l.split ? [part] : [];
  for (const w of l.words) {
    const v = launch.words?.[w];
    if (typeof v !== 'number') throw new Error(`kernel ${kernel}'s WGSL builder gave no word ${w}`);
    out.push(v);
  }
  for (const { param, enc } of l.encoded) out.push(...ENCODINGS[enc].words(a[param] as number));
  return out;
}
