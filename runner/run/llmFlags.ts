/**
 * The `--llm*` options of `socsim run` as names and as the LLM options a run takes: shared by the
 * CLI, which defines the flags, and by experiments, which check them before any run starts.
 */
import path from 'node:path';
import type { LlmOptions } from '../../llm-archetypes/setup.ts';

export const LLM_OPTION_KEYS = ['llm', 'llmModel', 'llmBaseUrl', 'llmCache', 'llmEvery', 'llmBudget', 'llmSamples', 'llmConcurrency', 'llmTimeout', 'llmRetries', 'llmMaxFailures', 'llmMaxTokens', 'llmPersonas', 'llmPriceIn', 'llmPriceOut', 'llmMaxCost'] as const;

type LlmFlagValues = Partial<Record<(typeof LLM_OPTION_KEYS)[number], string | number>>;

/** The `--llm*` flags as runScenario's LLM options (a cache path made absolute). */
export function llmRunOptions(opts: LlmFlagValues): Partial<LlmOptions> {
  const o = opts as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- commander's parsed values
  return {
    provider: o.llm,
    ...(o.llmModel !== undefined && { model: o.llmModel }),
    ...((o.llmBaseUrl ?? process.env.SOCSIM_LLM_BASE_URL) && { baseURL: o.llmBaseUrl ?? process.env.SOCSIM_LLM_BASE_URL }),
    ...(o.llmCache !== undefined && { cacheFile: path.resolve(o.llmCache) }),
    ...(o.llmEvery !== undefined && { every: o.llmEvery }),
    ...(o.llmBudget !== undefined && { budget: o.llmBudget }),
    ...(o.llmSamples !== undefined && { samples: o.llmSamples }),
    ...(o.llmConcurrency !== undefined && { concurrency: o.llmConcurrency }),
    ...(o.llmTimeout !== undefined && { timeoutSeconds: o.llmTimeout }),
    ...(o.llmRetries !== undefined && { retries: o.llmRetries }),
    ...(o.llmMaxTokens !== undefined && { maxTokens: o.llmMaxTokens }),
    ...(o.llmPersonas !== undefined && { personasFile: path.resolve(o.llmPersonas) }),
    ...(o.llmPriceIn !== undefined && { priceIn: o.llmPriceIn }),
    ...(o.llmPriceOut !== undefined && { priceOut: o.llmPriceOut }),
    ...(o.llmMaxCost !== undefined && { maxCost: o.llmMaxCost }),
  };
}
