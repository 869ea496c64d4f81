/**
 * The `socsim` command line: run, inspect, bench. Exit codes: 0 ok, 1 runtime failure, 2 bad
 * input (one line naming the problem and the fix, no stack trace), 130 interrupted.
 */
import path from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { InputError } from '../sim-core/errors.ts';
import { loadScenario, bundledScenarios } from './loadScenario.ts';
import { paramError, runScenario } from './runScenario.ts';
import { createProgress } from './progress.ts';
import { inspectRun } from './inspect.ts';
import { runBench } from './bench.ts';
import { analysisHints } from './hints.ts';

function intFlag(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (raw: string): number => {
    const v = Number(raw.replace(/_/g, ''));
    if (!/^\s*[0-9][0-9_]*\s*$/.test(raw) || !Number.isSafeInteger(v) || v < min || v > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
      throw new InputError(`${name} must be a whole number ${range} (got "${raw}")`);
    }
    return v;
  };
}

function numFlag(name: string, minExclusive: number) {
  return (raw: string): number => {
    const v = Number(raw);
    if (!Number.isFinite(v) || v <= minExclusive) throw new InputError(`${name} must be a number > ${minExclusive} (got "${raw}")`);
    return v;
  };
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

function isPlain(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function deepMerge(base: unknown, over: unknown): unknown {
  if (!isPlain(base) || !isPlain(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(base[k], v);
  return out;
}

const collect = (v: string, prev: string[]) => [...prev, v];

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('socsim')
    .description('Million-agent social-media society simulator: columnar agents, classic models, Arrow output')
    .exitOverride()
    .configureOutput({ outputError: (str, write) => write(str) })
    .showHelpAfterError('(run with --help for usage)');

  program
    .command('run')
    .description(`Run a scenario and write its run directory.\nBundled scenarios: ${bundledScenarios().join(', ')}`)
    .argument('<scenario>', 'a bundled scenario name or a path to a scenario .ts file')
    .option('--agents <n>', 'number of agents (default: the scenario\'s); with --graph, node ids are 0..n-1 as-is', intFlag('--agents', 1, 2 ** 31 - 2))
    .option('--steps <n>', 'number of steps (default: the scenario\'s)', intFlag('--steps', 0))
    .option('--seed <n>', 'random seed (non-negative integer)', intFlag('--seed', 0), 1)
    .option('--threads <n>', 'worker threads for kernels (1 = main thread only)', intFlag('--threads', 1, 256), 1)
    .option('--graph <file>', 'load the follow graph from an edge list (CSV/TSV/SNAP text or Arrow)')
    .option('--out <dir>', 'run directory (default: runs/<scenario>)')
    .option('--snapshot-every <n>', 'agent snapshot every n steps (0 = first and last only)', intFlag('--snapshot-every', 0))
    .option('--step-seconds <s>', 'simulated seconds per step', numFlag('--step-seconds', 0))
    .option('--events', 'also write events.arrow, the full action trace (large)')
    .addOption(new Option('--llm <provider>', 'who sets archetype behaviour: heuristic (offline rules, not an LLM), openai (any OpenAI-compatible server), replay (a recorded cache)').choices(['heuristic', 'openai', 'replay']).default('heuristic'))
    .option('--llm-model <name>', 'model name sent to the server (default gpt-4o-mini)')
    .option('--llm-base-url <url>', 'OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (Ollama); key from SOCSIM_LLM_API_KEY or OPENAI_API_KEY')
    .option('--llm-cache <file>', 'llm-cache.jsonl of a recorded run: replayed with --llm replay, reused as a cache with --llm openai')
    .option('--llm-every <n>', 'archetype decision every n steps (default 6)', intFlag('--llm-every', 1))
    .option('--llm-budget <n>', 'most LLM calls per decision round (default 256)', intFlag('--llm-budget', 1))
    .option('--llm-samples <n>', 'replies averaged per archetype (default 1)', intFlag('--llm-samples', 1, 16))
    .option('--llm-concurrency <n>', 'calls in flight at once (default 16)', intFlag('--llm-concurrency', 1, 256))
    .option('--llm-timeout <s>', 'seconds per call before it counts as a timeout (default 30)', numFlag('--llm-timeout', 0))
    .option('--llm-retries <n>', 'retries per call (default 2)', intFlag('--llm-retries', 0, 10))
    .option('--set <key=value>', 'override a scenario parameter (repeatable; dots for nesting, e.g. graph.m=3)', collect, [])
    .addOption(new Option('--quiet', 'no progress output'))
    .action(async (scenarioArg: string, opts) => {
      const { scenario, file } = await loadScenario(scenarioArg);
      const overrides = parseSets(opts.set);
      const known = Object.keys(scenario.params.shape);
      for (const k of Object.keys(overrides)) {
        if (!known.includes(k)) throw new InputError(`unknown parameter "${k}" for scenario ${scenario.name}; known: ${known.join(', ')}`);
      }
      const defaults = scenario.params.safeParse({});
      if (!defaults.success) throw paramError(scenario.name, defaults.error);
      const params = deepMerge(defaults.data, overrides) as Record<string, unknown>;
      const signal = { stopRequested: false };
      const onSignal = () => {
        if (signal.stopRequested) process.exit(130);
        signal.stopRequested = true;
        process.stderr.write('\nstopping after the current step (press Ctrl-C again to quit now)\n');
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      const progress = opts.quiet ? undefined : createProgress(process.stderr);
      const { dir, manifest } = await runScenario(scenario, {
        agents: opts.agents,
        steps: opts.steps,
        seed: opts.seed,
        threads: opts.threads,
        graphFile: opts.graph ? path.resolve(opts.graph) : undefined,
        out: opts.out,
        snapshotEvery: opts.snapshotEvery,
        stepSeconds: opts.stepSeconds,
        events: !!opts.events,
        llm: {
          provider: opts.llm,
          ...(opts.llmModel !== undefined && { model: opts.llmModel }),
          ...(opts.llmBaseUrl !== undefined && { baseURL: opts.llmBaseUrl }),
          ...(opts.llmCache !== undefined && { cacheFile: path.resolve(opts.llmCache) }),
          ...(opts.llmEvery !== undefined && { every: opts.llmEvery }),
          ...(opts.llmBudget !== undefined && { budget: opts.llmBudget }),
          ...(opts.llmSamples !== undefined && { samples: opts.llmSamples }),
          ...(opts.llmConcurrency !== undefined && { concurrency: opts.llmConcurrency }),
          ...(opts.llmTimeout !== undefined && { timeoutSeconds: opts.llmTimeout }),
          ...(opts.llmRetries !== undefined && { retries: opts.llmRetries }),
        },
        params,
        scenarioFile: path.relative(process.cwd(), file),
        onStep: progress?.step,
        log: progress?.log,
        signal,
      });
      progress?.done();
      const relative = path.relative(process.cwd(), dir);
      const rel = relative === '' ? '.' : relative.startsWith('..') ? dir : relative;
      if (manifest.status === 'interrupted') {
        process.stdout.write(`interrupted after ${manifest.steps_completed} steps; completed steps are in ${rel}\n`);
        process.exitCode = 130;
        return;
      }
      const wall = manifest.step_wall_ms.reduce((a, b) => a + b, 0) / 1000;
      process.stdout.write(
        `done: ${manifest.steps_completed} steps of ${manifest.agents} agents, ${manifest.edges} edges ` +
          `in ${wall.toFixed(1)} s (+${manifest.setup_seconds.toFixed(1)} s set-up)\n` +
          `files: ${rel}/ (${['manifest.json', 'metrics.arrow', 'graph.arrow', ...(manifest.files.graph_end ? [manifest.files.graph_end] : []), ...(manifest.files.other ?? []), 'agents/step-*.arrow'].join(', ')})\n` +
          analysisHints(rel),
      );
    });

  program
    .command('inspect')
    .description('Summarise a run directory: manifest, files, schemas and row counts')
    .argument('<run-dir>', 'a run directory written by socsim run')
    .action((dir: string) => {
      process.stdout.write(inspectRun(dir));
    });

  program
    .command('bench')
    .description('Measure build and step times (medians of repeated runs); never part of npm test')
    .option('--json', 'print one JSON object {machine, results} instead of a table')
    .option('--runs <n>', 'repetitions per measurement (>= 5 for reported figures)', intFlag('--runs', 1), 5)
    .option('--only <names>', 'comma-separated benchmark names (or prefixes) to run')
    .option('--agents <n>', 'agents for the build and model benchmarks', intFlag('--agents', 1000), 1_000_000)
    .action(async (opts) => {
      await runBench({ json: !!opts.json, runs: opts.runs, only: opts.only?.split(','), agents: opts.agents });
    });

  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.invalidArgument' || err.code === 'commander.unknownOption') return 2;
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) return 0;
      return 2;
    }
    if (err instanceof InputError) {
      process.stderr.write(`socsim: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`socsim: error: ${(err as Error).message}\n`);
    if (process.env.SOCSIM_DEBUG) process.stderr.write(`${(err as Error).stack}\n`);
    else process.stderr.write('(set SOCSIM_DEBUG=1 for the stack trace)\n');
    return 1;
  }
}
