// Worker-thread entry for the kernel pool. Node 20 cannot load TypeScript by itself, so register
// tsx's loader before importing the TypeScript worker body.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { serve } = await import('./worker.ts');
serve(workerData);
