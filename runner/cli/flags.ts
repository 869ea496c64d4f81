/**
 * Command-line flag parsers and the `--llm*` flags, shared by `socsim run` and `socsim experiment`
 * (which passes the flags on to every run it starts).
 */
import path from 'node:path';
import { Command, Option } from 'commander';
import { InputError } from '../../sim-core/errors.ts';
import { LLM_OPTION_KEYS } from '../run/llmFlags.ts';
import { BACKENDS } from '../../sim-core/backend.ts';
import { urlHasCredentials } from '../../llm-archetypes/providers.ts';
import { DEFAULT_MAX_FAILURE_SHARE } from '../run/llmFailures.ts';

/** `--backend`, as run, experiment and validate take it (sim-core/backend.ts). */
export function backendOption(): Option {
  return new Option('--backend <name>', 'what runs the kernels: cpu, webgpu (kernels with a WGSL version on the GPU, the rest on the CPU; same bytes) or auto (webgpu when an adapter is found)').choices([...BACKENDS]).default('cpu');
}

export function intFlag(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (raw: string): number => {
    const v = Number(raw.replace(/_/g, ''));
    if (!/^\s*[0-9][0-9_]*\s*$/.test(raw) || !Number.isSafeInteger(v) || v < min || v > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
      throw new InputError(`${name} must be a whole number ${range} (got "${raw}")`);
    }
    return v;
  };
}

export function numFlag(name: string, minExclusive: number) {
  return (raw: string): number => {
    const v = Number(raw);
    if (!Number.isFinite(v) || v <= minExclusive) throw new InputError(`${name} must be a number > ${minExclusive} (got "${raw}")`);
    return v;
  };
}

/** A price: a number >= 0. */
function priceFlag(name: string) {
  return (raw: string): number => {
    const v = Number(raw);
    if (raw.trim() === '' || !(v >= 0) || !Number.isFinite(v)) throw new InputError(`${name} must be a price in USD per million tokens, a number >= 0 (got "${raw}")`);
    return v;
  };
}

/** A share: a number from 0 to 1. */
export function shareFlag(name: string) {
  return (raw: string): number => {
    const v = Number(raw);
    if (raw.trim() === '' || !(v >= 0 && v <= 1)) throw new InputError(`${name} must be a share from 0 to 1 (got "${raw}")`);
    return v;
  };
}

/**
 * The options of commands that start many runs (`socsim experiment`, `socsim calibrate`): --jobs,
 * --threads, --backend, and the size of each run (--agents, --hours or --steps, --step-seconds).
 */
export function addRunSetOptions(cmd: Command): Command {
  return cmd
    .option('--jobs <n>', 'runs at once (each a child process)', intFlag('--jobs', 1, 1024), 1)
    .option('--threads <n>', 'worker threads of each run', intFlag('--threads', 1, 256), 1)
    .addOption(backendOption())
    .option('--agents <n>', 'agents per run (default: the experiment\'s, else the scenario\'s)', intFlag('--agents', 1, 2 ** 31 - 2))
    .option('--hours <h>', 'simulated hours per run (not with --steps)', numFlag('--hours', 0))
    .option('--steps <n>', 'steps per run (not with --hours)', intFlag('--steps', 0))
    .option('--step-seconds <s>', 'simulated seconds per step (default: the experiment\'s, else the scenario\'s)', numFlag('--step-seconds', 0));
}

/** Adds the `--llm*` options to a command. */
export function addLlmOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--llm <provider>', 'who sets archetype behaviour: heuristic (offline rules, not an LLM), openai (any OpenAI-compatible server), replay (a recorded cache)').choices(['heuristic', 'openai', 'replay']).default('heuristic'))
    .option('--llm-model <name>', 'model name sent to the server (default gpt-4o-mini); with --llm replay, the cache\'s model (needed only when it holds several)')
    .option('--llm-base-url <url>', 'OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (Ollama); default $SOCSIM_LLM_BASE_URL; key from SOCSIM_LLM_API_KEY or OPENAI_API_KEY; a URL with credentials (user, password or query) is never written to a file or a command line')
    .option('--llm-cache <file>', 'llm-cache.jsonl of a recorded run: replayed with --llm replay (model and samples from the file), reused as a cache with --llm openai (replies only: failed calls are asked again)')
    .option('--llm-every <n>', 'archetype decision every n steps (default 6)', intFlag('--llm-every', 1))
    .option('--llm-budget <n>', 'most LLM calls per decision round (default 256)', intFlag('--llm-budget', 1))
    .option('--llm-samples <n>', 'replies averaged per archetype (default 1; with --llm replay, the cache\'s)', intFlag('--llm-samples', 1, 16))
    .option('--llm-concurrency <n>', 'calls in flight at once (default 16)', intFlag('--llm-concurrency', 1, 256))
    .option('--llm-timeout <s>', 'seconds per call before it counts as a timeout (default 30)', numFlag('--llm-timeout', 0))
    .option('--llm-retries <n>', 'retries per call (default 2)', intFlag('--llm-retries', 0, 10))
    .option('--llm-max-tokens <n>', 'most completion tokens per call (default 400; with --llm replay, the cache\'s)', intFlag('--llm-max-tokens', 16))
    .option('--llm-personas <file>', 'a JSON persona file: the persona template over the population\'s attributes, added attributes, single archetypes\' personas (docs/llm-archetypes.md)')
    .option('--llm-price-in <usd>', 'USD per million prompt tokens, for --plan\'s price, the manifest\'s cost and --llm-max-cost', priceFlag('--llm-price-in'))
    .option('--llm-price-out <usd>', 'USD per million completion tokens (with --llm-price-in)', priceFlag('--llm-price-out'))
    .option('--llm-max-cost <usd>', 'stop the run, resumable, before an LLM round could take its spending past this many USD (needs the prices; per run in an experiment; with --resume, a new limit)', numFlag('--llm-max-cost', 0))
    .option('--llm-max-failures <share>', `exit 1 (the run's files kept) when more than this share of archetype decisions failed, 0 to 1 (default ${DEFAULT_MAX_FAILURE_SHARE}; 1 accepts any)`, shareFlag('--llm-max-failures'));
}

/** The names of the `--llm*` options (commander's camel case). */
/**
 * The `--llm*` flags given on the command line, as arguments for a child `socsim run` (a cache
 * path made absolute); empty when none was given (the heuristic default).
 */
export function llmChildFlags(cmd: Command): string[] {
  const out: string[] = [];
  for (const k of LLM_OPTION_KEYS) {
    if (cmd.getOptionValueSource(k) !== 'cli') continue;
    const v = cmd.getOptionValue(k) as string | number;
    // A base URL with credentials reaches the runs through the environment (which they inherit
    // and which only this user can read), never through experiment.json or their command lines.
    if (k === 'llmBaseUrl' && urlHasCredentials(String(v))) {
      process.env.SOCSIM_LLM_BASE_URL = String(v);
      continue;
    }
    out.push('--' + k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase()), k === 'llmCache' || k === 'llmPersonas' ? path.resolve(String(v)) : String(v));
  }
  return out;
}

/** Parses `--set a.b=value` pairs into a nested object; values are JSON when they parse, else strings. */
export function parseSets(sets: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of sets) {
    const eq = s.indexOf('=');
    if (eq <= 0) throw new InputError(`--set expects key=value (got "${s}")`);
    const keys = s.slice(0, eq).split('.');
    const raw = s.slice(eq + 1);
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
    let at = out;
    for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
    at[keys[keys.length - 1]] = value;
  }
  return out;
}
