/**
 * Turns the `--llm*` options into a ready client, checked before anything is built: `openai` needs
 * a base URL and a key from the environment and a server that answers; `replay` needs a readable
 * cache. The key is read from SOCSIM_LLM_API_KEY or OPENAI_API_KEY and never written anywhere.
 */
import { z } from 'zod';
import { InputError } from '../sim-core/errors.ts';
import { LlmCache } from './cache.ts';
import { createOpenAiClient, createReplayClient, probeServer, type LlmClient } from './providers.ts';

export const llmOptions = z.strictObject({
  provider: z.enum(['heuristic', 'openai', 'replay']).default('heuristic'),
  model: z.string().min(1).default('gpt-4o-mini'),
  baseURL: z.string().url().optional(),
  cacheFile: z.string().optional(),
  every: z.number().int().min(1).default(6),
  budget: z.number().int().min(1).default(256),
  samples: z.number().int().min(1).max(16).default(1),
  concurrency: z.number().int().min(1).max(256).default(16),
  timeoutSeconds: z.number().positive().default(30),
  retries: z.number().int().min(0).max(10).default(2),
  temperature: z.number().min(0).max(2).default(0.7),
  maxTokens: z.number().int().min(16).default(400),
});
export type LlmOptions = z.output<typeof llmOptions>;

export interface LlmSetup {
  options: LlmOptions;
  client: LlmClient;
  cache: LlmCache;
}

export function apiKeyFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.SOCSIM_LLM_API_KEY || env.OPENAI_API_KEY || undefined;
}

/** Returns undefined for the heuristic policy (no LLM). */
export async function setupLlm(o: LlmOptions): Promise<LlmSetup | undefined> {
  if (o.provider === 'heuristic') return undefined;
  if (o.provider === 'replay') {
    if (!o.cacheFile) throw new InputError('--llm replay needs --llm-cache FILE (the llm-cache.jsonl of a recorded run)');
    const cache = LlmCache.load(o.cacheFile);
    return { options: o, client: createReplayClient(o.model, cache), cache };
  }
  if (!o.baseURL) throw new InputError('--llm openai needs --llm-base-url URL (e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1 for Ollama)');
  const apiKey = apiKeyFromEnv();
  if (!apiKey) throw new InputError('--llm openai needs an API key in SOCSIM_LLM_API_KEY or OPENAI_API_KEY (any non-empty value for local servers)');
  await probeServer(o.baseURL, apiKey);
  const cache = o.cacheFile ? LlmCache.load(o.cacheFile) : new LlmCache();
  cache.markHits();
  const client = createOpenAiClient({ model: o.model, baseURL: o.baseURL, apiKey, timeoutMs: o.timeoutSeconds * 1000, retries: o.retries, cache });
  return { options: o, client, cache };
}
