/**
 * The WebGPU device of the GPU backend (docs/gpu.md): Dawn through the `webgpu` npm
 * package, whose native binary ships inside the package, on any Vulkan, Metal or D3D12 driver.
 * The package is imported lazily, so the CPU path never loads it.
 *
 * The device asks for the adapter's real limits: WebGPU's defaults (128 MiB per storage binding,
 * 65,535 workgroups per dimension) are far below what millions of agents need.
 *
 * `SOCSIM_REQUIRE_GPU=1` (set by `.ci/run`, which installs Mesa's lavapipe) turns "no adapter"
 * from a reason to skip into an error, so CI cannot pass GPU tests by skipping them.
 */
import { vulkanDriverFiles } from './vulkanDrivers.ts';

export interface Gpu {
  device: GPUDevice;
  /** The adapter in words, e.g. "llvmpipe: Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6) 0.0.1 (mesa, software)". */
  adapter: string;
  limits: { maxStorageBufferBindingSize: number; maxBufferSize: number; maxComputeWorkgroupsPerDimension: number; maxStorageBuffersPerShaderStage: number; minStorageBufferOffsetAlignment: number };
  /** The GPU instance the device came from, held so it lives as long as the device. */
  instance: GPU;
  /** Whether the device was given 'timestamp-query' (the executor's timeKernels then reads device times). */
  timestamps?: boolean;
  /**
   * The first error the device reported outside an error scope (an invalid command, whose work it
   * dropped), or its loss: the executor throws it at its next call instead of going on with wrong
   * results.
   */
  failure?: string;
  close(): void;
}

export const REQUIRE_GPU_ENV = 'SOCSIM_REQUIRE_GPU';

/** Whether the environment demands an adapter (CI). */
export function gpuRequired(): boolean {
  return process.env[REQUIRE_GPU_ENV] === '1';
}

/**
 * Opens a device on the first adapter, or returns why none is available (no driver, no adapter,
 * the package's binary missing for this platform). Never throws for a missing GPU.
 */
export async function openGpu(): Promise<Gpu | { unavailable: string }> {
  // Without any Vulkan driver, Dawn would print its own warnings before finding no adapter.
  if (process.platform === 'linux' && vulkanDriverFiles().length === 0) {
    return { unavailable: 'no WebGPU adapter (no Vulkan driver found: no ICD file where the Vulkan loader looks; on Debian 12 install mesa-vulkan-drivers from bookworm-backports)' };
  }
  let webgpu: typeof import('webgpu');
  try {
    webgpu = await import('webgpu');
  } catch (e) {
    return { unavailable: `the webgpu package could not be loaded (${(e as Error).message.split('\n')[0]})` };
  }
  // Dawn's constructors (GPUBufferUsage and the like) are read from the global scope.
  Object.assign(globalThis, webgpu.globals);
  let adapter: GPUAdapter | null;
  // The instance must outlive the device: once it is garbage-collected, Dawn aborts the process on
  // the next submission ("terminate called after throwing ... std::system_error").
  const instance = webgpu.create([]);
  try {
    adapter = await instance.requestAdapter();
  } catch (e) {
    return { unavailable: `no WebGPU adapter (${(e as Error).message.split('\n')[0]})` };
  }
  if (!adapter) return { unavailable: 'no WebGPU adapter (no Vulkan, Metal or D3D12 driver found; on Debian 12 install mesa-vulkan-drivers from bookworm-backports)' };
  const l = adapter.limits;
  const limits = {
    maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
    maxBufferSize: l.maxBufferSize,
    maxComputeWorkgroupsPerDimension: l.maxComputeWorkgroupsPerDimension,
    // Split arrays take several bindings (gpu/kernels.wgsl.ts): WebGPU's default of 8 is too few.
    maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
    minStorageBufferOffsetAlignment: l.minStorageBufferOffsetAlignment,
  };
  const timestamps = adapter.features.has('timestamp-query');
  const device = await adapter.requestDevice({ requiredLimits: limits, requiredFeatures: timestamps ? ['timestamp-query'] : [] });
  const i = adapter.info;
  const words = [i.description || i.device, i.vendor && `(${[i.vendor, i.architecture].filter(Boolean).join(', ')})`].filter(Boolean).join(' ');
  const gpu: Gpu = { device, adapter: words || 'unnamed adapter', limits, instance, timestamps, close: () => device.destroy() };
  device.addEventListener('uncapturederror', (e) => {
    gpu.failure ??= (e as GPUUncapturedErrorEvent).error.message;
  });
  void device.lost.then((info) => {
    if (info.reason !== 'destroyed') gpu.failure ??= `the device was lost (${info.message})`;
  });
  return gpu;
}
