import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InputError } from '../../sim-core/errors.ts';
import { cacheKey, LlmCache, ReplayLog } from '../../llm-archetypes/cache.ts';
import { createOpenAiClient, createReplayClient, probeServer, retryAfterMs, type LlmRequest } from '../../llm-archetypes/providers.ts';
import { ok, queue, refusedBaseURL, replyObject, startFakeServer, type FakeServer } from './fakeServer.ts';

const KEY = 'sk-test-providers-456';
let server: FakeServer;
let refused: string;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-llm-providers-'));

beforeAll(async () => {
  server = await startFakeServer(queue([]));
  refused = await refusedBaseURL();
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});
beforeEach(() => server.reset());

let unique = 0;
/** A request whose prompt no other test uses (so caches never cross tests). */
function request(over: Partial<LlmRequest> = {}): LlmRequest {
  return {
    messages: [
      { role: 'system', content: 'system prompt' },
      { role: 'user', content: `Group: test ${++unique}\nGive JSON.` },
    ],
    temperature: 0.7,
    maxTokens: 200,
    sample: 0,
    attempt: 0,
    ...over,
  };
}

function client(o: { retries?: number; timeoutMs?: number; baseURL?: string; cache?: LlmCache } = {}) {
  const sleeps: number[] = [];
  const cache = o.cache ?? new LlmCache();
  const c = createOpenAiClient({
    model: 'fake-model',
    baseURL: o.baseURL ?? server.baseURL,
    apiKey: KEY,
    timeoutMs: o.timeoutMs ?? 2000,
    retries: o.retries ?? 2,
    cache,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  return { c, sleeps, cache };
}

const content = JSON.stringify(replyObject({ like: 0.25 }));
const e500 = { kind: 'status', status: 500 } as const;

describe('createOpenAiClient against a fake OpenAI-compatible server', () => {
  it('returns the reply text, token counts and latency, sending model, messages, sampling settings and the key', async () => {
    server.setScript(queue([ok(content, { delayMs: 40, promptTokens: 123, completionTokens: 45 })]));
    const { c, sleeps } = client();
    const req = request({ temperature: 0.3, maxTokens: 321, sample: 2 });
    const r = await c.call(req);
    expect(r.failure).toBe('');
    expect(r.text).toBe(content);
    expect(r.promptTokens).toBe(123);
    expect(r.completionTokens).toBe(45);
    expect(r.latencyMs).toBeGreaterThanOrEqual(35);
    expect(r.latencyMs).toBeLessThan(2000);
    expect(r.cacheHit).toBe(false);
    expect(r.key).toBe(cacheKey({ model: 'fake-model', messages: req.messages, temperature: 0.3, maxTokens: 321, sample: 2, attempt: 0 }));
    expect(sleeps).toEqual([]);
    expect(server.requests).toHaveLength(1);
    const sent = server.requests[0];
    expect(sent.body.model).toBe('fake-model');
    expect(sent.body.messages).toEqual(req.messages);
    expect(sent.body.temperature).toBe(0.3);
    expect(sent.body.max_tokens).toBe(321);
    expect(sent.body.seed).toBe(2);
    expect(sent.authorization).toBe(`Bearer ${KEY}`);
    expect(c.provider).toBe('openai');
    expect(c.model).toBe('fake-model');
  });

  it('retries an HTTP 500 with exponential backoff, then succeeds', async () => {
    server.setScript(queue([e500, e500, ok(content)]));
    const { c, sleeps } = client({ retries: 2 });
    const r = await c.call(request());
    expect(r.failure).toBe('');
    expect(r.text).toBe(content);
    expect(server.requests).toHaveLength(3);
    expect(sleeps).toEqual([500, 1000]);
  });

  it('honours Retry-After (seconds) on HTTP 429, then succeeds', async () => {
    server.setScript(queue([{ kind: 'status', status: 429, headers: { 'retry-after': '2' } }, ok(content)]));
    const { c, sleeps } = client({ retries: 2 });
    const r = await c.call(request());
    expect(r.failure).toBe('');
    expect(r.text).toBe(content);
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toEqual([2000]);
  });

  it('honours retry-after-ms and Retry-After on 5xx too, and caps a huge Retry-After at 60 s', async () => {
    server.setScript(
      queue([
        { kind: 'status', status: 503, headers: { 'retry-after-ms': '250' } },
        { kind: 'status', status: 429, headers: { 'retry-after': '3600' } },
        ok(content),
      ]),
    );
    const { c, sleeps } = client({ retries: 2 });
    const r = await c.call(request());
    expect(r.failure).toBe('');
    expect(sleeps).toEqual([250, 60_000]);
  });

  it('reports http_429 when every attempt is rate-limited', async () => {
    server.setScript(() => ({ kind: 'status', status: 429, headers: { 'retry-after': '1' } }));
    const { c, sleeps } = client({ retries: 1 });
    const r = await c.call(request());
    expect(r.failure).toBe('http_429');
    expect(r.text).toBeUndefined();
    expect(r.detail).toMatch(/HTTP 429/);
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toEqual([1000]);
  });

  it('reports http_5xx after retries + 1 attempts when the server always fails', async () => {
    server.setScript(() => e500);
    const { c, sleeps } = client({ retries: 3 });
    const r = await c.call(request());
    expect(r.failure).toBe('http_5xx');
    expect(r.text).toBeUndefined();
    expect(r.promptTokens).toBe(0);
    expect(r.completionTokens).toBe(0);
    expect(r.detail).toMatch(/HTTP 500/);
    expect(server.requests).toHaveLength(4);
    expect(sleeps).toEqual([500, 1000, 2000]);
  });

  it('does not retry other 4xx errors', async () => {
    server.setScript(() => ({ kind: 'status', status: 400 }));
    const { c, sleeps } = client({ retries: 3 });
    const r = await c.call(request());
    expect(r.failure).toBe('http_4xx');
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('reports timeout when the server answers later than the client timeout', async () => {
    server.setScript(() => ok(content, { delayMs: 3000 }));
    const { c } = client({ retries: 1, timeoutMs: 150 });
    const t0 = performance.now();
    const r = await c.call(request());
    const ms = performance.now() - t0;
    expect(r.failure).toBe('timeout');
    expect(r.text).toBeUndefined();
    expect(server.requests).toHaveLength(2);
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(2500);
  });

  it('reports connection when nothing listens at the base URL', async () => {
    const { c, sleeps } = client({ retries: 1, baseURL: refused });
    const r = await c.call(request());
    expect(r.failure).toBe('connection');
    expect(r.text).toBeUndefined();
    expect(sleeps).toEqual([500]);
  });

  it('reports connection when the server drops the connection without answering', async () => {
    server.setScript(() => ({ kind: 'reset' }));
    const { c } = client({ retries: 0 });
    const r = await c.call(request());
    expect(r.failure).toBe('connection');
    expect(server.requests).toHaveLength(1);
  });

  it('reports bad_body when the HTTP response is not valid JSON (and retries it)', async () => {
    server.setScript(() => ({ kind: 'broken' }));
    const { c, sleeps } = client({ retries: 1 });
    const r = await c.call(request());
    expect(r.failure).toBe('bad_body');
    expect(r.text).toBeUndefined();
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toEqual([500]);
  });

  it('passes reply content that is not JSON through as text (parsing is the caller\'s job)', async () => {
    server.setScript(() => ok('I would rather not say.'));
    const { c } = client();
    const r = await c.call(request());
    expect(r.failure).toBe('');
    expect(r.text).toBe('I would rather not say.');
  });

  it('serves a second identical call from the cache without a server hit; other attempts and samples miss', async () => {
    let n = 0;
    server.setScript(() => ok(`reply ${n++}`, { promptTokens: 10, completionTokens: 5 }));
    const { c, cache } = client();
    const req = request();
    const a = await c.call(req);
    const b = await c.call({ ...req, messages: req.messages.map((m) => ({ ...m })) });
    expect(server.requests).toHaveLength(1);
    expect(a.cacheHit).toBe(false);
    expect(b.cacheHit).toBe(true);
    expect(b.text).toBe('reply 0');
    expect(b.key).toBe(a.key);
    expect(b.promptTokens).toBe(10);
    expect(b.completionTokens).toBe(5);
    expect(cache.size).toBe(1);
    const other = await c.call({ ...req, attempt: 1 });
    expect(other.cacheHit).toBe(false);
    expect(other.text).toBe('reply 1');
    const sample = await c.call({ ...req, sample: 1 });
    expect(sample.text).toBe('reply 2');
    const temp = await c.call({ ...req, temperature: 0.1 });
    expect(temp.text).toBe('reply 3');
    expect(server.requests).toHaveLength(4);
    // A different model does not share entries.
    const { c: c2 } = client({ cache });
    const viaOtherClient = await c2.call(req);
    expect(viaOtherClient.cacheHit).toBe(true);
    const m2 = createOpenAiClient({ model: 'other-model', baseURL: server.baseURL, apiKey: KEY, timeoutMs: 2000, retries: 0, cache });
    expect((await m2.call(req)).cacheHit).toBe(false);
    expect(server.requests).toHaveLength(5);
  });

  it('never serves a failure from the cache: a repeated call that failed goes to the server again', async () => {
    server.setScript(() => e500);
    const file = path.join(tmp, 'failures.jsonl');
    const { c, cache } = client({ retries: 1 });
    cache.recordTo(file);
    const req = request();
    const a = await c.call(req);
    expect(a.failure).toBe('http_5xx');
    expect(server.requests).toHaveLength(2);
    server.setScript(() => ok(content, { promptTokens: 11, completionTokens: 4 }));
    const b = await c.call(req);
    expect(b.failure).toBe('');
    expect(b.cacheHit).toBe(false);
    expect(b.text).toBe(content);
    expect(server.requests).toHaveLength(3);
    const hit = await c.call(req);
    expect(hit.cacheHit).toBe(true);
    expect(server.requests).toHaveLength(3);
    cache.close();
    // The run's log keeps both outcomes in order (the hit adds nothing); a replay serves the
    // failure, then the reply, then the reply as a cache hit, as the live run did.
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((e) => e.failure ?? e.text)).toEqual(['http_5xx', content]);
    const replay = createReplayClient('fake-model', ReplayLog.load(file));
    const strip = ({ detail: _, ...r }: Awaited<ReturnType<typeof c.call>>) => r;
    expect(await replay.call(req)).toEqual(strip(a));
    expect(await replay.call(req)).toEqual(strip(b));
    expect(await replay.call(req)).toEqual(strip(hit));
  });

  it('a reused cache file serves its replies as hits and never its failures', async () => {
    const file = path.join(tmp, 'reused.jsonl');
    const [good, bad] = [request(), request()];
    const entry = (r: LlmRequest, o: object) => ({ key: cacheKey({ model: 'fake-model', ...r }), model: 'fake-model', latency_ms: 5, prompt_tokens: 3, completion_tokens: 2, cache_hit: false, ...o });
    fs.writeFileSync(file, [entry(good, { text: 'cached reply' }), entry(bad, { failure: 'timeout', prompt_tokens: 0, completion_tokens: 0 })].map((e) => JSON.stringify(e)).join('\n') + '\n');
    server.setScript(() => ok('fresh reply'));
    const { c } = client({ cache: LlmCache.load(file) });
    const g = await c.call(good);
    expect(g).toMatchObject({ text: 'cached reply', cacheHit: true, latencyMs: 5 });
    const b = await c.call(bad);
    expect(b).toMatchObject({ text: 'fresh reply', cacheHit: false, failure: '' });
    expect(server.requests).toHaveLength(1);
  });

  it('records to a JSON-lines file that a replay client serves exactly; a replay miss is an InputError', async () => {
    let n = 0;
    server.setScript(() => (n++ === 1 ? e500 : ok(`text ${n}`, { promptTokens: 7, completionTokens: 3 })));
    const file = path.join(tmp, 'rec.jsonl');
    const cache = new LlmCache();
    cache.recordTo(file);
    const { c } = client({ retries: 0, cache });
    const reqs = [request(), request(), request()];
    const live = [];
    for (const r of reqs) live.push(await c.call(r));
    cache.close();
    expect(live.map((r) => r.failure)).toEqual(['', 'http_5xx', '']);
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(fs.readFileSync(file, 'utf8')).not.toContain(KEY);
    const replay = createReplayClient('fake-model', ReplayLog.load(file));
    expect(replay.provider).toBe('replay');
    for (let i = 0; i < reqs.length; i++) {
      const r = await replay.call(reqs[i]);
      const { detail: _, ...rest } = live[i];
      expect(r).toEqual(rest);
    }
    expect(server.requests).toHaveLength(3);
    await expect(replay.call(request())).rejects.toThrow(InputError);
    await expect(replay.call(request())).rejects.toThrow(/no recorded response/);
    // Another model name gives other keys: a miss.
    await expect(createReplayClient('other', ReplayLog.load(file)).call(reqs[0])).rejects.toThrow(/no recorded response/);
  });

  it('LlmCache.load and ReplayLog.load reject a missing file and name the damaged line', () => {
    expect(() => LlmCache.load(path.join(tmp, 'nope.jsonl'))).toThrow(InputError);
    expect(() => LlmCache.load(path.join(tmp, 'nope.jsonl'))).toThrow(/cannot read LLM cache/);
    const bad = path.join(tmp, 'bad.jsonl');
    fs.writeFileSync(bad, `${JSON.stringify({ key: 'a', model: 'm', text: 'x', latency_ms: 1, prompt_tokens: 1, completion_tokens: 1, cache_hit: false })}\n\n{oops\n`);
    expect(() => LlmCache.load(bad)).toThrow(/line 3/);
    fs.writeFileSync(bad, '{"model": "m"}\n');
    expect(() => LlmCache.load(bad)).toThrow(/line 1/);
    expect(() => ReplayLog.load(bad)).toThrow(/line 1/);
    expect(() => ReplayLog.load(path.join(tmp, 'nope.jsonl'))).toThrow(/cannot read LLM cache/);
  });
});

describe('retryAfterMs', () => {
  const h = (o: Record<string, string>) => new Headers(o);
  it('reads seconds, fractional seconds, retry-after-ms and HTTP dates', () => {
    expect(retryAfterMs(h({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMs(h({ 'retry-after': ' 0 ' }))).toBe(0);
    expect(retryAfterMs(h({ 'retry-after': '1.5' }))).toBe(1500);
    expect(retryAfterMs(h({ 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfterMs(h({ 'retry-after-ms': '250', 'retry-after': '9' }))).toBe(250);
    const inTen = new Date(Date.now() + 10_000).toUTCString();
    const ms = retryAfterMs(h({ 'retry-after': inTen }))!;
    expect(ms).toBeGreaterThan(8000);
    expect(ms).toBeLessThanOrEqual(10_000);
    expect(retryAfterMs(h({ 'retry-after': new Date(Date.now() - 60_000).toUTCString() }))).toBe(0);
  });
  it('gives undefined for no headers, no Retry-After or garbage', () => {
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(retryAfterMs(h({}))).toBeUndefined();
    expect(retryAfterMs(h({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterMs(h({ 'retry-after-ms': 'x', 'retry-after': '3' }))).toBe(3000);
  });
});

describe('probeServer', () => {
  it('accepts a server that lists models, sending the key as a bearer token', async () => {
    await expect(probeServer(server.baseURL, KEY)).resolves.toBeUndefined();
    expect(server.probes).toEqual([{ authorization: `Bearer ${KEY}` }]);
    await expect(probeServer(server.baseURL + '/', KEY)).resolves.toBeUndefined();
    expect(server.probes).toHaveLength(2);
  });

  it('rejects a refused connection with an InputError naming the URL', async () => {
    const err = await probeServer(refused, KEY).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toContain(refused);
    expect((err as Error).message).toMatch(/cannot reach/);
    expect((err as Error).message).toMatch(/--llm-base-url/);
    expect((err as Error).message).not.toContain(KEY);
  });

  it('rejects a server that does not answer within the probe timeout', async () => {
    const slow = await startFakeServer(queue([]), { modelsDelayMs: 3000 });
    try {
      const t0 = performance.now();
      const err = await probeServer(slow.baseURL, KEY, 200).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InputError);
      expect((err as Error).message).toContain(slow.baseURL);
      expect(performance.now() - t0).toBeLessThan(2000);
    } finally {
      await slow.close();
    }
  });

  for (const status of [401, 403]) {
    it(`rejects HTTP ${status} with an InputError about the API key (without the key)`, async () => {
      const s = await startFakeServer(queue([]), { modelsStatus: status });
      try {
        const err = await probeServer(s.baseURL, KEY).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(InputError);
        expect((err as Error).message).toMatch(/API key/);
        expect((err as Error).message).toMatch(/SOCSIM_LLM_API_KEY/);
        expect((err as Error).message).toContain(String(status));
        expect((err as Error).message).not.toContain(KEY);
      } finally {
        await s.close();
      }
    });
  }

  it('accepts a server without a /models route (404) or with a failing one (500)', async () => {
    for (const status of [404, 500]) {
      const s = await startFakeServer(queue([]), { modelsStatus: status });
      try {
        await expect(probeServer(s.baseURL, KEY)).resolves.toBeUndefined();
        expect(s.probes).toHaveLength(1);
      } finally {
        await s.close();
      }
    }
  });
});
