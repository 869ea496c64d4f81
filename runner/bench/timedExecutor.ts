/**
 * An executor wrapper for the benchmarks: runs every kernel on the wrapped executor and records
 * the wall milliseconds of each call by kernel name (dispatch, the chunks on the workers, and the
 * wait for the last one), so a step's time splits into its kernels.
 */
import { releaseArrays, type Executor, type RunOptions } from '../../sim-core/exec.ts';
import type { CallArgs, Kernel, KernelSpec } from '../../sim-core/kernel.ts';

export class TimedExecutor implements Executor {
  private readonly inner: Executor;
  /** Milliseconds of each call, by kernel name, in call order. */
  readonly kernelMs = new Map<string, number[]>();

  constructor(inner: Executor) {
    this.inner = inner;
  }

  get threads(): number {
    return this.inner.threads;
  }

  private record(name: string, t0: number): void {
    const ms = performance.now() - t0;
    let xs = this.kernelMs.get(name);
    if (!xs) this.kernelMs.set(name, (xs = []));
    xs.push(ms);
  }

  async run<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<number[][]> {
    const t0 = performance.now();
    const out = await this.inner.run(kernel, args, rows, opts);
    this.record(kernel.name, t0);
    return out;
  }

  async reduce<S extends KernelSpec>(kernel: Kernel<S>, args: CallArgs<S>, rows: number, opts?: RunOptions): Promise<number[]> {
    const t0 = performance.now();
    const out = await this.inner.reduce(kernel, args, rows, opts);
    this.record(kernel.name, t0);
    return out;
  }

  release(): Promise<void> {
    return releaseArrays(this.inner);
  }

  /** Forgets the calls so far (the warm-up's). */
  clear(): void {
    this.kernelMs.clear();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
