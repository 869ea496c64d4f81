// Worker-thread entry for the kernel pool (pool.ts): serves tasks until the pool closes.
import { workerData } from 'node:worker_threads';
import { serve } from './worker.ts';

serve(workerData);
