/**
 * The `cpu` backend's executor: the kernels inline on the main thread for one thread, else on it
 * and a pool of worker threads (pool.ts). Both run the same declarations and give the same bytes.
 */
import { InlineExecutor, type Executor } from './exec.ts';
import { PoolExecutor } from './pool.ts';

/** Creates the `cpu` executor: inline for one thread, a worker pool otherwise. */
export function createExecutor(threads: number): Executor {
  return threads <= 1 ? new InlineExecutor() : new PoolExecutor(threads);
}
