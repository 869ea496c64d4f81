/**
 * End to end through the real CLI against a fake OpenAI-compatible server: every failure mode a
 * server can show leaves the run completing (exit 0), counted in metrics.arrow and named in
 * archetypes.arrow; archetypes whose calls all fail keep their previous parameters; the key never
 * reaches a file or the console; bad configuration fails fast with exit 2 before anything is built;
 * the concurrency limit holds.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPLY_PARAMS } from '../../llm-archetypes/reply.ts';
import { ok, queue, replyObject, startFakeServer, type FakeServer } from './fakeServer.ts';
import {
  archetypeOf,
  archetypeRows,
  childEnv,
  DECISION_STEPS,
  expectOk,
  f32,
  fakeServerSuite,
  heuristicParams,
  listFiles,
  metrics,
  personaReply,
  personaValues,
  runArgs,
  SECRET,
  socsim,
  type ArchetypeRow,
} from './cliHelpers.ts';

let server: FakeServer;
const out = fakeServerSuite('socsim-llm-run-', (s) => (server = s));


const stepsOf = (rows: ArchetypeRow[], step: number) => rows.filter((r) => r.step === step);

/**
 * The checks every LLM run must pass: llm_calls only on decision steps, as many per step as the
 * archetypes asked times `callsPerArchetype`; one archetypes.arrow row per archetype asked;
 * failures, updates and failure kinds as `o` says (`failure`: the kind, or '' for none; `used`:
 * whether the replies were taken; `transport`: no reply came at all, so no tokens).
 */
function checkRun(dir: string, o: { failure: string; callsPerArchetype?: number; used: boolean; transport?: boolean; model?: string }) {
  const m = metrics(dir);
  const rows = archetypeRows(dir);
  // Row s holds the metrics of the step archetypes.arrow counts as s (from 0): metrics step s + 1.
  expect(m.step).toEqual([1, 2, 3, 4, 5, 6, 7]);
  expect(new Set(rows.map((r) => r.step))).toEqual(new Set(DECISION_STEPS));
  for (let s = 0; s < 7; s++) {
    const here = stepsOf(rows, s);
    if (!DECISION_STEPS.includes(s)) {
      for (const c of ['llm_calls', 'llm_failures', 'llm_tokens', 'llm_cache_hits', 'llm_archetypes_updated']) expect(m[c][s], `${c} at step ${s}`).toBe(0);
      continue;
    }
    expect(here.length, `rows at step ${s}`).toBeGreaterThan(0);
    expect(m.llm_calls[s], `llm_calls at step ${s}`).toBe(here.length * (o.callsPerArchetype ?? 1));
    expect(m.llm_failures[s], `llm_failures at step ${s}`).toBe(o.used ? 0 : here.length);
    expect(m.llm_archetypes_updated[s], `updated at step ${s}`).toBe(o.used ? here.length : 0);
    expect(m.llm_cache_hits[s]).toBe(0);
    // Token accounting: the rows' tokens (every attempt) add up to the step's llm_tokens.
    expect(here.reduce((t, r) => t + r.prompt_tokens + r.completion_tokens, 0), `tokens at step ${s}`).toBe(m.llm_tokens[s]);
    if (o.transport) expect(m.llm_tokens[s]).toBe(0);
    else expect(m.llm_tokens[s]).toBeGreaterThan(0);
    // Archetype ids are distinct and sorted within a round.
    const ids = here.map((r) => r.archetype);
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
  }
  for (const r of rows) {
    expect(r.failure, `archetype ${r.archetype} at step ${r.step}`).toBe(o.failure === '' ? 'none' : o.failure);
    expect(r.valid).toBe(o.used ? 1 : 0);
    expect(r.samples).toBe(1);
    expect(r.members).toBeGreaterThan(0);
    expect(r.provider).toBe('openai');
    expect(r.model).toBe(o.model ?? 'gpt-4o-mini');
    expect(r.prompt_hash).toMatch(/^[0-9a-f]{64}$/);
    if (!o.used) expect(r.reason).toBe('');
    if (o.transport) {
      expect(r.prompt_tokens).toBe(0);
      expect(r.completion_tokens).toBe(0);
    }
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  expect(manifest.status).toBe('completed');
  expect(manifest.files.other).toContain('archetypes.arrow');
  expect(manifest.files.other).toContain('llm-cache.jsonl');
  return { m, rows };
}

/** When every call fails, each archetype keeps the heuristic parameters it started with. */
function expectHeuristicKept(rows: ArchetypeRow[]) {
  for (const r of rows) {
    const h = heuristicParams(r.archetype);
    for (const p of REPLY_PARAMS) expect(r.p[p], `p_${p} of archetype ${r.archetype} at step ${r.step}`).toBe(h[p]);
  }
}

const serverCalls = (n: number) => expect(server.requests.length).toBe(n);

describe('socsim run social-feed --llm openai against a fake server', () => {
  it('normal replies: every archetype is asked on steps 0, 3, 6 and takes its reply; the key reaches the server but no file or output', async () => {
    let n = 0;
    server.setScript((req) => ok(personaReply(req.persona, `reply number ${n++}`), { promptTokens: 100, completionTokens: 20 }));
    const dir = out('normal');
    const r = await socsim(runArgs(server.baseURL, dir));
    expectOk(r);
    const { m, rows } = checkRun(dir, { failure: '', used: true });
    // Every non-empty archetype (all 90 at 3000 agents) is asked each round: budget 256.
    for (const s of DECISION_STEPS) expect(stepsOf(rows, s).map((x) => x.archetype)).toEqual(Array.from({ length: 90 }, (_, k) => k));
    serverCalls(rows.length);
    for (const s of DECISION_STEPS) expect(m.llm_tokens[s]).toBe(stepsOf(rows, s).length * 120);
    // Each row carries its own archetype's reply (not another's): values, reason and example.
    const replied = new Map(server.requests.map((q) => [q.persona, q]));
    expect(replied.size).toBe(90);
    for (const row of rows) {
      const v = personaValues(row.archetype);
      for (const p of REPLY_PARAMS) expect(row.p[p], `p_${p} of archetype ${row.archetype}`).toBe(f32(v[p]));
      expect(row.example_post).toBe(`post by archetype ${row.archetype}`);
      expect(row.reason).toMatch(/^reply number \d+$/);
      expect(row.prompt_tokens).toBe(100);
      expect(row.completion_tokens).toBe(20);
      expect(row.latency_ms).toBeGreaterThanOrEqual(0);
    }
    // The request each row came from was for that archetype: its reason number is the request's.
    for (const row of rows) {
      const q = server.requests[Number(row.reason.split(' ').pop())];
      expect(archetypeOf(q.persona)).toBe(row.archetype);
    }
    // Prompts carry the observation summary and the archetype's current parameters (the reply of
    // the previous round from step 3 on).
    const later = server.requests.filter((q) => q.persona === server.requests[0].persona);
    expect(later).toHaveLength(3);
    expect(later[0].prompt).toMatch(/Members: \d+ users; \d+ were online/);
    expect(later[0].prompt).toContain('News: A news story with stance 0.8');
    const k0 = archetypeOf(later[0].persona);
    expect(later[1].prompt).toContain(`like=${Math.round(personaValues(k0).like * 1000) / 1000}`);
    expect(later[1].prompt).toContain(`eps=${Math.round(personaValues(k0).eps * 1000) / 1000}`);
    for (const q of server.requests) {
      expect(q.body.model).toBe('gpt-4o-mini');
      expect(q.body.messages[0].role).toBe('system');
      expect(q.body.temperature).toBe(0.7);
      expect(q.body.max_tokens).toBe(400);
    }
    // The key travelled to the server on the probe and on every call ...
    expect(server.probes.map((p) => p.authorization)).toEqual([`Bearer ${SECRET}`]);
    for (const q of server.requests) expect(q.authorization).toBe(`Bearer ${SECRET}`);
    // ... and nowhere else: no file of the run directory (as bytes), not stdout, not stderr.
    const files = listFiles(dir);
    expect(files).toEqual(expect.arrayContaining(['manifest.json', 'metrics.arrow', 'archetypes.arrow', 'llm-cache.jsonl', 'agents/step-000000.arrow', 'agents/step-000007.arrow']));
    const needle = Buffer.from(SECRET);
    const partial = Buffer.from(SECRET.slice(3, 15));
    for (const f of files) {
      const bytes = fs.readFileSync(path.join(dir, f));
      expect(bytes.includes(needle), f).toBe(false);
      expect(bytes.includes(partial), f).toBe(false);
    }
    expect(r.stdout).not.toContain(SECRET);
    expect(r.stderr).not.toContain(SECRET);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect(manifest.llm).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', base_url: server.baseURL, every: 3 });
    // The cache file holds one entry per call, with the reply text.
    const cache = fs.readFileSync(path.join(dir, 'llm-cache.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(cache).toHaveLength(rows.length);
    expect(new Set(cache.map((e) => e.key))).toEqual(new Set(rows.map((x) => x.prompt_hash)));
  });

  it('HTTP 500 on every call: retried, counted as http_5xx, archetypes keep their parameters', async () => {
    server.setScript(() => ({ kind: 'status', status: 500 }));
    const dir = out('e500');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-max-failures', '1', '--llm-budget', '8', '--llm-retries', '1']));
    expectOk(r);
    const { rows } = checkRun(dir, { failure: 'http_5xx', used: false, transport: true });
    for (const s of DECISION_STEPS) expect(stepsOf(rows, s)).toHaveLength(8);
    // Each call was tried twice (one retry) at the server.
    serverCalls(rows.length * 2);
    expectHeuristicKept(rows);
  });

  it('HTTP 401 on every call of the first round (the probe accepted): stops with exit 2, naming the key', async () => {
    server.setScript(() => ({ kind: 'status', status: 401 }));
    const dir = out('e401');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-budget', '8']));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^socsim: the LLM server refused all 8 calls of the first archetype round with HTTP 401\/403 \(not authorised\); check the API key/)]);
    expect(r.stderr).not.toContain(SECRET);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')).status).toBe('failed');
  });

  it('most decisions failed: the run\'s files are kept, but it exits 1 with one line, unless --llm-max-failures allows it', async () => {
    server.setScript(() => ({ kind: 'status', status: 500 }));
    const dir = out('e500-share');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-budget', '8', '--llm-retries', '0']));
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^socsim: 24 of 24 archetype decisions failed \(100%, more than --llm-max-failures 0.5\); .*--llm-max-failures 1 to accept/)]);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')).status).toBe('completed');
  });

  it('HTTP 429 with Retry-After: 1 once per prompt: the wait is honoured and the retry succeeds', async () => {
    // Round 0's six first attempts (requests 0-5: budget 6, all in flight at once) are refused.
    server.setScript((req) => (req.n < 6 ? { kind: 'status', status: 429, headers: { 'retry-after': '1' } } : ok(personaReply(req.persona))));
    const dir = out('e429-once');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-budget', '6']));
    expectOk(r);
    const { rows } = checkRun(dir, { failure: '', used: true });
    serverCalls(rows.length + 6);
    // Each refused prompt was asked again about a second later (Retry-After, not the 500 ms backoff).
    const retried = server.requests.filter((q) => q.seen === 1);
    expect(retried).toHaveLength(6);
    for (const q of retried) {
      const first = server.requests.find((x) => x.seen === 0 && JSON.stringify(x.body) === JSON.stringify(q.body))!;
      expect(first.n).toBeLessThan(6);
      expect(q.at - first.at).toBeGreaterThanOrEqual(950);
    }
    for (const row of rows) expect(row.p.like).toBe(f32(personaValues(row.archetype).like));
  });

  it('HTTP 429 on every call: retries exhausted, counted as http_429', async () => {
    server.setScript(() => ({ kind: 'status', status: 429, headers: { 'retry-after': '0' } }));
    const dir = out('e429');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-max-failures', '1', '--llm-budget', '8']));
    expectOk(r);
    const { rows } = checkRun(dir, { failure: 'http_429', used: false, transport: true });
    serverCalls(rows.length * 3);
    expectHeuristicKept(rows);
  });

  it('replies slower than --llm-timeout: counted as timeout', async () => {
    server.setScript((req) => ok(personaReply(req.persona), { delayMs: 2000 }));
    const dir = out('timeout');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-max-failures', '1', '--llm-budget', '8', '--llm-timeout', '0.2', '--llm-retries', '0']));
    expectOk(r);
    const { rows } = checkRun(dir, { failure: 'timeout', used: false, transport: true });
    serverCalls(rows.length);
    expectHeuristicKept(rows);
  });

  it('content JSON that breaks the schema: re-asked (retries), then counted as schema', async () => {
    server.setScript(() => ok({ probabilities: { post: 0.1 }, opinion: { eps: 0.3 }, reason: 'partial' }));
    const dir = out('schema');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-max-failures', '1', '--llm-budget', '8']), childEnv({ OPENAI_API_KEY: SECRET }));
    expectOk(r);
    // Default --llm-retries 2: three attempts per archetype, each a call.
    const { rows } = checkRun(dir, { failure: 'schema', used: false, callsPerArchetype: 3 });
    serverCalls(rows.length * 3);
    expectHeuristicKept(rows);
    // OPENAI_API_KEY works as the key when SOCSIM_LLM_API_KEY is not set.
    for (const q of server.requests) expect(q.authorization).toBe(`Bearer ${SECRET}`);
  });

  it('content that is not JSON: re-asked, then counted as bad_json', async () => {
    server.setScript(() => ok('They would probably like it more than before.'));
    const dir = out('badjson');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-max-failures', '1', '--llm-budget', '8', '--llm-retries', '1']));
    expectOk(r);
    const { rows } = checkRun(dir, { failure: 'bad_json', used: false, callsPerArchetype: 2 });
    serverCalls(rows.length * 2);
    expectHeuristicKept(rows);
  });

  it('a bad reply followed by a good one on the retry: the good one is used, no failure counted', async () => {
    server.setScript((req) => (req.seen === 0 ? ok('```json\n{"probabilities": oops}\n```') : ok(personaReply(req.persona))));
    const dir = out('retry-ok');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-budget', '8']));
    expectOk(r);
    const { rows } = checkRun(dir, { failure: '', used: true, callsPerArchetype: 2 });
    serverCalls(rows.length * 2);
    for (const row of rows) expect(row.p.eps).toBe(f32(personaValues(row.archetype).eps));
  });

  it('values out of range: clamped, used and flagged out_of_range', async () => {
    server.setScript(() => ok(replyObject({ like: 3, post: -0.5, eps: -1, mu: 0.2, backfire: 4, follow: 0.3 })));
    const dir = out('range');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-budget', '8', '--llm-model', 'local-llama']));
    expectOk(r);
    const { rows } = checkRun(dir, { failure: 'out_of_range', used: true, model: 'local-llama' });
    serverCalls(rows.length);
    for (const q of server.requests) expect(q.body.model).toBe('local-llama');
    for (const row of rows) {
      expect(row.p.like).toBe(1);
      expect(row.p.post).toBe(0);
      expect(row.p.eps).toBe(0);
      expect(row.p.backfire).toBe(1);
      expect(row.p.mu).toBe(f32(0.2));
      expect(row.p.follow).toBe(f32(0.3));
      expect(row.valid).toBe(1);
    }
  });

  it('--llm-samples 2: the valid replies of an archetype are averaged; a failed sample is counted but does not block the update', async () => {
    // Sample m is sent as the request's seed. Even archetypes: like 0.1 and 0.3 (mean 0.2); odd
    // archetypes: sample 1 breaks the schema, so only sample 0 (like 0.1) counts.
    server.setScript((req) => {
      const k = archetypeOf(req.persona);
      if (req.body.seed === 1 && k % 2 === 1) return ok({ probabilities: {}, reason: 'broken' });
      return ok(replyObject({ like: req.body.seed === 0 ? 0.1 : 0.3, eps: req.body.seed === 0 ? 0.4 : 0.8 }));
    });
    const dir = out('samples');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-budget', '12', '--llm-samples', '2', '--llm-retries', '0']));
    expectOk(r);
    const m = metrics(dir);
    const rows = archetypeRows(dir);
    for (const s of DECISION_STEPS) {
      const here = stepsOf(rows, s);
      // The budget counts calls: 12 calls = 6 archetypes x 2 samples.
      expect(here).toHaveLength(6);
      expect(m.llm_calls[s]).toBe(12);
      expect(m.llm_archetypes_updated[s]).toBe(6);
      expect(m.llm_failures[s]).toBe(here.filter((x) => x.archetype % 2 === 1).length);
    }
    serverCalls(36);
    expect(new Set(server.requests.map((q) => q.body.seed))).toEqual(new Set([0, 1]));
    for (const row of rows) {
      expect(row.samples).toBe(2);
      if (row.archetype % 2 === 0) {
        expect(row.valid).toBe(2);
        expect(row.failure).toBe('none');
        expect(row.p.like).toBe(f32((0.1 + 0.3) / 2));
        expect(row.p.eps).toBe(f32((0.4 + 0.8) / 2));
      } else {
        expect(row.valid).toBe(1);
        expect(row.failure).toBe('schema');
        expect(row.p.like).toBe(f32(0.1));
        expect(row.p.eps).toBe(f32(0.4));
      }
    }
    expect(rows.some((x) => x.archetype % 2 === 0) && rows.some((x) => x.archetype % 2 === 1)).toBe(true);
  });

  it('a broken HTTP body (invalid JSON): counted as bad_body', async () => {
    server.setScript(() => ({ kind: 'broken' }));
    const dir = out('broken');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-max-failures', '1', '--llm-budget', '8', '--llm-retries', '0']));
    expectOk(r);
    const { rows } = checkRun(dir, { failure: 'bad_body', used: false, transport: true });
    serverCalls(rows.length);
    expectHeuristicKept(rows);
  });

  it('a server that stops listening after the probe: counted as connection', async () => {
    const gone = await startFakeServer(queue([]), { closeAfterProbe: true });
    try {
      const dir = out('refused');
      const r = await socsim(runArgs(gone.baseURL, dir, ['--llm-max-failures', '1', '--llm-budget', '8', '--llm-retries', '0']));
      expectOk(r);
      expect(gone.probes).toHaveLength(1);
      expect(gone.requests).toHaveLength(0);
      const { rows } = checkRun(dir, { failure: 'connection', used: false, transport: true });
      expectHeuristicKept(rows);
    } finally {
      await gone.close();
    }
  });

  it('when a later round fails, archetypes keep the parameters of their last good reply', async () => {
    // Round 0 (the first 10 calls: budget 10, no retries) succeeds; every later call fails.
    server.setScript((req) => (req.n < 10 ? ok(personaReply(req.persona)) : { kind: 'status', status: 503 }));
    const dir = out('keep');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-max-failures', '1', '--llm-budget', '10', '--llm-retries', '0']));
    expectOk(r);
    const m = metrics(dir);
    const rows = archetypeRows(dir);
    expect(m.llm_calls.filter((_, s) => DECISION_STEPS.includes(s))).toEqual([10, 10, 10]);
    expect(m.llm_failures.filter((_, s) => DECISION_STEPS.includes(s))).toEqual([0, 10, 10]);
    expect(m.llm_archetypes_updated.filter((_, s) => DECISION_STEPS.includes(s))).toEqual([10, 0, 0]);
    const good = new Set(stepsOf(rows, 0).map((x) => x.archetype));
    for (const row of stepsOf(rows, 0)) expect(row.failure).toBe('none');
    let kept = 0;
    for (const row of rows.filter((x) => x.step > 0)) {
      expect(row.failure).toBe('http_5xx');
      const expected = good.has(row.archetype) ? Object.fromEntries(REPLY_PARAMS.map((p) => [p, f32(personaValues(row.archetype)[p])])) : heuristicParams(row.archetype);
      if (good.has(row.archetype)) kept++;
      for (const p of REPLY_PARAMS) expect(row.p[p], `p_${p} of archetype ${row.archetype} at step ${row.step}`).toBe(expected[p]);
    }
    // The keyed sample asks different archetypes each round, so some rows test each branch.
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(20);
  });
});

