/**
 * The dashboard server (runner/serve/serve.ts) over real sockets: what it serves, what it refuses
 * (traversal in every spelling, symlinks out, writes, foreign Host headers), byte ranges, the
 * events stream, the address it binds, the `socsim serve` command, and an experiment directory
 * (its files, run ids with `=`, the experiment events and the events of one run inside it).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRange, resolveInside, serveKind, startServer, startServerThread, type DashboardServer } from '../../runner/serve/serve.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = path.join(ROOT, 'bin/socsim.mjs');
const SECRET = 'TOP-SECRET-OUTSIDE-THE-RUN';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-serve-'));
const runDir = path.join(tmp, 'run');
const appDir = path.join(tmp, 'app');
const manifest = { format: 'socsim-run/1', steps_completed: 3, steps_requested: 5, status: 'running', files: { agents: [] } };
const metricsBytes = Buffer.from(Array.from({ length: 64 }, (_v, i) => i));

beforeAll(() => {
  fs.mkdirSync(path.join(runDir, 'agents'), { recursive: true });
  fs.mkdirSync(path.join(appDir, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(runDir, 'manifest.json'), JSON.stringify(manifest));
  fs.writeFileSync(path.join(runDir, 'metrics.arrow'), metricsBytes);
  fs.writeFileSync(path.join(runDir, 'agents', 'step-000000.arrow'), 'snapshot');
  fs.writeFileSync(path.join(runDir, '.hidden'), SECRET);
  fs.writeFileSync(path.join(tmp, 'secret.txt'), SECRET);
  fs.writeFileSync(path.join(tmp, 'run-sibling.txt'), SECRET); // shares the run dir's name prefix
  fs.symlinkSync(path.join(tmp, 'secret.txt'), path.join(runDir, 'link-out.json'));
  fs.symlinkSync(tmp, path.join(runDir, 'dir-out'));
  fs.symlinkSync('manifest.json', path.join(runDir, 'link-in.json'));
  fs.writeFileSync(path.join(appDir, 'index.html'), '<!doctype html><title>app</title>');
  fs.writeFileSync(path.join(appDir, 'assets', 'app-1234.js'), 'console.log(1)');
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends one request exactly as written (no client-side URL normalisation) and reads the reply. */
function raw(port: number, requestLine: string, headers: Record<string, string> = {}, body = '', host = '127.0.0.1'): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, host);
    const chunks: Buffer[] = [];
    sock.on('data', (d) => chunks.push(d));
    sock.on('error', reject);
    sock.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const head = text.slice(0, split).split('\r\n');
      const status = Number(head[0]!.split(' ')[1]);
      const hs: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const i = line.indexOf(':');
        hs[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status, headers: hs, body: text.slice(split + 4) });
    });
    const all = { host: `127.0.0.1:${port}`, connection: 'close', ...headers, ...(body && { 'content-length': String(Buffer.byteLength(body)) }) };
    sock.write(`${requestLine} HTTP/1.1\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n${body}`);
  });
}

const get = (port: number, target: string, headers: Record<string, string> = {}) => raw(port, `GET ${target}`, headers);

/** Reads an event stream until `re` matches the text so far (5 s at most). */
async function eventsUntil(url: string): Promise<{ type: string | null; until(re: RegExp): Promise<string>; close(): Promise<void> }> {
  const res = await fetch(url);
  const reader = res.body!.getReader();
  let text = '';
  return {
    type: res.headers.get('content-type'),
    async until(re: RegExp) {
      const deadline = Date.now() + 5000;
      while (!re.test(text)) {
        if (Date.now() > deadline) throw new Error(`no ${re} in ${text}`);
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended');
        text += new TextDecoder().decode(value);
      }
      return text;
    },
    close: () => reader.cancel(),
  };
}

describe('runner/serve/serve.ts', () => {
  let server: DashboardServer;
  beforeAll(async () => {
    server = await startServer({ runDir, appDir, port: 0, watchMs: 50 });
  });
  afterAll(() => server.close());

  it('serves the app and the run files, with types', async () => {
    const index = await get(server.port, '/');
    expect(index.status).toBe(200);
    expect(index.body).toContain('<title>app</title>');
    expect(index.headers['content-type']).toMatch(/text\/html/);
    const js = await get(server.port, '/assets/app-1234.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
    const m = await get(server.port, '/run/manifest.json');
    expect(m.status).toBe(200);
    expect(JSON.parse(m.body)).toEqual(manifest);
    const a = await get(server.port, '/run/metrics.arrow?cache=1');
    expect(a.status).toBe(200);
    expect(a.headers['content-type']).toBe('application/vnd.apache.arrow.file');
    expect(Buffer.from(a.body, 'latin1').equals(metricsBytes)).toBe(true);
    expect((await get(server.port, '/run/agents/step-000000.arrow')).body).toBe('snapshot');
    // A symlink that stays inside the run directory is fine.
    expect(JSON.parse((await get(server.port, '/run/link-in.json')).body)).toEqual(manifest);
  });

  const refused: Array<[string, number]> = [
    ['/run/../secret.txt', 400],
    ['/run/agents/../../secret.txt', 400],
    ['/run/%2e%2e/secret.txt', 400],
    ['/run/%2E%2E/secret.txt', 400],
    ['/run/..%2fsecret.txt', 400],
    ['/run/%2e%2e%2fsecret.txt', 400],
    ['/run/%252e%252e/secret.txt', 400],
    ['/run/%252e%252e%252fsecret.txt', 400],
    ['/run/..\\secret.txt', 400],
    ['/run/..%5csecret.txt', 400],
    ['/run/..%255csecret.txt', 400],
    ['/run/agents\\..\\..\\secret.txt', 400],
    ['/run//etc/passwd', 400],
    ['/run/%2fetc%2fpasswd', 400],
    ['/run/%2Fetc/passwd', 400],
    ['//etc/passwd', 400],
    ['/run/./manifest.json', 400],
    ['/run/.hidden', 400],
    ['/run/manifest.json%00.png', 400],
    ['/run/%zz', 400],
    ['/../secret.txt', 400],
    ['/assets/../../secret.txt', 400],
    ['/run/link-out.json', 404],
    ['/run/dir-out/secret.txt', 404],
    ['/run/../run-sibling.txt', 400],
    ['/run/agents', 404],
    ['/run/missing.arrow', 404],
    ['/etc/passwd', 404],
    ['/events/../run/../secret.txt', 400],
  ];
  for (const [target, status] of refused) {
    it(`refuses ${target} with ${status}`, async () => {
      const r = await get(server.port, target);
      expect(r.status).toBe(status);
      expect(r.body).not.toContain(SECRET);
      expect(r.body).not.toContain('root:');
    });
  }

  it('refuses an absolute-form request target and an absolute path outside both roots', async () => {
    const r = await raw(server.port, `GET http://127.0.0.1:${server.port}/run/../secret.txt`);
    expect(r.status).toBe(400);
    expect(r.body).not.toContain(SECRET);
    expect(resolveInside(runDir, path.join(tmp, 'secret.txt'))).toMatchObject({ status: 400 });
    expect(resolveInside(runDir, encodeURIComponent(path.join(tmp, 'secret.txt')))).toMatchObject({ status: 400 });
    expect(resolveInside(runDir, 'manifest.json')).toMatchObject({ status: 200 });
  });

  it('is read-only: every method but GET and HEAD gets 405 and nothing changes', async () => {
    const before = fs.readFileSync(path.join(runDir, 'manifest.json'), 'utf8');
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', 'MKCOL']) {
      const r = await raw(server.port, `${method} /run/manifest.json`, { 'content-type': 'application/json' }, '{"status":"hacked"}');
      expect(r.status, method).toBe(405);
      expect(r.headers.allow).toBe('GET, HEAD');
    }
    const put = await raw(server.port, 'PUT /run/new-file.json', {}, 'x');
    expect(put.status).toBe(405);
    expect(fs.existsSync(path.join(runDir, 'new-file.json'))).toBe(false);
    expect(fs.readFileSync(path.join(runDir, 'manifest.json'), 'utf8')).toBe(before);
    const head = await raw(server.port, 'HEAD /run/metrics.arrow');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe('64');
    expect(head.body).toBe('');
  });

  it('honours single byte ranges', async () => {
    const r = await get(server.port, '/run/metrics.arrow', { range: 'bytes=2-5' });
    expect(r.status).toBe(206);
    expect(r.headers['content-range']).toBe('bytes 2-5/64');
    expect([...Buffer.from(r.body, 'latin1')]).toEqual([2, 3, 4, 5]);
    const tail = await get(server.port, '/run/metrics.arrow', { range: 'bytes=-3' });
    expect(tail.status).toBe(206);
    expect([...Buffer.from(tail.body, 'latin1')]).toEqual([61, 62, 63]);
    const open = await get(server.port, '/run/metrics.arrow', { range: 'bytes=60-' });
    expect([...Buffer.from(open.body, 'latin1')]).toEqual([60, 61, 62, 63]);
    expect((await get(server.port, '/run/metrics.arrow', { range: 'bytes=64-70' })).status).toBe(416);
    expect(parseRange('bytes=0-0,5-6', 10)).toBeUndefined();
    expect(parseRange('bytes=3-100', 10)).toEqual({ start: 3, end: 9 });
    expect(parseRange('bytes=-0', 10)).toBeNull();
  });

  it('serves a manifest that a run keeps replacing (by rename) whole, whichever version a request gets', async () => {
    // Another process renames a short and a long manifest over the served one as fast as it can.
    const dir = path.join(tmp, 'swapped');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(tmp, 'short.json'), JSON.stringify({ ...manifest, note: 'short' }));
    fs.writeFileSync(path.join(tmp, 'long.json'), JSON.stringify({ ...manifest, note: 'x'.repeat(200_000) }));
    fs.copyFileSync(path.join(tmp, 'short.json'), path.join(dir, 'manifest.json'));
    const script = `const fs = require('fs'); const [d, a, b] = process.argv.slice(1); const v = [fs.readFileSync(a), fs.readFileSync(b)];
      const end = Date.now() + 4000; for (let i = 0; Date.now() < end; i++) { const t = d + '/m.tmp'; fs.writeFileSync(t, v[i & 1]); fs.renameSync(t, d + '/manifest.json'); }`;
    const writer = spawn(process.execPath, ['-e', script, dir, path.join(tmp, 'short.json'), path.join(tmp, 'long.json')], { stdio: 'ignore' });
    const s = await startServer({ runDir: dir, appDir, port: 0, watch: false });
    try {
      let bad = 0;
      const versions = new Set<string>();
      for (let k = 0; k < 300; k++) {
        const r = await get(s.port, '/run/manifest.json');
        try {
          versions.add((JSON.parse(r.body) as { note: string }).note.slice(0, 5));
        } catch {
          bad++;
        }
      }
      expect(bad).toBe(0);
      expect(versions.size).toBe(2);
    } finally {
      writer.kill();
      await s.close();
    }
  });

  it('serves a table that a run appends to in place (past the end, then truncated back) with its length right, whichever state a request meets', async () => {
    // Another process does what an Arrow append does to a file (sim-core/io/arrowFile.ts): writes
    // past the new end, then truncates to it; the file is 100 KB long, or longer for a moment. A
    // response's content-length once came from a long state and its bytes from the short one.
    const dir = path.join(tmp, 'appended');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
    const file = path.join(dir, 'metrics.arrow');
    fs.writeFileSync(file, Buffer.alloc(100_000, 7));
    const script = `const fs = require('fs'); const fd = fs.openSync(process.argv[1], 'r+'); const junk = Buffer.alloc(200_000, 9);
      const end = Date.now() + 4000; while (Date.now() < end) { fs.writeSync(fd, junk, 0, junk.length, 100_000); fs.ftruncateSync(fd, 100_000); }`;
    const writer = spawn(process.execPath, ['-e', script, file], { stdio: 'ignore' });
    const s = await startServer({ runDir: dir, appDir, port: 0, watch: false });
    try {
      const lengths = new Set<number>();
      let failed = 0;
      for (let k = 0; k < 400; k++) {
        try {
          const r = await fetch(`http://127.0.0.1:${s.port}/run/metrics.arrow`);
          const body = Buffer.from(await r.arrayBuffer());
          expect(Number(r.headers.get('content-length'))).toBe(body.length);
          lengths.add(body.length);
        } catch {
          failed++;
        }
      }
      expect(failed).toBe(0);
      // Whatever the moment (the write itself extends the file page by page), never short of the
      // table nor past the longest state.
      expect([...lengths].every((n) => n >= 100_000 && n <= 300_000), [...lengths].join(' ')).toBe(true);
    } finally {
      writer.kill();
      await s.close();
    }
  });

  it('answers only to loopback Host headers while bound to loopback (DNS rebinding)', async () => {
    expect((await get(server.port, '/run/manifest.json', { host: 'evil.example' })).status).toBe(403);
    expect((await get(server.port, '/run/manifest.json', { host: `evil.example:${server.port}` })).status).toBe(403);
    expect((await get(server.port, '/run/manifest.json', { host: `localhost:${server.port}` })).status).toBe(200);
    expect((await get(server.port, '/run/manifest.json', { host: `[::1]:${server.port}` })).status).toBe(200);
  });

  it('streams hello, published and watched events on /events', async () => {
    const es = await eventsUntil(`${server.url}events`);
    expect(es.type).toMatch(/text\/event-stream/);
    const text = await es.until(/event: hello\ndata: (.*)\n/);
    expect(JSON.parse(/event: hello\ndata: (.*)\n/.exec(text)![1]!)).toMatchObject({ ready: true, steps_completed: 3, status: 'running' });
    expect(server.clients()).toBe(1);
    server.publish('step', { step: 4, steps_completed: 4 });
    await es.until(/event: step\ndata: \{"step":4,"steps_completed":4\}/);
    // Another process advancing the run: the watcher sees manifest.json change.
    fs.writeFileSync(path.join(runDir, 'manifest.json'), JSON.stringify({ ...manifest, steps_completed: 5, status: 'completed' }));
    await es.until(/event: step\ndata: \{"step":5,"steps_completed":5/);
    await es.until(/event: status\ndata: \{"steps_completed":5,"steps_requested":5,"status":"completed"\}/);
    await es.close();
    fs.writeFileSync(path.join(runDir, 'manifest.json'), JSON.stringify(manifest));
  });

  it('answers 503 for run files until a run being set up is ready', async () => {
    const s = await startServer({ runDir, appDir, port: 0, ready: false, watch: false });
    try {
      const r = await get(s.port, '/run/manifest.json');
      expect(r.status).toBe(503);
      expect(r.headers['retry-after']).toBe('1');
      expect((await get(s.port, '/')).status).toBe(200);
      s.markReady();
      expect((await get(s.port, '/run/manifest.json')).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('an experiment directory', () => {
  const expDir = path.join(tmp, 'exp');
  const runId = 'up-platform.feedSize=10-s1';
  const runManifest = { ...manifest, steps_completed: 1 };
  let server: DashboardServer;
  beforeAll(async () => {
    fs.mkdirSync(path.join(expDir, 'runs', runId), { recursive: true });
    fs.writeFileSync(path.join(expDir, 'experiment.json'), JSON.stringify({ format: 'socsim-experiment/1', name: 'e', runs: [{ id: runId, dir: `runs/${runId}` }] }));
    fs.writeFileSync(path.join(expDir, 'runs', runId, 'manifest.json'), JSON.stringify(runManifest));
    fs.symlinkSync(runDir, path.join(expDir, 'runs', 'out-s1')); // a run directory outside the experiment
    server = await startServer({ runDir: expDir, appDir, port: 0, watchMs: 50 });
  });
  afterAll(() => server.close());

  it('is an experiment to serveKind; a run directory is a run; an empty one is neither', () => {
    expect(serveKind(expDir)).toBe('experiment');
    expect(serveKind(runDir)).toBe('run');
    expect(serveKind(path.join(tmp, 'nope'))).toBeUndefined();
  });

  it('serves experiment.json and the runs inside (ids with =), nothing through a link out', async () => {
    expect(JSON.parse((await get(server.port, '/run/experiment.json')).body).name).toBe('e');
    expect(JSON.parse((await get(server.port, `/run/runs/${runId}/manifest.json`)).body)).toEqual(runManifest);
    expect(JSON.parse((await get(server.port, `/run/runs/${encodeURIComponent(runId)}/manifest.json`)).body)).toEqual(runManifest);
    expect((await get(server.port, '/run/runs/out-s1/manifest.json')).status).toBe(404);
    expect((await get(server.port, '/run/effects.arrow')).status).toBe(404);
    expect((await get(server.port, '/run/manifest.json')).status).toBe(404);
  });

  it('says it is an experiment on /events and sends `experiment` when a table appears', async () => {
    const es = await eventsUntil(`${server.url}events`);
    try {
      const hello = await es.until(/event: hello\ndata: (.*)\n/);
      expect(JSON.parse(/event: hello\ndata: (.*)\n/.exec(hello)![1]!)).toEqual({ ready: true, kind: 'experiment', tables: { series: false, effects: false, summary: false } });
      fs.writeFileSync(path.join(expDir, 'effects.arrow'), 'not really arrow');
      await es.until(/event: experiment\ndata: \{"kind":"experiment","tables":\{"series":false,"effects":true,"summary":false\}\}/);
    } finally {
      await es.close();
      fs.rmSync(path.join(expDir, 'effects.arrow'));
    }
  });

  it('follows one run inside with /events?run=, and refuses a bad run path', async () => {
    const es = await eventsUntil(`${server.url}events?run=${encodeURIComponent(`runs/${runId}`)}`);
    try {
      const hello = await es.until(/event: hello\ndata: (.*)\n/);
      expect(JSON.parse(/event: hello\ndata: (.*)\n/.exec(hello)![1]!)).toEqual({ ready: true, steps_completed: 1, steps_requested: 5, status: 'running' });
      fs.writeFileSync(path.join(expDir, 'runs', runId, 'manifest.json'), JSON.stringify({ ...runManifest, steps_completed: 2 }));
      await es.until(/event: step\ndata: \{"step":2,"steps_completed":2/);
      // Caller events go to the plain stream only.
      server.publish('step', { step: 99 });
      await new Promise((r) => setTimeout(r, 100));
      expect(await es.until(/./)).not.toMatch(/"step":99/);
    } finally {
      await es.close();
    }
    // A run linked from outside the experiment is not read (its manifest says 3 steps).
    const out = await eventsUntil(`${server.url}events?run=runs/out-s1`);
    expect(await out.until(/event: hello\ndata: .*\n/)).toMatch(/"steps_completed":0,"steps_requested":0,"status":"unknown"/);
    await out.close();
    for (const bad of ['..', 'runs/../..', 'runs/.hidden', '/etc', 'runs//x', 'runs%2F..%2F..']) {
      expect((await get(server.port, `/events?run=${encodeURIComponent(bad)}`)).status, bad).toBe(400);
    }
  });
});

describe('startServerThread (socsim run --serve)', () => {
  it('serves from its own thread, relays events and reports clients; a busy port is an EADDRINUSE error', async () => {
    const s = await startServerThread({ runDir, appDir, port: 0, ready: false, watch: false });
    try {
      expect(s.host).toBe('127.0.0.1');
      expect((await get(s.port, '/run/manifest.json')).status).toBe(503);
      const res = await fetch(`${s.url}events`);
      const reader = res.body!.getReader();
      let text = '';
      const until = async (re: RegExp) => {
        while (!re.test(text)) text += new TextDecoder().decode((await reader.read()).value);
      };
      await until(/event: hello\ndata: \{"ready":false/);
      for (let i = 0; i < 50 && s.clients() !== 1; i++) await new Promise((r) => setTimeout(r, 10));
      expect(s.clients()).toBe(1);
      s.markReady();
      s.publish('step', { step: 1, steps_completed: 1 });
      await until(/event: ready\n[^]*event: step\ndata: \{"step":1,"steps_completed":1\}/);
      expect((await get(s.port, '/run/manifest.json')).status).toBe(200);
      await reader.cancel();
      await expect(startServerThread({ runDir, appDir, port: s.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await s.close();
    }
    expect(await canConnect('127.0.0.1', s.port)).toBe(false);
  });
});

/** Whether something accepts TCP connections on host:port. */
function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, host);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

describe('binding', () => {
  it('binds 127.0.0.1 by default: another local address gets no connection', async () => {
    const s = await startServer({ runDir, appDir, port: 0 });
    try {
      expect(s.host).toBe('127.0.0.1');
      expect(s.url).toBe(`http://127.0.0.1:${s.port}/`);
      expect(await canConnect('127.0.0.1', s.port)).toBe(true);
      // 127.0.0.2 is this machine too (Linux routes all of 127/8 to lo), but not the bound address.
      expect(await canConnect('127.0.0.2', s.port)).toBe(false);
    } finally {
      await s.close();
    }
  });

  it('binds the address --host names', async () => {
    const s = await startServer({ runDir, appDir, port: 0, host: '0.0.0.0' });
    try {
      expect(s.host).toBe('0.0.0.0');
      expect(await canConnect('127.0.0.2', s.port)).toBe(true);
      // Bound beyond loopback, any Host header is accepted (names are unknown).
      expect((await get(s.port, '/run/manifest.json', { host: 'dashboard.lan' })).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

/**
 * Runs `socsim ARGS`; each time stdout grows, `stop(stdout)` decides whether to send SIGINT (it may
 * first talk to the server). Resolves with the exit code, the output, and the stdout at the stop.
 */
function socsimUntil(args: string[], stop: (stdout: string) => boolean | Promise<boolean>): Promise<{ code: number | null; stdout: string; stderr: string; seen: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, SOCSIM_DASHBOARD_DIR: appDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let seen = '';
    let stopping = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stdout.setEncoding('utf8').on('data', async (d: string) => {
      stdout += d;
      if (stopping) return;
      stopping = true;
      let yes = false;
      try {
        yes = await stop(stdout);
      } finally {
        if (yes) {
          seen = stdout;
          child.kill('SIGINT');
        } else stopping = false;
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, seen });
    });
  });
}

describe('socsim serve', () => {
  it('serves a run directory on 127.0.0.1, read-only, and stops on Ctrl-C with exit 0', async () => {
    let fetched: unknown;
    let post = 0;
    const r = await socsimUntil(['serve', runDir, '--port', '0'], async (out) => {
      const m = /dashboard: (http:\/\/\S+)/.exec(out);
      if (!m) return false;
      fetched = await (await fetch(`${m[1]}run/manifest.json`)).json();
      post = (await fetch(`${m[1]}run/manifest.json`, { method: 'POST', body: '{}' })).status;
      return true;
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.seen).toMatch(/^dashboard: http:\/\/127\.0\.0\.1:\d+\/ \(serving .*, read-only\)/);
    expect(r.stdout).not.toMatch(/warning/);
    expect(fetched).toEqual(manifest);
    expect(post).toBe(405);
  });

  it('binds --host and warns that the run is readable from the network', async () => {
    const r = await socsimUntil(['serve', runDir, '--port', '0', '--host', '0.0.0.0'], (out) => /warning/.test(out));
    expect(r.code, r.stderr).toBe(0);
    expect(r.seen).toMatch(/dashboard: http:\/\/0\.0\.0\.0:\d+\//);
    expect(r.seen).toMatch(/warning: bound to 0\.0\.0\.0/);
  });

  it('rejects a directory without a manifest, a bad port and a busy port with exit 2', async () => {
    const a = await socsimUntil(['serve', path.join(tmp, 'nope')], () => false);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/not a run directory/);
    const b = await socsimUntil(['serve', runDir, '--port', '70000'], () => false);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/--port must be a whole number from 0 to 65535/);
    const busy = await startServer({ runDir, appDir, port: 0 });
    try {
      const c = await socsimUntil(['serve', runDir, '--port', String(busy.port)], () => false);
      expect(c.code).toBe(2);
      expect(c.stderr).toMatch(new RegExp(`port ${busy.port} is in use`));
    } finally {
      await busy.close();
    }
  });
});
