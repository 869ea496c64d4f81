/**
 * The backends that step agents: `cpu` (sim-core/exec.ts: the main thread or a worker pool) and
 * `webgpu` (sim-core/gpu/executor.ts: kernels with a WGSL version on the device, the rest on the
 * CPU executor, arrays resident where they were last written). `auto` takes WebGPU when an adapter
 * is found and says which; otherwise the CPU, with the reason. Every backend gives the same bytes.
 */
import { type Executor } from './exec.ts';
import { createExecutor } from './cpuExecutor.ts';
import { openGpu } from './gpu/device.ts';
import { GpuExecutor } from './gpu/executor.ts';
import { InputError } from './errors.ts';

export const BACKENDS = ['cpu', 'webgpu', 'auto'] as const;
export type BackendName = (typeof BACKENDS)[number];

export interface Backend {
  exec: Executor;
  backend: 'cpu' | 'webgpu';
  /** The WebGPU adapter in words (webgpu only). */
  adapter?: string;
}

/** What backend an executor is (for the manifest). */
export function backendOf(exec: Executor): Omit<Backend, 'exec'> {
  return exec instanceof GpuExecutor ? { backend: 'webgpu', adapter: exec.gpu.adapter } : { backend: 'cpu' };
}

/** For the manifest: a GPU executor's kernel calls by where they ran; undefined on the CPU backend. */
export function kernelCalls(exec: Executor): { webgpu: Record<string, number>; cpu: Record<string, number> } | undefined {
  if (!(exec instanceof GpuExecutor)) return undefined;
  return { webgpu: Object.fromEntries(exec.counts.gpu), cpu: Object.fromEntries(exec.counts.cpu) };
}

/**
 * For the manifest, with SOCSIM_GPU_TIME_KERNELS=1 (openBackend): per GPU kernel, the milliseconds
 * of each call from encoding it (its uploads included) to the queue finishing it (`waited`), or of
 * its pass on the device's clock (`clock`, where the adapter has timestamp queries).
 */
export function kernelTimes(exec: Executor, which: 'waited' | 'clock' = 'waited'): Record<string, number[]> | undefined {
  if (!(exec instanceof GpuExecutor)) return undefined;
  const times = which === 'waited' ? exec.kernelMs : exec.kernelDeviceMs;
  if (times.size === 0) return undefined;
  return Object.fromEntries([...times].map(([k, ms]) => [k, ms.map((x) => Math.round(x * 1000) / 1000)]));
}

/** For the manifest: bytes a GPU executor moved between host and device, by kernel; undefined on the CPU backend. */
export function kernelTransfers(exec: Executor): Record<string, { up: number; down: number }> | undefined {
  return exec instanceof GpuExecutor ? Object.fromEntries([...exec.transfers].map(([k, t]) => [k, { ...t }])) : undefined;
}

export async function openBackend(name: BackendName, threads: number, log: (line: string) => void = () => {}): Promise<Backend> {
  if (name === 'cpu') return { exec: createExecutor(threads), backend: 'cpu' };
  const gpu = await openGpu();
  if (!('device' in gpu)) {
    if (name === 'webgpu') throw new InputError(`--backend webgpu: ${gpu.unavailable}; use --backend cpu or auto`);
    log(`backend auto: ${gpu.unavailable}; using cpu`);
    return { exec: createExecutor(threads), backend: 'cpu' };
  }
  if (name === 'auto') log(`backend auto: webgpu on ${gpu.adapter}`);
  // A diagnosis, not a mode: waiting for each kernel serialises the queue and slows the run.
  const timeKernels = process.env.SOCSIM_GPU_TIME_KERNELS === '1';
  return { exec: new GpuExecutor(gpu, createExecutor(threads), { timeKernels }), backend: 'webgpu', adapter: gpu.adapter };
}
