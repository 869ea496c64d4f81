/**
 * `socsim bench`: the figures of docs/performance.md, as medians over repeated
 * runs with the spread. Never part of `npm test`. `--json` prints
 * {"machine": {...}, "results": [{"name", "median", "min", "max", "unit", "runs"}]}.
 */
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readArrowFile } from '../../sim-core/io/arrowFile.ts';
import type { Manifest } from '../run/runDirectory.ts';
import { buildGraph, graphBytes, type Graph } from '../../sim-core/csr.ts';
import { type Executor } from '../../sim-core/exec.ts';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { queueStep, runStep, type Phase, type World } from '../../sim-core/phase.ts';
import { tableBytes, type Table } from '../../sim-core/table.ts';
import { barabasiAlbert, homophilousPreferentialOn } from '../../graph/generators.ts';
import { synthesizePopulation } from '../../population/synthesize.ts';
import { independentCascade, linearThreshold, sir } from '../../models/cascade.ts';
import { deffuant, degroot, hegselmannKrause, voter } from '../../models/opinion.ts';
import { openGpu, type Gpu } from '../../sim-core/gpu/device.ts';
import { GpuExecutor } from '../../sim-core/gpu/executor.ts';
import { InputError } from '../../sim-core/errors.ts';
import { prepareFloor, removeFloor, runFloor, type Floor } from './benchFloor.ts';
import { TimedExecutor } from './timedExecutor.ts';
import { BIN, MODULE_EXT } from '../packageInfo.ts';

export interface BenchResult {
  name: string;
  median: number;
  min: number;
  max: number;
  unit: string;
  runs: number;
}

export interface BenchOptions {
  json: boolean;
  runs: number;
  only?: string[];
  agents: number;
  /** webgpu: also time the models whose step runs on the GPU, per step and per kernel. */
  backend?: 'cpu' | 'webgpu';
}

/** The classic models whose step kernels all have a WGSL version (a `gpu` in their declaration, sim-core/gpu/wgslKernel.ts). */
const GPU_MODELS = ['voter', 'ic', 'sir', 'lt', 'degroot', 'deffuant', 'hk'];

function sizeLabel(n: number): string {
  if (n % 1_000_000 === 0) return `${n / 1_000_000}m`;
  if (n % 1000 === 0) return `${n / 1000}k`;
  return String(n);
}

function summarise(name: string, unit: string, xs: number[]): BenchResult {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return { name, median: mid, min: s[0], max: s[s.length - 1], unit, runs: s.length };
}

export function machineInfo() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memory_bytes: os.totalmem(),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    date: new Date().toISOString(),
  };
}

async function buildSocial(exec: Executor, n: number, seed: number) {
  const pop = synthesizePopulation(n, seed);
  const c = pop.agents.columns;
  const el = await homophilousPreferentialOn(exec, n, seed, {
    meanFollowing: 45,
    homophily: 0.7,
    reciprocity: 0.1,
    opinion: c.opinion as Float32Array,
    topic: c.topic as Uint8Array,
    weight: c.activity as Float32Array,
  });
  const graph = await buildGraph(exec, n, el.src, el.dst, true);
  return { agents: pop.agents, graph };
}

/**
 * Seconds per step: `runs` runs of `stepsPerRun` steps after two warm-up steps. As in a run
 * (runner/run/runScenario.ts), a step's late metrics are awaited once the next step is queued.
 * `settle` waits for work still queued on a device, so a run counts the kernels it submitted, not
 * only their encoding.
 */
async function timeSteps(world: World, phases: Phase[], runs: number, stepsPerRun: number, reset?: () => Promise<void>, settle?: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (const p of phases) await p.init?.(world);
  for (let w = 0; w < 2; w++) await runStep(world, phases, w); // warm-up (JIT, worker start)
  await settle?.();
  for (let r = 0; r < runs; r++) {
    if (reset) await reset();
    const t0 = performance.now();
    let metrics: Promise<unknown> | undefined;
    for (let s = 0; s < stepsPerRun; s++) {
      const queued = await queueStep(world, phases, 100 + r * stepsPerRun + s);
      await metrics;
      metrics = queued.metrics;
    }
    await metrics;
    await settle?.();
    out.push((performance.now() - t0) / 1000 / stepsPerRun);
  }
  return out;
}

/** Steps per block of the voter comparison: the C floor runs FLOOR_STEPS (the first excluded), socsim BLOCK_STEPS. */
const FLOOR_STEPS = 11;
const BLOCK_STEPS = 5;

/**
 * The voter step beside the C floor: `blocks` blocks, each the floor on the same graph and thread
 * count (median of 10 steps) then BLOCK_STEPS socsim steps timed one by one, so a change in the
 * machine's load falls on both sides of each block's ratio. Reports socsim's median step over every
 * block, the floor's median over blocks, the median of the per-block ratios, and each kernel's
 * median milliseconds. Two warm-up steps first (JIT, worker start). The results' `values` hold
 * socsim's step times.
 */
async function voterVsFloor(world: World, phases: Phase[], floor: Floor | undefined, blocks: number, label: string): Promise<Array<BenchResult & { values: number[] }>> {
  const timed = new TimedExecutor(world.exec);
  const w: World = { ...world, exec: timed };
  for (const p of phases) await p.init?.(w);
  for (let s = 0; s < 2; s++) await runStep(w, phases, s);
  timed.clear();
  const steps: number[] = [];
  const floors: number[] = [];
  const ratios: number[] = [];
  for (let b = 0; b < blocks; b++) {
    const c = floor ? runFloor(floor, FLOOR_STEPS, world.exec.threads) : NaN;
    const block: number[] = [];
    for (let s = 0; s < BLOCK_STEPS; s++) {
      const t0 = performance.now();
      await runStep(w, phases, 100 + b * BLOCK_STEPS + s);
      block.push((performance.now() - t0) / 1000);
    }
    steps.push(...block);
    if (floor) {
      floors.push(c);
      ratios.push(summarise('', 's', block).median / c);
    }
  }
  await timed.close();
  const out: Array<BenchResult & { values: number[] }> = [{ ...summarise(`voter-step-${label}`, 's', steps), values: steps }];
  if (floor) {
    out.push({ ...summarise(`voter-floor-c-${label}`, 's', floors), values: floors });
    out.push({ ...summarise(`voter-ratio-c-${label}`, 'x', ratios), values: ratios });
  }
  for (const [k, ms] of timed.kernelMs) out.push({ ...summarise(`voter-kernel-${k}-${label}`, 'ms', ms), values: ms });
  return out;
}

export async function runBench(o: BenchOptions): Promise<BenchResult[]> {
  const n = o.agents;
  const L = sizeLabel(n);
  const want = (name: string) => !o.only || o.only.some((p) => name.startsWith(p));
  const results: BenchResult[] = [];
  const say = (r: BenchResult) => {
    results.push(r);
    if (!o.json) {
      const f = (v: number) => (r.unit === 's' ? v.toFixed(4) : v.toPrecision(4));
      process.stdout.write(`${r.name.padEnd(34)} ${f(r.median).padStart(12)} ${r.unit.padEnd(8)} [${f(r.min)} .. ${f(r.max)}] n=${r.runs}\n`);
    }
  };
  let gpu: Gpu | undefined;
  if (o.backend === 'webgpu') {
    const g = await openGpu();
    if (!('device' in g)) throw new InputError(`--backend webgpu: ${g.unavailable}`);
    gpu = g;
  }
  if (!o.json) process.stdout.write(`machine: ${JSON.stringify({ ...machineInfo(), ...(gpu ? { adapter: gpu.adapter } : {}) })}\n`);

  // CLI start: the whole `socsim --help` and `socsim --version` process, from spawn to exit.
  for (const flag of ['help', 'version']) if (want(`cli-start-${flag}`)) say(summarise(`cli-start-${flag}`, 's', cliStart(`--${flag}`, Math.max(o.runs, 5))));

  const buildName = `build-${L}-50m`;
  if (want(buildName) || want('bytes-per')) {
    const exec = createExecutor(2);
    const times: number[] = [];
    let last: { agents: Table; graph: Graph } | undefined;
    for (let r = 0; r < (want(buildName) ? o.runs : 1); r++) {
      last = undefined;
      const t0 = performance.now();
      last = await buildSocial(exec, n, r + 1);
      times.push((performance.now() - t0) / 1000);
    }
    await exec.close();
    if (want(buildName)) say(summarise(buildName, 's', times));
    const g = last!.graph;
    const offsets = g.following.offsets.byteLength + g.followers.offsets.byteLength;
    const perAgent = (tableBytes(last!.agents) + offsets) / n;
    const perEdge = (graphBytes(g) - offsets) / g.edges;
    say(summarise('bytes-per-agent', 'B', [perAgent]));
    say(summarise('bytes-per-edge', 'B', [perEdge]));
    say(summarise(`edges-${L}-social`, 'edges', [g.edges]));
  }

  const modelNames = ['voter', 'ic', 'sir', 'lt', 'degroot', 'deffuant', 'hk'];
  const needBa = modelNames.some((m) => [1, 2].some((t) => want(`${m}-step-${L}-ba5-t${t}`))) || want('agent-steps') || (!!gpu && GPU_MODELS.some((m) => want(`${m}-step-${L}-ba5-webgpu`)));
  if (needBa) {
    const build = createExecutor(2);
    const pop = synthesizePopulation(n, 1);
    const el = barabasiAlbert(n, 5, 1);
    const graph = await buildGraph(build, n, el.src, el.dst, false);
    await build.close();
    const wantVoter = [1, 2].some((t) => want(`voter-step-${L}-ba5-t${t}`) || want(`voter-ratio-c-${L}-ba5-t${t}`));
    const floor = wantVoter ? prepareFloor(n, el.src, el.dst) : undefined;
    if (floor && 'unavailable' in floor && !o.json) process.stdout.write(`voter C floor skipped: ${floor.unavailable}\n`);
    const make: Record<string, () => Phase[]> = {
      voter: () => [voter()],
      ic: () => [independentCascade({ p: 0.05, seeds: 'hubs', seedCount: 1000 })],
      sir: () => [sir({ beta: 0.05, gamma: 0.2, seeds: 'random', seedCount: 1000 })],
      lt: () => [linearThreshold({ seeds: 'random', seedCount: 50_000 })],
      degroot: () => [degroot()],
      deffuant: () => [deffuant({ eps: 0.3, mu: 0.5, scheme: 'synchronous' })],
      hk: () => [hegselmannKrause({ eps: 0.2 })],
    };
    for (const t of [1, 2]) {
      for (const m of modelNames) {
        const name = `${m}-step-${L}-ba5-t${t}`;
        if (!want(name) && !(m === 'voter' && t === 2 && want('agent-steps')) && !(m === 'voter' && want(`voter-ratio-c-${L}-ba5-t${t}`))) continue;
        if (m === 'voter') {
          const world: World = { agents: pop.agents, graph, exec: createExecutor(t), seed: 1, stepSeconds: 3600 };
          const f = floor && 'bin' in floor ? floor : undefined;
          const rs = await voterVsFloor(world, make.voter(), f, Math.max(o.runs, 5), `${L}-ba5-t${t}`);
          for (const r of rs) say(r);
          if (t === 2 && want('agent-steps')) say(summarise(`agent-steps-per-s-voter-${L}-t2`, 'steps/s', rs[0].values.map((x) => n / x)));
          continue;
        }
        const exec = createExecutor(t);
        const world: World = { agents: pop.agents, graph, exec, seed: 1, stepSeconds: 3600 };
        const phases = make[m]();
        const cascade = m === 'ic' || m === 'sir' || m === 'lt';
        // Contagions change with every step: each run restarts from the seeds and averages 10 steps.
        const reset = cascade
          ? async () => {
              (pop.agents.columns.state as Uint8Array).fill(0);
              for (const p of phases) await p.init?.(world);
            }
          : undefined;
        const xs = await timeSteps(world, phases, Math.max(o.runs, cascade ? o.runs : 10), cascade ? 10 : 1, reset);
        await exec.close();
        say(summarise(name, 's', xs));
      }
    }
    if (floor && 'bin' in floor) removeFloor(floor);
    for (const m of gpu ? GPU_MODELS : []) {
      const name = `${m}-step-${L}-ba5-webgpu`;
      if (!want(name)) continue;
      // Step times with the queue running freely; then a few steps waiting for every kernel, for
      // per-kernel times. The state starts again from the seeds before each.
      for (const timeKernels of [false, true]) {
        const exec = new GpuExecutor(gpu!, createExecutor(1), { timeKernels });
        const world: World = { agents: pop.agents, graph, exec, seed: 1, stepSeconds: 3600 };
        const phases = make[m]();
        const cascade = m === 'ic' || m === 'sir' || m === 'lt';
        // As on the CPU: contagions restart from the seeds for each run of 10 steps; the restart
        // writes columns on the host, so the device copies are dropped.
        const reset = cascade
          ? async () => {
              await exec.sync();
              (pop.agents.columns.state as Uint8Array).fill(0);
              for (const p of phases) await p.init?.(world);
              for (const col of Object.values(pop.agents.columns)) exec.hostWrote(col);
            }
          : undefined;
        const xs = await timeSteps(world, phases, timeKernels ? 1 : Math.max(o.runs, cascade ? o.runs : 10), cascade ? 10 : 3, reset, () => gpu!.device.queue.onSubmittedWorkDone());
        if (!timeKernels) {
          say(summarise(name, 's', xs));
          if (m === 'voter') say(summarise(`agent-steps-per-s-voter-${L}-webgpu`, 'steps/s', xs.map((x) => n / x)));
        } else {
          // Medians over every call, the two warm-up steps' too (their pipeline compiles are outliers).
          for (const [kernel, ms] of exec.kernelMs) say(summarise(`${m}-kernel-${kernel}-${L}-webgpu`, 'ms', ms));
          // The same passes on the device's clock (timestamp queries, where the adapter has them).
          for (const [kernel, ms] of exec.kernelDeviceMs) say(summarise(`${m}-device-${kernel}-${L}-webgpu`, 'ms', ms));
        }
      }
    }
  }
  // Steady state, after 48 hours of warm-up, so the 48-hour post window is full:
  // --agents, a full simulated day (24 steps, one of them folding the day's follows into a new
  // CSR); 10x --agents, five daytime steps (10:00-14:00 of the third day: ~10 minutes on 2 cores).
  // Both with the scenario's default ~45 follows per user (docs/performance.md's 10M figures are of that graph).
  for (const [agents, follow, warm, measured] of [
    [n, 45, 48, 24],
    [10 * n, 45, 48, 5],
  ] as const) {
    const label = sizeLabel(agents);
    // With --backend webgpu, the same run again on the GPU backend (the social kernels with a WGSL
    // version on the device, the rest on the 2 CPU threads), labelled -webgpu.
    for (const backend of gpu ? (['cpu', 'webgpu'] as const) : (['cpu'] as const)) {
      const tag = backend === 'webgpu' ? `${label}-webgpu` : label;
      if (!want(`social-step-${tag}`) && !want(`social-peak-rss-${tag}`) && !want(`social-phase`)) continue;
      if (!o.json) process.stdout.write(`social ${tag}: steps ${warm}..${warm + measured - 1} of a ${warm + measured}-step run from 10:00, 2 threads${backend === 'webgpu' ? ` and ${gpu!.adapter}` : ''}${warm >= 48 ? ' (48-hour post window full)' : ' (post window not yet full)'}\n`);
      for (const r of socialRun(agents, follow, warm, measured, tag, backend)) say(r);
      // Per GPU kernel: a shorter run of the same size, each kernel waited for and timed (that
      // serialises the queue, so the step and phase figures come from the untimed run above).
      if (backend === 'webgpu' && want(`social-kernel`)) for (const r of socialRun(agents, follow, 2, 6, tag, backend, true)) say(r);
    }
  }
  // Fixed size (not --agents): the figure is compared with the one measured before the pool
  // released dropped arrays (257 MB at 1 thread, 1,840 MB at 2).
  if (POOL_RSS_NAMES.some(want)) for (const r of poolRss(Math.max(o.runs, 3))) say(r);
  const overheadName = `archetype-overhead-${L}-100arch-50ms`;
  if (want(overheadName)) for (const r of await archetypeOverhead(n, L)) say(r);
  if (want(EXPERIMENT_NAME)) say(summarise(EXPERIMENT_NAME, 'runs/h', experimentThroughput(o.runs)));
  if (o.json) process.stdout.write(JSON.stringify({ machine: machineInfo(), results }, null, 2) + '\n');
  return results;
}

/** Wall seconds of `socsim FLAG` as a new process, `runs` times after one unmeasured start. */
function cliStart(flag: string, runs: number): number[] {
  const out: number[] = [];
  for (let r = -1; r < runs; r++) {
    const t0 = performance.now();
    const p = spawnSync(process.execPath, [BIN, flag], { stdio: ['ignore', 'ignore', 'pipe'] });
    if (p.status !== 0) throw new Error(`socsim ${flag} exited ${p.status}: ${p.stderr}`);
    if (r >= 0) out.push((performance.now() - t0) / 1000);
  }
  return out;
}

const EXPERIMENT_NAME = 'experiment-throughput-100k-48h-2arms-2seeds-j2-t1';

/**
 * Experiment throughput: runs per hour of a real `socsim experiment` of social-feed at 100,000
 * agents for 48 hours, 2 arms (feed size 10 and 20) x 2 seeds, --jobs 2, --threads 1 each, from
 * the plan to the tables. One figure per repetition (each a fresh experiment directory).
 */
function experimentThroughput(runs: number): number[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-bench-exp-'));
  const api = fileURLToPath(new URL(`../experiment/defineExperiment${MODULE_EXT}`, import.meta.url));
  const file = path.join(dir, 'throughput.mts');
  fs.writeFileSync(
    file,
    `import { defineExperiment, metric } from ${JSON.stringify(api)};\n` +
      `export default defineExperiment({ name: 'throughput', description: 'bench', scenario: 'social-feed', ` +
      `arms: { feed10: { platform: { feedSize: 10 } }, feed20: { platform: { feedSize: 20 } } }, seeds: 2, ` +
      `defaults: { agents: 100000, hours: 48 }, outcomes: { active: metric('active_users').mean() } });\n`,
  );
  const out: number[] = [];
  try {
    for (let r = 0; r < runs; r++) {
      const t0 = performance.now();
      const p = spawnSync(process.execPath, [BIN, 'experiment', file, '--out', path.join(dir, `exp-${r}`), '--jobs', '2', '--threads', '1', '--quiet'], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
      if (p.status !== 0) throw new Error(`experiment bench failed: ${p.stderr}`);
      out.push(4 / ((performance.now() - t0) / 3_600_000));
      fs.rmSync(path.join(dir, `exp-${r}`), { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/**
 * LLM archetype overhead: a real social-feed run at `agents` users with 90 archetypes (6 age bands
 * x 5 leanings x 3 activity tiers) deciding every step against a local OpenAI-compatible server
 * that answers after 50 ms, 16 calls in flight. The figure is the wall time of the two archetype
 * phases per step (observation kernel, prompts, sending; then waiting for what is not back yet,
 * parsing, archetypes.arrow); the bound it is held to is 50 ms x ceil(calls / 16) + 10%.
 */
async function archetypeOverhead(agents: number, label: string): Promise<BenchResult[]> {
  const reply = JSON.stringify({
    probabilities: { post: 0.08, like: 0.03, dislike: 0.01, repost: 0.008, quote: 0.002, comment: 0.005, report: 0.001, mute: 0.001, unfollow: 0.002, follow: 0.1 },
    opinion: { eps: 0.4, mu: 0.05, backfire: 0.02 },
    reason: 'A steady, moderately engaged group.',
  });
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.endsWith('/models')) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'b', object: 'chat.completion', created: 0, model: 'bench', choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }], usage: { prompt_tokens: 450, completion_tokens: 120, total_tokens: 570 } }));
      }, 50);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-bench-llm-'));
  try {
      const args = [BIN, 'run', 'social-feed', '--agents', String(agents), '--steps', '8', '--threads', '2', '--snapshot-every', '0', '--quiet', '--set', 'platform.startHour=10', '--llm', 'openai', '--llm-base-url', `http://127.0.0.1:${port}/v1`, '--llm-every', '1', '--llm-concurrency', '16', '--out', dir];
    const child = spawn(process.execPath, args, { env: { ...process.env, SOCSIM_LLM_API_KEY: 'bench' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    if (code !== 0) throw new Error(`archetype bench run failed: ${err}`);
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
    const metrics = readArrowFile(path.join(dir, 'metrics.arrow'));
    const calls = Array.from(metrics.getChild('llm_calls')!.toArray() as Int32Array).slice(2);
    // What the rounds add to a step: the ask phase (observation, prompts, sending) plus the wait in
    // the collect phase for replies not yet back when apply and update are done.
    const ask = m.phase_wall_ms['archetypes-ask'].slice(2);
    const phase = m.phase_wall_ms.archetypes.slice(2).map((x, i) => (x + ask[i]) / 1000);
    return [
      summarise(`archetype-overhead-${label}-100arch-50ms`, 's', phase),
      summarise(`archetype-overhead-bound-${label}-100arch-50ms`, 's', calls.map((c) => 0.05 * Math.ceil(c / 16) * 1.1)),
      summarise(`archetype-calls-per-round-${label}`, 'calls', calls),
      summarise(`archetype-social-step-${label}`, 's', m.step_wall_ms.slice(2).map((x) => x / 1000)),
    ];
  } finally {
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The full social step, measured on a real `socsim run social-feed` in a child process (so its
 * peak RSS is its own): 2 threads, the clock starting at 10:00, the first `warm` steps discarded as
 * warm-up, the next `measured` are the runs. With `timeKernels` (webgpu), only each GPU kernel's
 * milliseconds per call (SOCSIM_GPU_TIME_KERNELS=1).
 */
function socialRun(agents: number, meanFollowing: number, warm: number, measured: number, label: string, backend: 'cpu' | 'webgpu', timeKernels = false): BenchResult[] {
  const steps = warm + measured;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-bench-'));
  try {
      const args = [BIN, 'run', 'social-feed', '--agents', String(agents), '--steps', String(steps), '--threads', '2', '--snapshot-every', '0', '--quiet', '--set', `graph.meanFollowing=${meanFollowing}`, '--set', 'platform.startHour=10', '--backend', backend, '--out', dir];
    const env = timeKernels ? { ...process.env, SOCSIM_GPU_TIME_KERNELS: '1' } : process.env;
    const r = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], env });
    if (r.status !== 0) throw new Error(`social-feed bench run failed: ${r.stderr}`);
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
    if (timeKernels) return Object.entries(m.kernel_device_ms ?? {}).map(([kernel, ms]) => summarise(`social-kernel-${kernel}-${label}`, 'ms', ms.slice(warm)));
    const metrics = readArrowFile(path.join(dir, 'metrics.arrow'));
    const col = (name: string) => Array.from(metrics.getChild(name)!.toArray() as ArrayLike<number>).slice(warm);
    const actions = col('active_users').map((_, i) =>
      ['like', 'dislike', 'repost', 'quote', 'comment', 'report', 'mute', 'unfollow', 'follow', 'post'].reduce((t, a) => t + col(`actions_${a}`)[i], 0),
    );
    const posts = col('posts_original').map((v, i) => v + col('posts_repost')[i] + col('posts_quote')[i] + col('posts_comment')[i]);
    const out = [
      summarise(`social-step-${label}`, 's', m.step_wall_ms.slice(warm).map((x) => x / 1000)),
      summarise(`agent-steps-per-s-social-${label}`, 'steps/s', m.step_wall_ms.slice(warm).map((x) => agents / (x / 1000))),
      ...Object.entries(m.phase_wall_ms).map(([phase, xs]) => summarise(`social-phase-${phase}-${label}`, 's', xs.slice(warm).map((x) => x / 1000))),
      summarise(`social-posts-in-window-${label}`, 'posts', col('posts_in_window')),
      summarise(`social-active-users-${label}`, 'users', col('active_users')),
      summarise(`social-actions-per-step-${label}`, 'actions', actions),
      summarise(`social-posts-per-step-${label}`, 'posts', posts),
      summarise(`social-edges-${label}`, 'edges', [m.edges]),
      summarise(`social-setup-${label}`, 's', [m.setup_seconds]),
      summarise(`social-peak-rss-${label}`, 'B', [m.peak_rss_bytes]),
      // Which kernels ran on the device, with their calls over the whole run.
      ...Object.entries(m.kernel_calls?.webgpu ?? {}).map(([kernel, calls]) => summarise(`social-gpu-calls-${kernel}-${label}`, 'calls', [calls])),
      // Bytes each kernel moved between host and device, per step over the whole run.
      ...Object.entries(m.kernel_transfer_bytes ?? {}).flatMap(([kernel, t]) => [
        ...(t.up > 0 ? [summarise(`social-gpu-up-${kernel}-${label}`, 'B', [t.up / steps])] : []),
        ...(t.down > 0 ? [summarise(`social-gpu-down-${kernel}-${label}`, 'B', [t.down / steps])] : []),
      ]),
    ];
    return out;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const POOL_RSS_NAMES = ['pool-rss-40k-rebuild1-t1', 'pool-rss-40k-rebuild1-t2', 'pool-rss-ratio-40k-rebuild1'];

/**
 * Memory cost of the worker pool (budget: RSS at --threads 2 within 1.3x of --threads 1): the
 * same `socsim run social-feed` of 40,000 agents for 48 steps with the follows folded into a new
 * CSR every step (so every step drops the old CSR, which the pool's workers must let go of too),
 * at 1 and at 2 threads, each in its own child process. `runs` pairs, alternating 1 and 2 threads
 * so a change in the machine's load falls on both; the ratio is taken within each pair.
 *
 * The figure is the child's VmHWM (/proc/self/status): the kernel's high-water mark of the
 * process's memory, worker threads included, reported by an exit hook that `--import` loads into
 * the child. Not ru_maxrss (`process.resourceUsage().maxRSS`): Linux carries it over from the
 * parent through fork and exec, so a child of a bench that already holds a 1M-agent graph
 * reported the parent's ~750 MB at both thread counts (elsewhere than Linux the hook falls back
 * to it). The manifest's peak_rss_bytes reads the same mark (runDirectory.ts peakResidentBytes):
 * RSS sampled between steps misses the peaks inside a step.
 * Not /usr/bin/time -v: GNU time is not on every machine (macOS's takes other flags).
 */
function poolRss(runs: number): BenchResult[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-bench-rss-'));
  const hook = 'data:text/javascript,' + encodeURIComponent(
    "import { readFileSync, writeFileSync } from 'node:fs';" +
      "const hwm = () => { try { return Number(/VmHWM:\\s*(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]); } catch { return process.resourceUsage().maxRSS; } };" +
      "process.on('exit', () => writeFileSync(process.env.SOCSIM_BENCH_MAXRSS_FILE, String(hwm() * 1024)));",
  );
  const rss: Record<1 | 2, number[]> = { 1: [], 2: [] };
  try {
    for (let r = 0; r < runs; r++) {
      for (const t of [1, 2] as const) {
        const out = path.join(dir, `run-t${t}-${r}`);
        const file = path.join(dir, `maxrss-t${t}-${r}`);
        const args = ['--import', hook, BIN, 'run', 'social-feed', '--agents', '40000', '--steps', '48', '--threads', String(t), '--set', 'platform.rebuildEvery=1', '--snapshot-every', '0', '--quiet', '--out', out];
        const p = spawnSync(process.execPath, args, { env: { ...process.env, SOCSIM_BENCH_MAXRSS_FILE: file }, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
        if (p.status !== 0) throw new Error(`pool-rss bench run (--threads ${t}) failed: ${p.stderr}`);
        const bytes = Number(fs.readFileSync(file, 'utf8'));
        if (!(bytes > 0)) throw new Error(`pool-rss bench run (--threads ${t}) reported no peak RSS`);
        rss[t].push(bytes);
        fs.rmSync(out, { recursive: true, force: true });
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return [
    summarise(POOL_RSS_NAMES[0], 'B', rss[1]),
    summarise(POOL_RSS_NAMES[1], 'B', rss[2]),
    summarise(POOL_RSS_NAMES[2], 'x', rss[2].map((v, i) => v / rss[1][i])),
  ];
}
