// Worker-thread entry for the kernel pool. Node 20 cannot load TypeScript by itself, so register
// tsx's loader before importing the TypeScript worker body.
import { register } from 'tsx/esm/api';

register();
const { default: runTask } = await import('./worker.ts');
export default runTask;
