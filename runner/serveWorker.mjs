// Worker-thread entry for `socsim run --serve`: the dashboard server runs here, so it answers
// requests and pushes events while the main thread is busy inside a long step. Node 20 cannot load
// TypeScript by itself, so register tsx's loader before importing the TypeScript body.
import { register } from 'tsx/esm/api';
import { parentPort, workerData } from 'node:worker_threads';

register();
const { startServer } = await import('./serve.ts');
try {
  const server = await startServer({ ...workerData, onClients: (n) => parentPort.postMessage({ type: 'clients', n }) });
  parentPort.postMessage({ type: 'listening', url: server.url, host: server.host, port: server.port });
  parentPort.on('message', async (m) => {
    if (m.type === 'publish') server.publish(m.event, m.data);
    else if (m.type === 'ready') server.markReady();
    else if (m.type === 'close') {
      await server.close();
      parentPort.postMessage({ type: 'closed' });
    }
  });
} catch (err) {
  parentPort.postMessage({ type: 'error', code: err.code, message: err.message });
}
