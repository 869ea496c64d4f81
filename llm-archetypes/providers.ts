/**
 * LLM providers. `openai` talks to any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM,
 * Ollama, llama.cpp server, LM Studio) through the openai SDK; `replay` serves a recorded cache
 * and fails clearly on a miss. (The default `heuristic` policy makes no calls at all.) Transport
 * failures (HTTP 429 and 5xx, timeouts, refused connections, broken bodies) are retried with
 * exponential backoff, honouring Retry-After, then reported as a failure kind; nothing throws.
 * Failures are logged for replay but never served from the cache (see cache.ts).
 */
import type OpenAI from 'openai';
import { InputError } from '../sim-core/errors.ts';
import { cacheKey, type CacheEntry, type LlmCache, type ReplayLog } from './cache.ts';
import type { FailureKind } from './reply.ts';

export interface Message {
  role: 'system' | 'user';
  content: string;
}

export interface LlmRequest {
  messages: Message[];
  temperature: number;
  maxTokens: number;
  sample: number;
  attempt: number;
}

export interface LlmResult {
  key: string;
  text?: string;
  failure: FailureKind;
  detail?: string;
  latencyMs: number;
  promptTokens: number;
  completionTokens: number;
  cacheHit: boolean;
}

export interface LlmClient {
  provider: 'openai' | 'replay';
  model: string;
  call(req: LlmRequest): Promise<LlmResult>;
}

export interface OpenAiOptions {
  model: string;
  baseURL: string;
  apiKey: string;
  timeoutMs: number;
  retries: number;
  cache: LlmCache;
  /** Waits (ms); replaceable in tests. */
  sleep?: (ms: number) => Promise<void>;
}

/** Seconds to wait from Retry-After / retry-after-ms headers, or undefined. */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const ra = headers.get('retry-after');
  if (!ra) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra.trim())) return Number(ra) * 1000;
  const t = Date.parse(ra);
  return Number.isFinite(t) ? Math.max(0, t - Date.now()) : undefined;
}

type Sdk = typeof OpenAI;

/**
 * The openai SDK (about 150 modules, a quarter of a second at start-up) is loaded on the first call
 * that misses the cache, so runs without a live server never pay for it.
 */
let sdk: Promise<Sdk> | undefined;
const loadSdk = (): Promise<Sdk> => (sdk ??= import('openai').then((m) => m.default));

function classify(OpenAI: Sdk, err: unknown): { failure: FailureKind; detail: string; retryMs?: number } {
  if (err instanceof OpenAI.APIConnectionTimeoutError) return { failure: 'timeout', detail: err.message };
  if (err instanceof OpenAI.APIConnectionError) return { failure: 'connection', detail: err.message };
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const kind: FailureKind = err.status === 429 ? 'http_429' : err.status >= 500 ? 'http_5xx' : err.status === 401 || err.status === 403 ? 'http_auth' : 'http_4xx';
    return { failure: kind, detail: `HTTP ${err.status}: ${err.message}`, retryMs: retryAfterMs(err.headers as Headers | undefined) };
  }
  return { failure: 'bad_body', detail: (err as Error)?.message ?? String(err) };
}

const RETRYABLE = new Set<FailureKind>(['http_429', 'http_5xx', 'timeout', 'connection', 'bad_body']);

export function createOpenAiClient(o: OpenAiOptions): LlmClient {
  let client: OpenAI | undefined;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  return {
    provider: 'openai',
    model: o.model,
    async call(req) {
      const key = cacheKey({ model: o.model, messages: req.messages, temperature: req.temperature, maxTokens: req.maxTokens, sample: req.sample, attempt: req.attempt });
      // What the cache's entries record about the call (a replay takes the settings from them).
      const request = { key, model: o.model, temperature: req.temperature, max_tokens: req.maxTokens, sample: req.sample, attempt: req.attempt };
      const hit = o.cache.get(key);
      if (hit) {
        o.cache.served({ ...hit, ...request });
        return fromEntry(hit, true);
      }
      const OpenAI = await loadSdk();
      client ??= new OpenAI({ apiKey: o.apiKey, baseURL: o.baseURL, timeout: o.timeoutMs, maxRetries: 0 });
      let last: ReturnType<typeof classify> = { failure: 'connection', detail: '' };
      const t0 = performance.now();
      for (let attempt = 0; attempt <= o.retries; attempt++) {
        try {
          const r = await client.chat.completions.create({
            model: o.model,
            messages: req.messages,
            temperature: req.temperature,
            max_tokens: req.maxTokens,
            seed: req.sample,
          });
          const entry: CacheEntry = {
            ...request,
            text: r.choices?.[0]?.message?.content ?? '',
            latency_ms: Math.round(performance.now() - t0),
            prompt_tokens: r.usage?.prompt_tokens ?? 0,
            completion_tokens: r.usage?.completion_tokens ?? 0,
            cache_hit: false,
          };
          o.cache.record(entry);
          return fromEntry(entry, false);
        } catch (err) {
          last = classify(OpenAI, err);
          if (!RETRYABLE.has(last.failure) || attempt === o.retries) break;
          const backoff = Math.min(8000, 500 * 2 ** attempt);
          await sleep(Math.min(60_000, last.retryMs ?? backoff));
        }
      }
      // Logged so that a replay fails the same way; the cache never serves it (cache.ts).
      const entry: CacheEntry = { ...request, failure: last.failure, latency_ms: Math.round(performance.now() - t0), prompt_tokens: 0, completion_tokens: 0, cache_hit: false };
      o.cache.record(entry);
      return { ...fromEntry(entry, false), detail: last.detail };
    },
  };
}

function fromEntry(e: CacheEntry, cacheHit: boolean): LlmResult {
  return {
    key: e.key,
    text: e.text,
    failure: e.failure ?? '',
    latencyMs: e.latency_ms,
    promptTokens: e.prompt_tokens,
    completionTokens: e.completion_tokens,
    cacheHit,
  };
}

/**
 * Serves a recorded run's log, failures included, in the order the run logged them; the recorded
 * latency, tokens and cache-hit flag come back unchanged.
 */
export function createReplayClient(model: string, log: ReplayLog): LlmClient {
  return {
    provider: 'replay',
    model,
    async call(req) {
      const key = cacheKey({ model, messages: req.messages, temperature: req.temperature, maxTokens: req.maxTokens, sample: req.sample, attempt: req.attempt });
      const e = log.next(key);
      if (!e) {
        throw new InputError(
          `--llm replay: no recorded response for this prompt (key ${key.slice(0, 12)}); the cache must come from a run of the same scenario, seed, parameters and --llm-every, --llm-budget and --llm-retries`,
        );
      }
      return fromEntry(e, e.cache_hit);
    },
  };
}

/**
 * Checks, before anything is built, that an OpenAI-compatible server answers: GET {base}/models.
 * Refused or timed-out connections and rejected keys are bad input (exit 2); a server without a
 * /models route (404) is accepted.
 */
export async function probeServer(baseURL: string, apiKey: string, timeoutMs = 5000): Promise<void> {
  const url = `${baseURL.replace(/\/+$/, '')}/models`;
  let res: Response;
  try {
    res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name;
    throw new InputError(`cannot reach the LLM server at ${redactUrl(baseURL)} (${cause}); start it or fix --llm-base-url`);
  }
  if (res.status === 401 || res.status === 403) {
    throw new InputError(`the LLM server at ${redactUrl(baseURL)} rejected the API key (HTTP ${res.status}); set SOCSIM_LLM_API_KEY or OPENAI_API_KEY`);
  }
  await res.body?.cancel();
}

/** Whether a URL carries credentials: a user name, a password or a query string (where keys go). */
export function urlHasCredentials(u: string): boolean {
  try {
    const url = new URL(u);
    return url.username !== '' || url.password !== '' || url.search !== '';
  } catch {
    return false;
  }
}

/** A URL without credentials or query string (keys sometimes travel there), for messages and manifests. */
export function redactUrl(u: string): string {
  try {
    const url = new URL(u);
    url.username = '';
    url.password = '';
    url.search = '';
    return url.toString();
  } catch {
    return '(invalid URL)';
  }
}
