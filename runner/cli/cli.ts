/**
 * The `socsim` command line: run (with --serve, the dashboard follows it live), serve, inspect,
 * bench. Exit codes: 0 ok, 1 runtime failure, 2 bad input (one line naming the problem and the
 * fix, no stack trace), 130 interrupted.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, Help, Option } from 'commander';
import { addLlmOptions, backendOption, intFlag, numFlag, parseSets } from './flags.ts';
import { llmRunOptions } from '../run/llmFlags.ts';
import { escapeControls, InputError, isInputError } from '../../sim-core/errors.ts';
import { loadScenario, bundledScenarios } from '../run/loadScenario.ts';
import { runScenario } from '../run/runScenario.ts';
import { mergeParams, paramError } from '../run/strictParams.ts';
import { resumableRun } from '../run/resume.ts';
import { loadPlugins } from '../run/plugins.ts';
import { analysisHints } from './hints.ts';
import { DEFAULT_HOST, DEFAULT_PORT, dashboardDir, startServer, startServerThread, type DashboardServer } from '../serve/serve.ts';
import { PACKAGE_VERSION } from '../packageInfo.ts';
import { DEFAULT_MAX_FAILURE_SHARE, failureWarning } from '../run/llmFailures.ts';

const collect = (v: string, prev: string[]) => [...prev, v];

/** `--params FILE`: a JSON object of parameter overrides. */
function readParamsFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new InputError(`--params ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new InputError(`--params ${file}: not valid JSON (${escapeControls((err as Error).message)})`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new InputError(`--params ${file}: expected a JSON object of parameter overrides, e.g. {"beta": 0.1}`);
  return v as Record<string, unknown>;
}

const servePort = intFlag('--serve', 0, 65535);

/** `--ids`, `--directed`, `--undirected`: only with --graph, which replaces `--set graph.*`. */
function graphReadOptions(
  opts: { graph?: string; ids?: 'int' | 'name'; directed?: boolean; undirected?: boolean },
  overrides: Record<string, unknown>,
): { ids?: 'int' | 'name'; directed?: boolean } | undefined {
  if (opts.directed && opts.undirected) throw new InputError('--directed and --undirected contradict each other; give one of them');
  const given = [opts.ids !== undefined && '--ids', opts.directed && '--directed', opts.undirected && '--undirected'].filter(Boolean);
  if (!opts.graph) {
    if (given.length > 0) throw new InputError(`${given[0]} says how to read --graph FILE; add --graph FILE or drop ${given[0]}`);
    return undefined;
  }
  if (overrides.graph !== undefined) {
    throw new InputError('--set graph.* configures the generated graph, which --graph FILE replaces; drop --set graph.*, and use --directed or --undirected to say how to read the file');
  }
  return { ids: opts.ids, directed: opts.directed ? true : opts.undirected ? false : undefined };
}

function isLoopbackHost(h: string): boolean {
  return h === '::1' || h.startsWith('127.') || h === 'localhost';
}

/** Starts the dashboard server; a busy port or an address we cannot bind is bad input (exit 2). */
async function listen(o: Parameters<typeof startServer>[0], thread = false): Promise<DashboardServer> {
  ensureDashboardBuilt();
  try {
    return await (thread ? startServerThread(o) : startServer(o));
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') throw new InputError(`port ${o.port} is in use; pick another with --port (0 = any free port)`);
    if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND' || e.code === 'EACCES') throw new InputError(`cannot listen on ${o.host}:${o.port} (${e.code})`);
    throw err;
  }
}

/** The dashboard ships prebuilt (dist/dashboard); a checkout gets it from `npm run build`. */
function ensureDashboardBuilt(): void {
  const dir = dashboardDir();
  if (!fs.existsSync(path.join(dir, 'index.html'))) throw new Error(`the dashboard is not built (${dir} has no index.html); in a checkout run npm run build`);
}

/** Resolves on the first SIGINT or SIGTERM. */
function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}

/** Flags that shape a run's results: with --resume they come from the recorded run. */
const RUN_SHAPING = ['plugin', 'agents', 'steps', 'seed', 'graph', 'ids', 'directed', 'undirected', 'out', 'force', 'snapshotEvery', 'stepSeconds', 'events', 'set', 'params', 'llmModel', 'llmBaseUrl', 'llmCache', 'llmEvery', 'llmBudget', 'llmSamples', 'llmConcurrency', 'llmTimeout', 'llmRetries', 'llmMaxTokens', 'llmPersonas', 'llmPriceIn', 'llmPriceOut'];

/** For `run --resume DIR`: the recorded run's scenario and options, after checking it can resume. */
function resumeInvocation(scenarioArg: string | undefined, dirArg: string, cmd: Command) {
  if (scenarioArg) throw new InputError(`--resume ${dirArg} takes the scenario from the run; leave out "${scenarioArg}"`);
  for (const k of RUN_SHAPING) {
    if (cmd.getOptionValueSource(k) === 'cli') {
      const flag = '--' + k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
      throw new InputError(`--resume ${dirArg} takes ${flag} from the recorded run; leave ${flag} out`);
    }
  }
  if (cmd.getOptionValueSource('llm') === 'cli') throw new InputError(`--resume ${dirArg} takes --llm from the recorded run; leave --llm out`);
  const { manifest } = resumableRun(path.resolve(dirArg), dirArg);
  const inv = manifest.invocation!;
  return {
    scenario: inv.scenarioFile ?? manifest.scenario.name,
    plugins: inv.plugins ?? [],
    params: inv.params,
    graphRead: inv.graphRead as ReturnType<typeof graphReadOptions>,
    // --llm-max-cost may be raised (or dropped) to let a run stopped by it go on.
    llm: cmd.getOptionValueSource('llmMaxCost') === 'cli' ? { ...inv.llm, maxCost: cmd.getOptionValue('llmMaxCost') as number } : inv.llm,
    opts: {
      agents: inv.agents,
      steps: inv.steps,
      seed: manifest.seed,
      graph: inv.graphFile,
      out: dirArg,
      snapshotEvery: inv.snapshotEvery,
      stepSeconds: inv.stepSeconds,
      events: inv.events,
      ...(cmd.getOptionValueSource('checkpointEvery') !== 'cli' && { checkpointEvery: inv.checkpointEvery }),
    },
  };
}

/**
 * The commands defined in modules of their own, in the order `--help` lists them (after run and
 * serve). A command line naming one loads only that module: every `socsim run`, and so every run
 * of an experiment, starts without the others (a one-step sir run: 0.94-1.13 s against 1.03-1.21 s).
 */
const COMMAND_MODULES: Array<{ names: string[]; load: () => Promise<(program: Command) => void> }> = [
  { names: ['experiment', 'describe'], load: async () => (await import('./experimentCli.ts')).registerExperimentCommands },
  { names: ['validate'], load: async () => (await import('./validateCli.ts')).registerValidateCommand },
  { names: ['export', 'query'], load: async () => (await import('./analysisCli.ts')).registerAnalysisCommands },
  { names: ['calibrate'], load: async () => (await import('./calibrateCli.ts')).registerCalibrateCommand },
  { names: ['init'], load: async () => (await import('./init.ts')).registerInitCommand },
];
/** Commands defined here. */
const OWN_COMMANDS = ['run', 'serve', 'inspect', 'bench'];

/** The command line's parser; `command`: the word after `socsim` (all commands unless it names one). */
export async function buildProgram(command?: string): Promise<Command> {
  const named = COMMAND_MODULES.filter((m) => command !== undefined && m.names.includes(command));
  const modules = command !== undefined && OWN_COMMANDS.includes(command) ? [] : named.length > 0 ? named : COMMAND_MODULES;
  const registers = await Promise.all(modules.map((m) => m.load()));

  const program = new Command();
  program
    .name('socsim')
    .description('Million-agent social-media society simulator: columnar agents, classic models, a social platform with feeds, LLM archetypes, Arrow output and a dashboard')
    .version(PACKAGE_VERSION, '-V, --version', 'print the version')
    .exitOverride()
    // Commander's own errors (unknown option or command, missing argument) as every other: one
    // line starting "socsim:", with where to look.
    .configureOutput({ outputError: (str, write) => write(`socsim: ${str.trim().replace(/^error: /, '').replace(/\s*\n\s*/g, ' ')}; see socsim --help\n`) })
    // Every command's help marks its required options (commander's own does not); the commands
    // added below inherit this.
    .configureHelp({
      optionDescription(option) {
        const text = Help.prototype.optionDescription.call(this, option);
        return option.mandatory ? `${text} (required)` : text;
      },
    });

  const run = program
    .command('run')
    .description(`Run a scenario and write its run directory.\nBundled scenarios: ${bundledScenarios().join(', ')}\n(socsim describe <scenario> lists its parameters with their defaults; for the opinion models also the update scheme, its source, and the options that give NDlib's variant)`)
    .argument('[scenario]', 'a bundled scenario name or a path to a scenario .ts file (not with --resume)')
    .option('--agents <n>', 'number of agents (default: the scenario\'s); with --graph, node ids are 0..n-1 as-is', intFlag('--agents', 1, 2 ** 31 - 2))
    .option('--steps <n>', 'number of steps (default: the scenario\'s)', intFlag('--steps', 0))
    .option('--seed <n>', 'random seed (non-negative integer)', intFlag('--seed', 0), 1)
    .option('--threads <n>', 'worker threads for kernels (1 = main thread only)', intFlag('--threads', 1, 256), 1)
    .addOption(backendOption())
    .option('--graph <file>', 'load the follow graph from an edge list: CSV/TSV/whitespace text (# and % comments, .gz read directly) or Arrow IPC with source/target columns; ids are renumbered 0..n-1 (see --ids, --directed, --undirected)')
    .addOption(new Option('--ids <mode>', 'how --graph reads node ids: int (default: plain digits, any other field is an error, except that the first line that is not blank or a comment is skipped as a header when one of its two fields is not a number) or name (every field is a name; that first line is a header only when both fields are column words such as source,target)').choices(['int', 'name']))
    .option('--directed', 'read --graph as directed, "a b" = a follows b (default for opinion-cascade)')
    .option('--undirected', 'read --graph as undirected, each line a mutual tie (default for the classic-model scenarios)')
    .option('--out <dir>', 'run directory (default: runs/<scenario>); must be new, empty or an earlier run (see --force)')
    .option('--force', 'replace the run already in the run directory (removes only the files a run writes)')
    .option('--resume <dir>', 'continue an interrupted run (killed, Ctrl-C, failed) from its last checkpoint; everything but --threads, --backend, --quiet, --serve and --checkpoint-every comes from the run, and its files end byte-identical to an uninterrupted run (an --llm openai run needs the same server and key)')
    .option('--checkpoint-every <n>', 'checkpoint every n steps (0 = never); default automatic: after the first step, then whenever the time since the last reaches 20x its cost (<= ~5% overhead)', intFlag('--checkpoint-every', 0))
    .option('--snapshot-every <n>', 'agent snapshot every n steps (0 = first and last only); agents/step-N.arrow and the metrics row of step N are both the state after N steps', intFlag('--snapshot-every', 0))
    .option('--step-seconds <s>', 'simulated seconds per step', numFlag('--step-seconds', 0))
    .option('--events', 'also write events.arrow, the full action trace (large)')
    .option('--plan', 'print the LLM plan (calls per round and in all, prompt and completion tokens, the price with --llm-price-in/--llm-price-out) and exit, calling no model and writing nothing');
  addLlmOptions(run)
    .option('--params <file>', 'a JSON object of scenario parameter overrides (e.g. an experiment\'s plans/<run>.json), applied before --set and checked like it')
    .option('--set <key=value>', 'override a scenario parameter (repeatable; dots for nesting, e.g. graph.m=3)', collect, [])
    .option('--plugin <file>', 'load a plugin module first: a study\'s own ranker (export default defineRanker({...})), which --set platform.ranker=NAME then uses, or intervention kind (export default defineIntervention({...})), which interventions then name (repeatable; recorded for --resume)', collect, [])
    .addOption(new Option('--quiet', 'no progress output, and no reading guide after the run (its result and files only)'))
    .option('--serve [port]', `serve the dashboard on 127.0.0.1 while the run goes (port default ${DEFAULT_PORT}; 0 = any free port); keeps serving after the run until Ctrl-C`, servePort)
    .action(async (scenarioArg: string | undefined, opts, cmd: Command) => {
      if (opts.plan && opts.resume) throw new InputError('--plan describes a new run; leave out --resume (the run directory\'s manifest.json has what a run spent, under llm.spent)');
      const resumed = opts.resume ? resumeInvocation(scenarioArg, opts.resume, cmd) : undefined;
      if (resumed) {
        Object.assign(opts, resumed.opts);
        scenarioArg = resumed.scenario;
      } else if (!scenarioArg) throw new InputError('socsim run needs a scenario (a bundled name or a .ts file), or --resume DIR');
      // Plugins first: the parameters may name what they add (a ranker).
      const plugins = await loadPlugins(resumed?.plugins ?? opts.plugin);
      const { scenario, file } = await loadScenario(scenarioArg!);
      const overrides = parseSets(opts.set);
      const defaults = scenario.params.safeParse({});
      if (!defaults.success) throw paramError(scenario.name, defaults.error, scenario.params, {});
      const fileParams = opts.params === undefined ? {} : readParamsFile(opts.params);
      const base = mergeParams(scenario.params, defaults.data, fileParams);
      if (opts.params !== undefined) {
        const r = scenario.params.safeParse(base);
        if (!r.success) throw new InputError(`--params ${opts.params}: ${paramError(scenario.name, r.error, scenario.params, base).message.replace(/; set it with --set (\S+)=VALUE$/, '; correct it in the file')}`);
      }
      const params = resumed?.params ?? (mergeParams(scenario.params, base, overrides) as Record<string, unknown>);
      // Unknown or invalid parameters fail here, before --serve starts a server.
      const checked = scenario.params.safeParse(params);
      if (!checked.success) throw paramError(scenario.name, checked.error, scenario.params, params);
      const graphRead = resumed ? resumed.graphRead : graphReadOptions(opts, { ...fileParams, ...overrides });
      if (opts.plan) {
        const { planScenario } = await import('../run/planRun.ts');
        const plan = await planScenario(scenario, { agents: opts.agents, steps: opts.steps, seed: opts.seed, threads: opts.threads, graphFile: opts.graph ? path.resolve(opts.graph) : undefined, graphRead, stepSeconds: opts.stepSeconds, llm: llmRunOptions(opts), params });
        process.stdout.write((await import('./planOutput.ts')).planText(plan, 'this run'));
        return;
      }
      const signal = { stopRequested: false };
      const onSignal = () => {
        if (signal.stopRequested) process.exit(130);
        signal.stopRequested = true;
        process.stderr.write('\nstopping after the current step (press Ctrl-C again to quit now)\n');
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      // A run started by `socsim experiment` has an IPC channel to it (experimentRun.ts runChild):
      // when that process ends, however it ends, the channel closes and the run stops as on Ctrl-C.
      if (process.channel) {
        process.channel.unref();
        process.on('disconnect', onSignal);
      }
      const progress = opts.quiet ? undefined : (await import('./progress.ts')).createProgress(process.stderr);
      // --serve: the dashboard follows the run; run files answer 503 until the first step is done
      // and graph.arrow is written (runScenario's onReady).
      // The server has its own thread, so it answers while a step runs.
      const server = opts.serve === undefined ? undefined : await listen({
        runDir: path.resolve(opts.out ?? path.join('runs', scenario.name)),
        port: opts.serve === true ? DEFAULT_PORT : opts.serve,
        host: DEFAULT_HOST,
        watch: false,
        ready: false,
      }, true);
      if (server) process.stdout.write(`dashboard: ${server.url} (live; steps appear as they finish)\n`);
      const onStep = server
        ? (s: number, n: number, ms: number, m: Map<string, number>) => {
            progress?.step(s, n, ms, m);
            server.publish('step', { step: s, steps_completed: s, steps_requested: n, wall_ms: ms, status: 'running' });
          }
        : progress?.step;
      const { dir, manifest } = await runScenario(scenario, {
        agents: opts.agents,
        steps: opts.steps,
        seed: opts.seed,
        threads: opts.threads,
        backend: opts.backend,
        graphFile: opts.graph ? path.resolve(opts.graph) : undefined,
        graphRead,
        out: opts.out,
        force: !!opts.force,
        resume: !!resumed,
        checkpointEvery: opts.checkpointEvery,
        snapshotEvery: opts.snapshotEvery,
        stepSeconds: opts.stepSeconds,
        events: !!opts.events,
        llm: resumed?.llm ?? llmRunOptions(opts),
        params,
        scenarioFile: path.relative(process.cwd(), file),
        plugins,
        onStep,
        onReady: server ? () => server.markReady() : undefined,
        log: progress?.log,
        // Said even with --quiet: a resume that passes over a damaged checkpoint.
        warn: progress ? progress.log : (line: string) => void process.stderr.write(`${line}\n`),
        signal,
      }).catch(async (err: unknown) => {
        server?.publish('status', { status: 'failed', error: (err as Error).message });
        await server?.close();
        throw err;
      });
      progress?.done();
      // A run whose LLM mostly failed is not the run that was asked for: its files stay, but it exits 1.
      const failed = manifest.status === 'completed' && manifest.llm.provider !== 'heuristic' ? failureWarning(dir, opts.llmMaxFailures ?? DEFAULT_MAX_FAILURE_SHARE) : undefined;
      if (failed) {
        process.stderr.write(`socsim: ${failed}\n`);
        process.exitCode = 1;
      }
      const relative = path.relative(process.cwd(), dir);
      const rel = relative === '' ? '.' : relative.startsWith('..') ? dir : relative;
      if (manifest.status === 'interrupted' && manifest.stopped) {
        // --llm-max-cost: a clean stop, resumable with a higher limit; exit 1, the files kept.
        process.stdout.write(`${manifest.stopped}; completed steps are in ${rel}; continue with a higher limit: socsim run --resume ${rel} --llm-max-cost USD\n`);
        process.exitCode = 1;
        await server?.close();
        return;
      }
      if (manifest.status === 'interrupted') {
        const resume = manifest.checkpoint ? `; continue from step ${manifest.checkpoint.step} with: socsim run --resume ${rel}` : '; no checkpoint was taken, so it cannot be resumed';
        process.stdout.write(`interrupted after ${manifest.steps_completed} steps; completed steps are in ${rel}${resume}\n`);
        process.exitCode = 130;
        await server?.close();
        return;
      }
      const wall = manifest.step_wall_ms.reduce((a, b) => a + b, 0) / 1000;
      process.stdout.write(
        `done: ${manifest.steps_completed} steps of ${manifest.agents} agents, ${manifest.edges} edges ` +
          `in ${wall.toFixed(1)} s (+${manifest.setup_seconds.toFixed(1)} s set-up)\n` +
          `files: ${rel}/ (${['manifest.json', 'metrics.arrow', 'graph.arrow', ...(manifest.files.graph_end ? [manifest.files.graph_end] : []), ...(manifest.files.other ?? []), 'agents/step-*.arrow'].join(', ')})\n` +
          // --quiet: the result and where it is, without the reading guide.
          (opts.quiet ? '' : analysisHints(rel)),
      );
      if (server) {
        server.markReady();
        server.publish('status', { status: manifest.status, steps_completed: manifest.steps_completed, steps_requested: manifest.steps_requested });
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        const stopped = untilSignal();
        process.stdout.write(`still serving the dashboard at ${server.url}; press Ctrl-C to stop\n`);
        await stopped;
        await server.close();
      }
    });

  program
    .command('serve')
    .description('Serve the dashboard for a run directory (read-only) on 127.0.0.1; follows a run that is still going')
    .argument('<run-dir>', 'a run directory written by socsim run, or an experiment directory written by socsim experiment')
    .option('--port <n>', `port (0 = any free port)`, intFlag('--port', 0, 65535), DEFAULT_PORT)
    .option('--host <address>', 'address to bind; anything but a loopback address makes the run readable from other machines', DEFAULT_HOST)
    .action(async (dirArg: string, opts) => {
      const runDir = path.resolve(dirArg);
      if (!fs.existsSync(path.join(runDir, 'manifest.json')) && !fs.existsSync(path.join(runDir, 'experiment.json'))) {
        throw new InputError(`${dirArg} is not a run directory or an experiment directory (no manifest.json or experiment.json); write one with socsim run <scenario> --out ${dirArg} or socsim experiment FILE --out ${dirArg}`);
      }
      const server = await listen({ runDir, port: opts.port, host: opts.host });
      const stopped = untilSignal(); // before printing the URL, so a Ctrl-C right after it is ours
      process.stdout.write(`dashboard: ${server.url} (serving ${dirArg}, read-only); press Ctrl-C to stop\n`);
      if (!isLoopbackHost(server.host)) process.stdout.write(`warning: bound to ${server.host}: other machines on the network can read this run\n`);
      await stopped;
      await server.close();
    });

  for (const register of registers) register(program);

  program
    .command('inspect')
    .description('Summarise a run directory (manifest, every file with its schema and rows, whether it can be resumed) or an experiment directory (plan, runs complete, tables)')
    .argument('<dir>', 'a run directory written by socsim run, or an experiment directory written by socsim experiment')
    .action(async (dir: string) => {
      process.stdout.write((await import('./inspect.ts')).inspectRun(dir));
    });

  program
    .command('bench')
    .description('Measure build and step times (medians of repeated runs); never part of npm test')
    .option('--json', 'print one JSON object {machine, results} instead of a table')
    .option('--runs <n>', 'repetitions per measurement (>= 5 for reported figures)', intFlag('--runs', 1), 5)
    .option('--only <names>', 'comma-separated benchmark names (or prefixes) to run')
    .option('--agents <n>', 'agents for the build and model benchmarks', intFlag('--agents', 1000), 1_000_000)
    .addOption(new Option('--backend <name>', 'webgpu: also time the classic models on the GPU (voter, ic, sir, lt, degroot, synchronous deffuant, hk), per step and per kernel, and the social step runs on the GPU backend, beside the CPU figures').choices(['cpu', 'webgpu']).default('cpu'))
    .action(async (opts) => {
      await (await import('../bench/bench.ts')).runBench({ json: !!opts.json, runs: opts.runs, only: opts.only?.split(','), agents: opts.agents, backend: opts.backend });
    });

  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = await buildProgram(argv[2]);
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.invalidArgument' || err.code === 'commander.unknownOption') return 2;
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) return 0;
      return 2;
    }
    if (isInputError(err)) {
      process.stderr.write(`socsim: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`socsim: error: ${(err as Error).message}\n`);
    if (process.env.SOCSIM_DEBUG) process.stderr.write(`${(err as Error).stack}\n`);
    else process.stderr.write('(set SOCSIM_DEBUG=1 for the stack trace)\n');
    return 1;
  }
}
