/**
 * Turns the `--llm*` options into a ready client, checked before anything is built: `openai` needs
 * a base URL and a key from the environment and a server that answers; `replay` needs a readable
 * cache, and takes the model and sampling settings the caller did not give from it. The key is read
 * from SOCSIM_LLM_API_KEY or OPENAI_API_KEY and never written anywhere.
 */
import { z } from 'zod';
import { InputError } from '../sim-core/errors.ts';
import { LlmCache, ReplayLog, type RunLog } from './cache.ts';
import { createOpenAiClient, createReplayClient, probeServer, type LlmClient } from './providers.ts';
import { CostMeter } from './cost.ts';
import { loadPersonaFile } from './personaFile.ts';
import type { PersonaSpec } from './personas.ts';

export const llmOptions = z.strictObject({
  provider: z.enum(['heuristic', 'openai', 'replay']).default('heuristic'),
  model: z.string().min(1).optional(),
  baseURL: z.string().url().optional(),
  cacheFile: z.string().optional(),
  every: z.number().int().min(1).default(6),
  budget: z.number().int().min(1).default(256),
  samples: z.number().int().min(1).max(16).optional(),
  concurrency: z.number().int().min(1).max(256).default(16),
  timeoutSeconds: z.number().positive().default(30),
  retries: z.number().int().min(0).max(10).default(2),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().min(16).optional(),
  /** A persona file (personaFile.ts); absolute. */
  personasFile: z.string().optional(),
  /** USD per million prompt and completion tokens, and the most a run may spend (cost.ts). */
  priceIn: z.number().nonnegative().optional(),
  priceOut: z.number().nonnegative().optional(),
  maxCost: z.number().positive().optional(),
});
export type LlmOptions = z.output<typeof llmOptions>;

/** The model and sampling settings when neither the caller nor a replayed cache gives them. */
export const LLM_DEFAULTS = { model: 'gpt-4o-mini', samples: 1, temperature: 0.7, maxTokens: 400 };
type Resolved = typeof LLM_DEFAULTS;
export type ResolvedLlmOptions = Omit<LlmOptions, keyof Resolved> & Resolved;

export interface LlmSetup {
  options: ResolvedLlmOptions;
  client: LlmClient;
  /** Writes the run directory's llm-cache.jsonl. */
  cache: RunLog;
  /** The persona file's template and attributes (empty: the default template). */
  personas: PersonaSpec;
  /** What the run spends, and its limit. */
  cost: CostMeter;
}

export function apiKeyFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.SOCSIM_LLM_API_KEY || env.OPENAI_API_KEY || undefined;
}

/**
 * Returns undefined for the heuristic policy (no LLM). With `plan` (`--plan`) nothing is called:
 * no key is needed and no server is asked, and the client refuses every call.
 */
export async function setupLlm(o: LlmOptions, mode: { plan?: boolean } = {}): Promise<LlmSetup | undefined> {
  if (o.provider === 'heuristic') {
    const given = ([['personasFile', '--llm-personas'], ['priceIn', '--llm-price-in'], ['priceOut', '--llm-price-out'], ['maxCost', '--llm-max-cost']] as const).find(([k]) => o[k] !== undefined);
    if (given) throw new InputError(`${given[1]} applies to LLM archetypes; add --llm openai (or replay), or leave ${given[1]} out`);
    return undefined;
  }
  const cost = new CostMeter(o);
  const personas = o.personasFile ? loadPersonaFile(o.personasFile) : {};
  if (o.provider === 'replay') {
    if (!o.cacheFile) throw new InputError('--llm replay needs --llm-cache FILE (the llm-cache.jsonl of a recorded run)');
    const log = ReplayLog.load(o.cacheFile);
    const options = replayOptions(o, o.cacheFile, log);
    return { options, client: createReplayClient(options.model, log), cache: log, personas, cost };
  }
  if (!o.baseURL) throw new InputError('--llm openai needs --llm-base-url URL (e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1 for Ollama)');
  const options = withDefaults(o);
  if (mode.plan) return { options, client: planClient(options.model), cache: new LlmCache(), personas, cost };
  const apiKey = apiKeyFromEnv();
  if (!apiKey) throw new InputError('--llm openai needs an API key in SOCSIM_LLM_API_KEY or OPENAI_API_KEY (any non-empty value for local servers)');
  await probeServer(o.baseURL, apiKey);
  const cache = o.cacheFile ? LlmCache.load(o.cacheFile) : new LlmCache();
  const client = createOpenAiClient({ model: options.model, baseURL: o.baseURL, apiKey, timeoutMs: o.timeoutSeconds * 1000, retries: o.retries, cache });
  return { options, client, cache, personas, cost };
}

/** A plan's client: a plan never calls a model, so a call is a bug. */
function planClient(model: string): LlmClient {
  return {
    provider: 'openai',
    model,
    call: () => Promise.reject(new Error('a --plan called the model')),
  };
}

function withDefaults(o: LlmOptions): ResolvedLlmOptions {
  const d = LLM_DEFAULTS;
  return { ...o, model: o.model ?? d.model, samples: o.samples ?? d.samples, temperature: o.temperature ?? d.temperature, maxTokens: o.maxTokens ?? d.maxTokens };
}

/**
 * A replay's model and sampling settings: the ones its cache recorded, so `--llm replay --llm-cache
 * FILE` needs nothing else. A value the caller gives must agree with the cache; a cache with several
 * models needs --llm-model to pick one. Settings a cache does not record (older files) fall back to
 * the caller's values or the defaults.
 */
function replayOptions(o: LlmOptions, file: string, log: ReplayLog): ResolvedLlmOptions {
  const all = log.settings();
  if (o.model === undefined && all.models.length > 1) {
    throw new InputError(`--llm-cache ${file} holds replies of several models (${all.models.join(', ')}); pick one with --llm-model`);
  }
  if (o.model !== undefined && all.models.length && !all.models.includes(o.model)) {
    throw new InputError(`--llm-model ${o.model} does not match --llm-cache ${file}, recorded with model ${all.models.join(', ')}; ${all.models.length > 1 ? 'pass one of those' : 'drop --llm-model or pass that one'}`);
  }
  const rec = log.settings(o.model ?? all.models[0]);
  const pick = <T extends string | number>(name: string, given: T | undefined, recorded: T[], fallback: T): T => {
    if (given !== undefined && recorded.length && !recorded.includes(given)) {
      throw new InputError(`${name} ${given} does not match --llm-cache ${file}, recorded with ${name} ${recorded.join(', ')}; drop ${name} or pass the recorded value`);
    }
    if (given === undefined && recorded.length > 1) {
      throw new InputError(`--llm-cache ${file} holds replies made with several ${name} values (${recorded.join(', ')}); replay the llm-cache.jsonl of a single run`);
    }
    return given ?? recorded[0] ?? fallback;
  };
  return {
    ...o,
    model: o.model ?? all.models[0] ?? LLM_DEFAULTS.model,
    temperature: pick('temperature', o.temperature, rec.temperatures, LLM_DEFAULTS.temperature),
    maxTokens: pick('max tokens', o.maxTokens, rec.maxTokens, LLM_DEFAULTS.maxTokens),
    samples: pick('--llm-samples', o.samples, rec.samples === undefined ? [] : [rec.samples], LLM_DEFAULTS.samples),
  };
}
