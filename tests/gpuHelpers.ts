/**
 * How GPU tests find their device: `const gpu = await gpuOrSkip('what the file tests')`, then
 * `describe.skipIf(!gpu)`. With no adapter the file prints one line saying why and skips; with
 * SOCSIM_REQUIRE_GPU=1 (CI, after installing lavapipe) a missing adapter fails the file instead.
 */
import { gpuRequired, openGpu, REQUIRE_GPU_ENV, type Gpu } from '../sim-core/gpu/device.ts';

export async function gpuOrSkip(what: string): Promise<Gpu | undefined> {
  const g = await openGpu();
  if ('device' in g) return g;
  if (gpuRequired()) throw new Error(`${REQUIRE_GPU_ENV}=1 but ${g.unavailable}`);
  console.log(`skipped (${what}): ${g.unavailable}`);
  return undefined;
}
