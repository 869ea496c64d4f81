/**
 * A real HTTP server speaking the OpenAI chat-completions protocol, for tests: it listens on
 * 127.0.0.1 on an ephemeral port and answers each POST /v1/chat/completions with a behaviour
 * chosen by a script (a function of the request: its arrival number, body and prompt). It counts
 * requests and the most requests in flight at once. Not a mock of the SDK: the client under test
 * speaks real HTTP to it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { REPLY_PARAMS } from '../../llm-archetypes/reply.ts';

export type Behaviour =
  /** 200 with a chat completion whose message content is `content`. */
  | { kind: 'ok'; content: string; delayMs?: number; promptTokens?: number; completionTokens?: number }
  /** Any status with an OpenAI-style error body (or `body`) and extra headers (e.g. Retry-After). */
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: string; delayMs?: number }
  /** 200 with a body that is not JSON. */
  | { kind: 'broken'; delayMs?: number }
  /** Closes the connection without answering. */
  | { kind: 'reset' };

export interface FakeRequest {
  /** 0-based arrival number among chat-completion requests. */
  n: number;
  /** How many earlier requests had exactly this body (0 the first time). */
  seen: number;
  body: {
    model: string;
    messages: Array<{ role: string; content: string }>;
    temperature?: number;
    max_tokens?: number;
    seed?: number;
  };
  /** The first user message (the archetype prompt). */
  prompt: string;
  /** The text after "Group: " on the prompt's first line (the archetype's persona), or ''. */
  persona: string;
  authorization: string | undefined;
  /** The request's path and query string, as sent. */
  url: string;
  /** Arrival time (performance.now()). */
  at: number;
}

export type Script = (req: FakeRequest) => Behaviour;

export interface FakeServerOptions {
  /** Status of GET /v1/models (default 200 with {data: []}). */
  modelsStatus?: number;
  /** Delay before answering GET /v1/models. */
  modelsDelayMs?: number;
  /** Stop listening right after answering GET /v1/models (later connections are refused). */
  closeAfterProbe?: boolean;
}

export interface FakeServer {
  port: number;
  /** http://127.0.0.1:PORT/v1 */
  baseURL: string;
  /** Every chat-completion request, in arrival order. */
  requests: FakeRequest[];
  /** GET /models requests seen. */
  probes: Array<{ authorization: string | undefined }>;
  inFlight: number;
  maxInFlight: number;
  /** Replaces the script (and keeps the counters). */
  setScript(s: Script): void;
  /** Clears requests and counters. */
  reset(): void;
  close(): Promise<void>;
}

/** A valid reply object (probabilities, opinion, reason) with optional overrides. */
export function replyObject(over: Partial<Record<(typeof REPLY_PARAMS)[number], number>> = {}, reason = 'they react to what they see', example?: string) {
  const probabilities: Record<string, number> = {};
  for (const p of ['post', 'like', 'dislike', 'repost', 'quote', 'comment', 'report', 'mute', 'unfollow', 'follow']) probabilities[p] = over[p as never] ?? 0.05;
  return {
    probabilities,
    opinion: { eps: over.eps ?? 0.4, mu: over.mu ?? 0.1, backfire: over.backfire ?? 0.02 },
    reason,
    ...(example !== undefined && { example_post: example }),
  };
}

export const ok = (content: unknown, extra: Partial<Extract<Behaviour, { kind: 'ok' }>> = {}): Behaviour => ({
  kind: 'ok',
  content: typeof content === 'string' ? content : JSON.stringify(content),
  ...extra,
});

/** A script that plays `queue` in order, then `rest` for every later request. */
export function queue(items: Behaviour[], rest: Behaviour = ok(replyObject())): Script {
  return (req) => items[req.n] ?? rest;
}

export async function startFakeServer(script: Script, opts: FakeServerOptions = {}): Promise<FakeServer> {
  let current = script;
  const requests: FakeRequest[] = [];
  const probes: FakeServer['probes'] = [];
  const seenBodies = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number | undefined, f: () => void) => {
    if (!ms) return f();
    const t = setTimeout(() => {
      timers.delete(t);
      f();
    }, ms);
    timers.add(t);
  };
  const state = { inFlight: 0, maxInFlight: 0 };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // The route, also where a client put it after a base URL's query string (the OpenAI SDK
      // appends it to the base URL as text, encoded: /v1?key=K%2Fchat%2Fcompletions).
      const target = decodeURIComponent(req.url ?? '');
      const url = target.replace(/\?.*$/, '') + (/\?.*(\/chat\/completions|\/models)$/.exec(target)?.[1] ?? '');
      if (req.method === 'GET' && url === '/v1/models') {
        probes.push({ authorization: req.headers.authorization });
        later(opts.modelsDelayMs, () => {
          const status = opts.modelsStatus ?? 200;
          const body = status === 200 ? JSON.stringify({ object: 'list', data: [] }) : JSON.stringify({ error: { message: `status ${status}`, type: 'error' } });
          res.writeHead(status, { 'content-type': 'application/json', ...(opts.closeAfterProbe && { connection: 'close' }) });
          res.end(body, () => {
            if (opts.closeAfterProbe) {
              server.close();
              server.closeAllConnections();
            }
          });
        });
        return;
      }
      if (req.method !== 'POST' || url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${url}` } }));
        return;
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      const bodyHash = createHash('sha256').update(raw).digest('hex');
      const seen = seenBodies.get(bodyHash) ?? 0;
      seenBodies.set(bodyHash, seen + 1);
      const body = JSON.parse(raw) as FakeRequest['body'];
      const prompt = body.messages.find((m) => m.role === 'user')?.content ?? '';
      const persona = /^Group: (.*)$/m.exec(prompt)?.[1] ?? '';
      const r: FakeRequest = { n: requests.length, seen, body, prompt, persona, authorization: req.headers.authorization, url: req.url ?? '', at: performance.now() };
      requests.push(r);
      state.inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      // In flight: received and not yet answered (or dropped by the client).
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        state.inFlight--;
      };
      res.on('close', finish);
      const b = current(r);
      if (b.kind === 'reset') {
        finish();
        req.socket.destroy();
        return;
      }
      later(b.delayMs, () => {
        if (res.destroyed || res.writableEnded) return;
        finish();
        if (b.kind === 'broken') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"id": "chatcmpl-broken", "choices": [{"index": 0, "message": {"role": "assis');
        } else if (b.kind === 'status') {
          res.writeHead(b.status, { 'content-type': 'application/json', ...b.headers });
          res.end(b.body ?? JSON.stringify({ error: { message: `fake error ${b.status}`, type: 'server_error', code: null, param: null } }));
        } else {
          const promptTokens = b.promptTokens ?? Math.ceil(prompt.length / 4);
          const completionTokens = b.completionTokens ?? Math.ceil(b.content.length / 4);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              id: `chatcmpl-${r.n}`,
              object: 'chat.completion',
              created: 1_700_000_000,
              model: body.model,
              choices: [{ index: 0, message: { role: 'assistant', content: b.content }, finish_reason: 'stop' }],
              usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
            }),
          );
        }
      });
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    probes,
    get inFlight() {
      return state.inFlight;
    },
    get maxInFlight() {
      return state.maxInFlight;
    },
    setScript(s) {
      current = s;
    },
    reset() {
      requests.length = 0;
      probes.length = 0;
      seenBodies.clear();
      state.maxInFlight = state.inFlight;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      if (!server.listening) return;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A base URL on which nothing listens: binds a server, notes its port and closes it. */
export async function refusedBaseURL(): Promise<string> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}
