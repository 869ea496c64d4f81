// Worker-thread entry for `socsim run --serve`: the dashboard server runs here, so it answers
// requests and pushes events while the main thread is busy inside a long step.
import { parentPort as port, workerData } from 'node:worker_threads';
import { startServer } from './serve.ts';

const parentPort = port!;
try {
  const server = await startServer({ ...workerData, onClients: (n: number) => parentPort.postMessage({ type: 'clients', n }) });
  parentPort.postMessage({ type: 'listening', url: server.url, host: server.host, port: server.port });
  parentPort.on('message', async (m: { type: string; event?: string; data?: unknown }) => {
    if (m.type === 'publish') server.publish(m.event!, m.data);
    else if (m.type === 'ready') server.markReady();
    else if (m.type === 'close') {
      await server.close();
      parentPort.postMessage({ type: 'closed' });
    }
  });
} catch (err) {
  const e = err as NodeJS.ErrnoException;
  parentPort.postMessage({ type: 'error', code: e.code, message: e.message });
}
