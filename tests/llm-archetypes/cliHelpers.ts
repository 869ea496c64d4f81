/**
 * Helpers for the end-to-end LLM tests: spawn the real CLI asynchronously (the fake server lives in
 * the test process, so the test's event loop must keep running), read Arrow files, and know which
 * archetype a prompt belongs to and what the heuristic policy gives it.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { fileURLToPath } from 'node:url';
import { tableFromIPC } from '@uwdata/flechette';
import { heuristicBehaviour, NPARAMS, P, type BehaviourParam } from '../../platform/behaviour.ts';
import { ACTIVITY_TIERS, populationConfig } from '../../population/synthesize.ts';
import { archetypePersonas } from '../../llm-archetypes/personas.ts';
import { REPLY_PARAMS } from '../../llm-archetypes/reply.ts';
import { queue, replyObject, startFakeServer, type FakeServer } from './fakeServer.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = path.join(ROOT, 'bin/socsim.mjs');
export const SECRET = 'sk-test-DO-NOT-LEAK-123';

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The test process's environment without any API key or proxy, plus `extra`. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ['OPENAI_API_KEY', 'SOCSIM_LLM_API_KEY', 'HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'all_proxy', 'SOCSIM_DEBUG']) delete env[k];
  return { ...env, ...extra };
}

/** Runs `socsim ARGS` without blocking the event loop; kills it after `timeoutMs`. */
export function socsim(args: string[], env: NodeJS.ProcessEnv = childEnv({ SOCSIM_LLM_API_KEY: SECRET }), timeoutMs = 600_000): Promise<CliResult> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 });
    });
  });
}

/** The common arguments of the LLM runs: decisions at steps 0, 3 and 6. */
export function runArgs(baseURL: string, out: string, extra: string[] = []): string[] {
  return ['run', 'social-feed', '--agents', '3000', '--steps', '7', '--llm', 'openai', '--llm-base-url', baseURL, '--llm-every', '3', '--quiet', '--out', out, ...extra];
}

/** The arguments of a replay of a run made with `runArgs`: no server, no model, only the cache. */
export function replayArgs(cache: string, out: string, extra: string[] = []): string[] {
  return ['run', 'social-feed', '--agents', '3000', '--steps', '7', '--llm', 'replay', '--llm-cache', cache, '--llm-every', '3', '--quiet', '--out', out, ...extra];
}

export const DECISION_STEPS = [0, 3, 6];

export type Columns = Record<string, unknown[]>;

/** Reads an Arrow file into plain arrays per column (dictionary columns as strings). */
export function readArrow(file: string): { rows: number; cols: Columns } {
  const t = tableFromIPC(fs.readFileSync(file));
  const cols: Columns = {};
  for (const f of t.schema.fields) cols[f.name] = Array.from(t.getChild(f.name)!.toArray() as ArrayLike<unknown>);
  return { rows: t.numRows, cols };
}

export interface ArchetypeRow {
  step: number;
  archetype: number;
  members: number;
  samples: number;
  valid: number;
  p: Record<string, number>;
  reason: string;
  example_post: string;
  provider: string;
  model: string;
  latency_ms: number;
  prompt_tokens: number;
  completion_tokens: number;
  cache_hit: number;
  failure: string;
  prompt_hash: string;
}

export function archetypeRows(dir: string): ArchetypeRow[] {
  const { rows, cols } = readArrow(path.join(dir, 'archetypes.arrow'));
  const out: ArchetypeRow[] = [];
  for (let i = 0; i < rows; i++) {
    out.push({
      step: cols.step[i] as number,
      archetype: cols.archetype[i] as number,
      members: cols.members[i] as number,
      samples: cols.samples[i] as number,
      valid: cols.valid[i] as number,
      p: Object.fromEntries(REPLY_PARAMS.map((p) => [p, cols[`p_${p}`][i] as number])),
      reason: cols.reason[i] as string,
      example_post: cols.example_post[i] as string,
      provider: cols.provider[i] as string,
      model: cols.model[i] as string,
      latency_ms: cols.latency_ms[i] as number,
      prompt_tokens: cols.prompt_tokens[i] as number,
      completion_tokens: cols.completion_tokens[i] as number,
      cache_hit: cols.cache_hit[i] as number,
      failure: cols.failure[i] as string,
      prompt_hash: cols.prompt_hash[i] as string,
    });
  }
  return out;
}

/** Per-step metrics as arrays indexed by step. */
export function metrics(dir: string): Record<string, number[]> {
  return readArrow(path.join(dir, 'metrics.arrow')).cols as Record<string, number[]>;
}

const pop = populationConfig.parse({});
/** Persona text of each archetype, in archetype order (as the social-feed scenario builds them). */
export const PERSONAS = archetypePersonas({
  length: 0,
  schema: { age_band: { type: 'u8', dictionary: pop.ageBand.labels }, leaning: { type: 'u8', dictionary: pop.leaning.labels }, activity_tier: { type: 'u8', dictionary: ACTIVITY_TIERS } },
  columns: { archetype: new Uint16Array(0) },
});
const byPersona = new Map(PERSONAS.map((p, k) => [p, k]));

/** The archetype index of a persona seen in a prompt (throws for an unknown persona). */
export function archetypeOf(persona: string): number {
  const k = byPersona.get(persona);
  if (k === undefined) throw new Error(`unknown persona in prompt: ${persona}`);
  return k;
}

/** The heuristic policy's parameters per archetype (what an archetype has before any LLM reply). */
const L = pop.leaning.labels.length;
const heuristic = heuristicBehaviour({
  ageBands: pop.ageBand.labels.length,
  leaningCentres: Array.from({ length: L }, (_, i) => (L === 1 ? 0 : -1 + (2 * i) / (L - 1))),
  tiers: ACTIVITY_TIERS.length,
});
export function heuristicParams(k: number): Record<string, number> {
  return Object.fromEntries(REPLY_PARAMS.map((p) => [p, heuristic.values[k * NPARAMS + P[p as BehaviourParam]]]));
}

/** Distinct, in-range reply values for archetype k (so a row can be traced to its reply). */
export function personaValues(k: number): Record<(typeof REPLY_PARAMS)[number], number> {
  return {
    post: 0.05 + (k % 7) * 0.01,
    like: 0.01 + (k % 10) * 0.005,
    dislike: 0.002 * (1 + (k % 4)),
    repost: 0.003 + (k % 3) * 0.001,
    quote: 0.001,
    comment: 0.004 + (k % 5) * 0.001,
    report: 0.0005,
    mute: 0.001,
    unfollow: 0.002,
    follow: 0.02 + (k % 6) * 0.01,
    eps: 0.2 + (k % 9) * 0.05,
    mu: 0.05 + (k % 4) * 0.01,
    backfire: 0.01 * (k % 3),
  };
}

/** A valid reply for the archetype of `persona`, with its distinct values. */
export function personaReply(persona: string, reason?: string): string {
  const k = archetypeOf(persona);
  return JSON.stringify(replyObject(personaValues(k), reason ?? `archetype ${k} reacts`, `post by archetype ${k}`));
}

/** Every file under `dir`, relative, sorted. */
export function listFiles(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort();
}

export const f32 = Math.fround;

/**
 * `replay` is an exact replay of the run in `recorded`: the same files, each byte for byte the
 * same, except the manifest (timings, provider) and archetypes.arrow, which records the provider
 * that served the run (`replay`); every other column of it is the same.
 */
export function expectReplayOf(recorded: string, replay: string): void {
  const files = listFiles(recorded);
  expect(listFiles(replay)).toEqual(files);
  expect(files).toEqual(expect.arrayContaining(['archetypes.arrow', 'metrics.arrow', 'posts.arrow', 'graph.arrow', 'llm-cache.jsonl', 'agents/step-000007.arrow']));
  for (const f of files) {
    if (f === 'manifest.json' || f === 'archetypes.arrow') continue;
    expect(fs.readFileSync(path.join(recorded, f)).equals(fs.readFileSync(path.join(replay, f))), f).toBe(true);
  }
  const a = readArrow(path.join(recorded, 'archetypes.arrow'));
  const b = readArrow(path.join(replay, 'archetypes.arrow'));
  expect(b.rows).toBe(a.rows);
  expect(Object.keys(b.cols)).toEqual(Object.keys(a.cols));
  for (const c of Object.keys(a.cols)) if (c !== 'provider') expect(b.cols[c], c).toEqual(a.cols[c]);
  expect(new Set(b.cols.provider)).toEqual(new Set(a.rows ? ['replay'] : []));
  expect(JSON.parse(fs.readFileSync(path.join(replay, 'manifest.json'), 'utf8')).llm.provider).toBe('replay');
}

/** The CLI run exited 0, by itself, with nothing on stderr. */
export function expectOk(r: CliResult): void {
  expect(r.signal, r.stderr).toBeNull();
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
}

/**
 * Per-file fixture: a fake server started once and reset before each test (handed to `use`), and
 * a temporary folder for run directories, removed at the end. Returns the folder's path maker.
 */
export function fakeServerSuite(prefix: string, use: (server: FakeServer) => void): (name: string) => string {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  let server: FakeServer | undefined;
  beforeAll(async () => {
    server = await startFakeServer(queue([]));
    use(server);
  });
  afterAll(async () => {
    await server?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  beforeEach(() => server!.reset());
  return (name: string) => path.join(tmp, name);
}
