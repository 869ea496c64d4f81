/**
 * How GPU tests find their device: `const gpu = await gpuOrSkip('what the file tests')`, then
 * `describe.skipIf(!gpu)`. With no adapter the file prints one line saying why and skips; with
 * SOCSIM_REQUIRE_GPU=1 (CI, after installing lavapipe) a missing adapter fails the file instead.
 */
import { gpuRequired, openGpu, REQUIRE_GPU_ENV, type Gpu } from '../sim-core/gpu/device.ts';
import { runPass, WORKGROUP } from '../sim-core/gpu/dispatch.ts';

export async function gpuOrSkip(what: string): Promise<Gpu | undefined> {
  const g = await openGpu();
  if ('device' in g) return g;
  if (gpuRequired()) throw new Error(`${REQUIRE_GPU_ENV}=1 but ${g.unavailable}`);
  console.log(`skipped (${what}): ${g.unavailable}`);
  return undefined;
}

/**
 * A test shader over rows: after `prelude` (the WGSL functions under test), `body` runs for each
 * row i < p.rows, reading the input words `ab` and writing the output words `out`.
 */
export function rowShader(prelude: string, body: string): string {
  return /* wgsl */ `
${prelude}
struct Params { rows: u32, stride: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ab: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x + gid.y * p.stride;
  if (i >= p.rows) { return; }
${body}
}`;
}

/**
 * A test shader over rows of three u32 words [a, b, op]: out[i] = the expression `exprs[op]` of a
 * and b (the last one also for any larger op), after `prelude` (the WGSL functions under test).
 */
export function opsShader(prelude: string, exprs: readonly string[]): string {
  const cases = exprs.map((e, i) => (i < exprs.length - 1 ? `    case ${i}u: { out[i] = ${e}; }` : `    default: { out[i] = ${e}; }`));
  return rowShader(
    prelude,
    `  let a = ab[3u * i];
  let b = ab[3u * i + 1u];
  switch ab[3u * i + 2u] {
${cases.join('\n')}
  }`,
  );
}

/** Runs an opsShader over rows [a, b, op]; returns out. */
export async function runOps(gpu: Gpu, shader: string, rows: ReadonlyArray<readonly [number, number, number]>): Promise<Uint32Array> {
  const abo = Uint32Array.from(rows.flatMap(([a, b, op]) => [a >>> 0, b >>> 0, op]));
  return new Uint32Array(await runPass(gpu, shader, { rows: rows.length, params: [], inputs: [abo], outputBytes: rows.length * 4 }));
}
