/**
 * The dashboard server (`socsim serve`, `socsim run --serve`): the built app (dist/dashboard), the files of
 * one run directory under /run/, read-only, and a server-sent-events stream at /events that tells
 * the page when a step has finished.
 *
 * The directory may also be an experiment directory (experiment.json, the tables summary.arrow,
 * effects.arrow and series.arrow, and one run directory per run under runs/; /work/wt/CONTRACT.md):
 * its files are served the same way under /run/, so a run inside it is /run/runs/<id>/..., and the
 * page shows the experiment (or, with `?run=runs/<id>`, that run's ordinary dashboard).
 *
 * Contract:
 * - Binds 127.0.0.1 unless `host` says otherwise. While bound to a loopback address, requests whose
 *   Host header is not a loopback name are refused (403), so a web page cannot reach the run
 *   through DNS rebinding.
 * - Only GET and HEAD (405 otherwise, with `Allow`). Only regular files whose real path (symlinks
 *   resolved) lies inside the run directory (or the app directory): a path with a backslash, a
 *   percent sign left after one decoding (double encoding), NUL, an empty, `.` or `..` segment, or
 *   any segment starting with a dot is 400; a file that resolves outside is 404.
 * - Run files honour single byte ranges (`Range: bytes=a-b`), so the page can read one column of a
 *   large Arrow file (or a window of graph.arrow) without downloading the rest.
 * - `/events` sends `hello` on connect (the manifest's steps and status), then `step` and `status`
 *   events: published by the caller (`run --serve`) or, with `watch`, found by polling
 *   manifest.json (a run written by another process).
 * - `/events?run=REL` follows the run directory REL inside the served directory instead (a run of
 *   an experiment): REL must be made of plain path segments as above (400 otherwise), and its
 *   manifest is read only where it resolves inside the directory. Caller events go to the plain
 *   stream only.
 * - On an experiment directory the plain stream's `hello` says `kind: "experiment"` and which tables
 *   exist, and `watch` sends an `experiment` event whenever experiment.json or a table changes.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { DASHBOARD_DIR, MODULE_EXT } from '../packageInfo.ts';

export const DEFAULT_PORT = 7070;
export const DEFAULT_HOST = '127.0.0.1';

/** The built app to serve: `SOCSIM_DASHBOARD_DIR` when set (tests build into a temporary folder), else dist/dashboard. */
export function dashboardDir(): string {
  return path.resolve(process.env.SOCSIM_DASHBOARD_DIR || DASHBOARD_DIR);
}

export interface ServerOptions {
  /** The run directory to serve (need not exist yet when `ready` is false). */
  runDir: string;
  /** The built app (default `dashboardDir()`: dist/dashboard). */
  appDir?: string;
  /** Address to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default 7070; 0 picks a free one). */
  port?: number;
  /** Poll manifest.json and push `step`/`status` events when it changes (default true). */
  watch?: boolean;
  /** Poll interval for `watch`, in ms (default 500). */
  watchMs?: number;
  /**
   * False while a run is being set up in `runDir` (`run --serve`): run files answer 503 until
   * `markReady()`, so the page never reads a previous run's leftovers. Default true.
   */
  ready?: boolean;
  /** Called with the number of connected pages whenever it changes. */
  onClients?(n: number): void;
}

export interface DashboardServer {
  /** http://HOST:PORT/ (IPv6 hosts in brackets). */
  url: string;
  host: string;
  port: number;
  /** Sends one server-sent event to every connected page. */
  publish(event: string, data: unknown): void;
  /** Run files become readable (see `ServerOptions.ready`); sends a `ready` event. */
  markReady(): void;
  /** Pages connected to /events. */
  clients(): number;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.jsonl': 'application/x-ndjson; charset=utf-8',
  '.arrow': 'application/vnd.apache.arrow.file',
  '.feather': 'application/vnd.apache.arrow.file',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/** A path segment: no leading dot; `=` for experiment run ids such as `up-platform.feedSize=10-s1`. */
const SEGMENT = /^[A-Za-z0-9_=-][A-Za-z0-9._=-]*$/;

export type Resolved = { status: 200; file: string } | { status: 400 | 404; reason: string };

/**
 * Maps a URL path (as sent, after the route prefix, still percent-encoded) to a regular file inside
 * `root`. Pure apart from the file-system look-ups; exported for tests.
 */
export function resolveInside(root: string, encoded: string): Resolved {
  if (encoded.includes('\\') || /%5c/i.test(encoded)) return { status: 400, reason: 'backslash in path' };
  let decoded: string;
  try {
    decoded = decodeURIComponent(encoded);
  } catch {
    return { status: 400, reason: 'malformed percent-encoding' };
  }
  if (decoded.includes('\0') || decoded.includes('\\') || decoded.includes('%')) return { status: 400, reason: 'encoded characters not allowed' };
  const segments = decoded.split('/');
  for (const s of segments) {
    if (!SEGMENT.test(s)) return { status: 400, reason: `bad path segment "${s}"` };
  }
  let realRoot: string;
  let real: string;
  try {
    realRoot = fs.realpathSync(root);
    real = fs.realpathSync(path.join(root, ...segments));
  } catch {
    return { status: 404, reason: 'not found' };
  }
  const rel = path.relative(realRoot, real);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return { status: 404, reason: 'outside the served directory' };
  let st: fs.Stats;
  try {
    st = fs.statSync(real);
  } catch {
    return { status: 404, reason: 'not found' };
  }
  if (!st.isFile()) return { status: 404, reason: 'not a file' };
  return { status: 200, file: real };
}

/** Parses a single `bytes=` range against a size; undefined = whole file, null = unsatisfiable. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | undefined | null {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined; // multi-range or junk: send it all
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return null;
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return null;
  return { start, end };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (net.isIPv4(host) && host.startsWith('127.'));
}

/** The host name of a Host header (without port or brackets). */
function hostName(header: string | undefined): string {
  if (!header) return '';
  if (header.startsWith('[')) return header.slice(1, header.indexOf(']'));
  const colon = header.lastIndexOf(':');
  return colon >= 0 ? header.slice(0, colon) : header;
}

interface ManifestSummary {
  steps_completed: number;
  steps_requested: number;
  status: string;
}

/** The manifest summary of the run at REL inside `root` ('' = `root` itself), if it is readable there. */
function readManifestSummary(root: string, rel = ''): ManifestSummary | undefined {
  const r = resolveInside(root, rel ? `${rel}/manifest.json` : 'manifest.json');
  if (r.status !== 200) return undefined;
  try {
    const m = JSON.parse(fs.readFileSync(r.file, 'utf8')) as ManifestSummary;
    return { steps_completed: m.steps_completed, steps_requested: m.steps_requested, status: m.status };
  } catch {
    return undefined;
  }
}

/** The tables of an experiment directory (CONTRACT.md), in the order the page reads them. */
export const EXPERIMENT_TABLES = ['series.arrow', 'effects.arrow', 'summary.arrow'] as const;

/**
 * What a directory holds for `serve`: a run (manifest.json), an experiment (experiment.json and no
 * manifest.json), or neither. For the CLI, which refuses anything else.
 */
export function serveKind(dir: string): 'run' | 'experiment' | undefined {
  if (fs.existsSync(path.join(dir, 'manifest.json'))) return 'run';
  if (fs.existsSync(path.join(dir, 'experiment.json'))) return 'experiment';
  return undefined;
}

function experimentSummary(root: string): { kind: 'experiment'; tables: Record<string, boolean> } {
  return { kind: 'experiment', tables: Object.fromEntries(EXPERIMENT_TABLES.map((t) => [t.replace('.arrow', ''), resolveInside(root, t).status === 200])) };
}

/** Change stamp of a file inside `root` ('-' when absent). */
function stampOf(root: string, rel: string): string {
  const r = resolveInside(root, rel);
  if (r.status !== 200) return '-';
  try {
    const st = fs.statSync(r.file);
    return `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return '-';
  }
}

/** The `run` query parameter of /events: '' (the served directory), a relative path, or null when malformed. */
function eventsTopic(rawUrl: string): string | null {
  const q = rawUrl.indexOf('?');
  const rel = q < 0 ? null : new URLSearchParams(rawUrl.slice(q + 1).replace(/#.*$/s, '')).get('run');
  if (rel === null || rel === '') return '';
  return rel.split('/').every((s) => SEGMENT.test(s)) ? rel : null;
}

/** Files (or ranges) up to this size are read whole before they are sent (sendFile). */
const SNAPSHOT_BYTES = 64 * 1024 * 1024;

/** Up to `length` bytes of the open file from `position`: fewer where the file now ends sooner. */
function readAt(fd: number, length: number, position: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let got = 0;
  for (;;) {
    const n = fs.readSync(fd, buf, got, length - got, position + got);
    got += n;
    if (n === 0 || got === length) return buf.subarray(0, got);
  }
}

export async function startServer(o: ServerOptions): Promise<DashboardServer> {
  const runDir = path.resolve(o.runDir);
  const appDir = path.resolve(o.appDir ?? dashboardDir());
  const host = o.host ?? DEFAULT_HOST;
  const loopbackOnly = isLoopback(host);
  let ready = o.ready ?? true;
  /** Connected pages, each with the run it follows ('' = the served directory). */
  const clients = new Map<http.ServerResponse, string>();
  /** For `watch`, per followed run: its manifest's change stamp and summary when last looked at. */
  const seen = new Map<string, { stamp: string; last?: ManifestSummary }>([['', { stamp: '', last: readManifestSummary(runDir) }]]);
  const csp = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

  const send = (res: http.ServerResponse, status: number, text: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(Buffer.byteLength(text)), 'x-content-type-options': 'nosniff', ...headers });
    res.end(text);
  };

  const sendFile = (req: http.IncomingMessage, res: http.ServerResponse, file: string, cache: string) => {
    const type = TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
    // The size and the bytes from one open file: a run replaces its manifest (and snapshots) by
    // rename while it goes on, and a size taken from the path before opening it cut a newer,
    // longer manifest short (a live dashboard once parsed half of one).
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch {
      send(res, 404, 'not found\n');
      return;
    }
    const size = fs.fstatSync(fd).size;
    const base = { 'content-type': type, 'accept-ranges': 'bytes', 'cache-control': cache, 'x-content-type-options': 'nosniff', 'content-security-policy': csp };
    const range = parseRange(req.headers.range, size);
    if (range === null) {
      fs.closeSync(fd);
      send(res, 416, 'range not satisfiable\n', { 'content-range': `bytes */${size}` });
      return;
    }
    const start = range?.start ?? 0;
    let end = range?.end ?? size - 1;
    let length = size === 0 ? 0 : end - start + 1;
    // A live run's tables change under an open file: an append first writes past the new end, then
    // truncates to it (sim-core/io/arrowFile.ts), so bytes streamed after the size was taken could
    // come up short of the content-length (a live dashboard once failed a fetch that way, and
    // stalled on it). Up to SNAPSHOT_BYTES, the bytes are read first and the length is what was read.
    let body: Buffer | undefined;
    if (req.method !== 'HEAD' && length > 0 && length <= SNAPSHOT_BYTES) {
      try {
        body = readAt(fd, length, start);
      } finally {
        fs.closeSync(fd);
      }
      length = body.length;
      end = start + length - 1;
    }
    res.writeHead(range ? 206 : 200, { ...base, 'content-length': String(length), ...(range && { 'content-range': `bytes ${start}-${end}/${size}` }) });
    if (body) {
      res.end(body);
      return;
    }
    if (req.method === 'HEAD' || length === 0) {
      fs.closeSync(fd);
      res.end();
      return;
    }
    const stream = fs.createReadStream(file, { fd, start, end });
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  };

  const writeEvent = (res: http.ServerResponse, event: string, data: unknown) => {
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };

  const isExperiment = (topic: string) => topic === '' && serveKind(runDir) === 'experiment';
  const hello = (topic: string) => {
    if (ready && isExperiment(topic)) return { ready, ...experimentSummary(runDir) };
    const summary = ready ? readManifestSummary(runDir, topic) : undefined;
    return { ready, ...(summary ?? { steps_completed: 0, steps_requested: 0, status: ready ? 'unknown' : 'setting-up' }) };
  };

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (loopbackOnly && !isLoopback(hostName(req.headers.host))) {
      send(res, 403, 'this server answers only to a loopback Host (127.0.0.1, localhost, [::1])\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'read-only: GET and HEAD only\n', { allow: 'GET, HEAD' });
      return;
    }
    const raw = req.url ?? '';
    if (!raw.startsWith('/') || raw.startsWith('//')) {
      send(res, 400, 'bad request target\n');
      return;
    }
    const pathname = raw.replace(/[?#].*$/s, '');
    if (pathname === '/events') {
      const topic = eventsTopic(raw);
      if (topic === null) {
        send(res, 400, 'bad request: bad run path\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-content-type-options': 'nosniff' });
      res.write('retry: 1000\n\n');
      writeEvent(res, 'hello', hello(topic));
      // Changes are looked for from what this first page was told.
      if (!seen.has(topic)) seen.set(topic, { stamp: '', last: readManifestSummary(runDir, topic) });
      clients.set(res, topic);
      o.onClients?.(clients.size);
      req.on('close', () => {
        clients.delete(res);
        // A run nobody follows any more is forgotten (a page that comes back gets a fresh hello).
        if (topic !== '' && ![...clients.values()].includes(topic)) seen.delete(topic);
        o.onClients?.(clients.size);
      });
      return;
    }
    if (pathname.startsWith('/run/')) {
      if (!ready) {
        send(res, 503, 'the run is still being set up\n', { 'retry-after': '1' });
        return;
      }
      const r = resolveInside(runDir, pathname.slice('/run/'.length));
      if (r.status !== 200) {
        send(res, r.status, `${r.status === 400 ? 'bad request' : 'not found'}: ${r.reason}\n`);
        return;
      }
      sendFile(req, res, r.file, 'no-store');
      return;
    }
    const appPath = pathname === '/' ? 'index.html' : pathname.slice(1);
    const r = resolveInside(appDir, appPath);
    if (r.status !== 200) {
      if (pathname === '/' && r.status === 404) {
        send(res, 404, 'the dashboard is not built: run `npm run build:viz`\n');
        return;
      }
      send(res, r.status, `${r.status === 400 ? 'bad request' : 'not found'}: ${r.reason}\n`);
      return;
    }
    const hashed = appPath.startsWith('assets/');
    sendFile(req, res, r.file, hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
  };

  const server = http.createServer(handler);
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? DEFAULT_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as net.AddressInfo;
  const urlHost = addr.address.includes(':') ? `[${addr.address}]` : addr.address;

  /** Sends an event to the pages following `topic` (the served directory by default). */
  const publish = (event: string, data: unknown, topic = '') => {
    for (const [res, t] of clients) if (t === topic) writeEvent(res, event, data);
  };

  // Keep idle proxies and browsers from dropping the stream.
  const heartbeat = setInterval(() => {
    for (const res of clients.keys()) res.write(': keep-alive\n\n');
  }, 15_000);
  heartbeat.unref();

  let watcher: NodeJS.Timeout | undefined;
  if (o.watch ?? true) {
    const experimentStamp = () => ['experiment.json', ...EXPERIMENT_TABLES].map((f) => stampOf(runDir, f)).join('|');
    let lastExperiment = experimentStamp();
    watcher = setInterval(() => {
      if (!ready || clients.size === 0) return;
      for (const topic of new Set(clients.values())) {
        if (isExperiment(topic)) {
          const stamp = experimentStamp();
          if (stamp !== lastExperiment) publish('experiment', experimentSummary(runDir), topic);
          lastExperiment = stamp;
          continue;
        }
        const w = seen.get(topic)!;
        const stamp = stampOf(runDir, topic ? `${topic}/manifest.json` : 'manifest.json');
        if (stamp === '-' || stamp === w.stamp) continue;
        w.stamp = stamp;
        const now = readManifestSummary(runDir, topic);
        if (!now) continue;
        const last = w.last;
        if (!last || now.steps_completed !== last.steps_completed) publish('step', { step: now.steps_completed, ...now }, topic);
        if (!last || now.status !== last.status) publish('status', now, topic);
        w.last = now;
      }
    }, o.watchMs ?? 500);
    watcher.unref();
  }

  return {
    url: `http://${urlHost}:${addr.port}/`,
    host: addr.address,
    port: addr.port,
    publish,
    markReady() {
      if (ready) return;
      ready = true;
      publish('ready', readManifestSummary(runDir) ?? {});
    },
    clients: () => clients.size,
    close() {
      clearInterval(heartbeat);
      if (watcher) clearInterval(watcher);
      for (const res of clients.keys()) res.end();
      clients.clear();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/**
 * `startServer` on its own worker thread (runner/serve/serveWorker.ts): the same server, but it keeps
 * answering while the calling thread runs a long synchronous step (`socsim run --serve` with
 * `--threads 1`, or a 10M-agent step of several seconds). `publish` and `markReady` are messages.
 */
export function startServerThread(o: ServerOptions): Promise<DashboardServer> {
  const worker = new Worker(new URL(`./serveWorker${MODULE_EXT}`, import.meta.url), { workerData: o });
  let clients = 0;
  let closed: (() => void) | undefined;
  return new Promise((resolve, reject) => {
    worker.on('error', reject);
    worker.on('message', (m: { type: string; url: string; host: string; port: number; code?: string; message?: string; n?: number }) => {
      if (m.type === 'error') {
        reject(Object.assign(new Error(m.message), { code: m.code }));
        void worker.terminate();
      } else if (m.type === 'clients') clients = m.n!;
      else if (m.type === 'closed') closed?.();
      else if (m.type === 'listening') {
        resolve({
          url: m.url,
          host: m.host,
          port: m.port,
          publish: (event, data) => worker.postMessage({ type: 'publish', event, data }),
          markReady: () => worker.postMessage({ type: 'ready' }),
          /** As of the worker's last report (it reports on every connect and disconnect). */
          clients: () => clients,
          close: () =>
            new Promise<void>((done) => {
              const finish = () => void worker.terminate().then(() => done());
              const t = setTimeout(finish, 2000);
              closed = () => {
                clearTimeout(t);
                finish();
              };
              worker.postMessage({ type: 'close' });
            }),
        });
      }
    });
  });
}
