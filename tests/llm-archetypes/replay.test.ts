/**
 * Exact replay through the real CLI: a run recorded against a fake server (with failures and
 * retried replies in it) is reproduced byte for byte by `--llm replay` with no server at all, with
 * 1 or 2 threads (archetypes.arrow all but its provider column, which says `replay`); a replay that
 * asks for an unrecorded prompt, or has no cache, fails with exit 2.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok, startFakeServer, type Script } from './fakeServer.ts';
import { archetypeOf, archetypeRows, childEnv, DECISION_STEPS, expectReplayOf, metrics, PERSONAS, personaReply, replayArgs, runArgs, SECRET, socsim, type CliResult } from './cliHelpers.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-llm-replay-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const out = (name: string) => path.join(tmp, name);
const REC = out('recorded');
const SEED = ['--seed', '5'];

/**
 * Replies that depend on the archetype and on arrival order (so a replay cannot just recompute
 * them): "left" archetypes get HTTP 400 (http_4xx, not retried), "right" ones a non-JSON reply the
 * first time a prompt is seen and a good one on the retry, the rest a good reply numbered by
 * arrival.
 */
const mixed: Script = (req) => {
  const k = archetypeOf(req.persona);
  if (PERSONAS[k].includes('politically left,')) return { kind: 'status', status: 400 };
  if (PERSONAS[k].includes('politically right,') && req.seen === 0) return ok('Let me think about this group first.');
  return ok(personaReply(req.persona, `reply number ${req.n}`), { promptTokens: 90 + (req.n % 7), completionTokens: 30 + (req.n % 5) });
};

function expectOk(r: CliResult) {
  expect(r.signal, r.stderr).toBeNull();
  expect(r.code, r.stderr).toBe(0);
}

const replay = (cache: string, dir: string, extra: string[] = []) => replayArgs(cache, dir, [...SEED, ...extra]);

describe('--llm replay reproduces a recorded run exactly, offline', () => {
  let recorded: CliResult;
  let serverCalls = 0;
  beforeAll(async () => {
    const server = await startFakeServer(mixed);
    try {
      recorded = await socsim(runArgs(server.baseURL, REC, SEED));
      serverCalls = server.requests.length;
    } finally {
      await server.close();
    }
  });

  it('the recorded run has replies, retried replies and failures in it', () => {
    expectOk(recorded);
    const rows = archetypeRows(REC);
    const kinds = new Set(rows.map((r) => r.failure));
    expect(kinds).toEqual(new Set(['none', 'http_4xx']));
    const m = metrics(REC);
    const calls = DECISION_STEPS.reduce((t, s) => t + m.llm_calls[s], 0);
    expect(calls).toBe(serverCalls);
    // 18 "left" archetypes fail per round, 18 "right" ones needed a second call.
    for (const s of DECISION_STEPS) {
      expect(m.llm_failures[s]).toBe(18);
      expect(m.llm_calls[s]).toBe(90 + 18);
      expect(m.llm_archetypes_updated[s]).toBe(72);
    }
    const cache = fs.readFileSync(path.join(REC, 'llm-cache.jsonl'), 'utf8');
    expect(cache.trim().split('\n')).toHaveLength(serverCalls);
    expect(cache).not.toContain(SECRET);
  });

  it('a replay with no server writes the same files byte for byte, archetypes.arrow all but its provider column (1 thread)', async () => {
    const dir = out('replay1');
    const r = await socsim(replay(path.join(REC, 'llm-cache.jsonl'), dir), childEnv());
    expectOk(r);
    expectReplayOf(REC, dir);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect(manifest.status).toBe('completed');
    expect(manifest.llm.provider).toBe('replay');
  });

  it('a replay with 2 threads is byte-identical too (prompts do not depend on the thread count)', async () => {
    const dir = out('replay2');
    const r = await socsim(replay(path.join(REC, 'llm-cache.jsonl'), dir, ['--threads', '2']), childEnv());
    expectOk(r);
    expectReplayOf(REC, dir);
  });

  it('a replay with another seed misses the cache: exit 2 with a clear message', async () => {
    const r = await socsim(replay(path.join(REC, 'llm-cache.jsonl'), out('replay-seed'), ['--seed', '6']), childEnv());
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--llm replay: no recorded response for this prompt/);
    expect(r.stderr).toMatch(/same scenario, seed/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a replay whose parameters differ (--llm-every) misses the cache too', async () => {
    const r = await socsim(replay(path.join(REC, 'llm-cache.jsonl'), out('replay-every'), ['--llm-every', '2']), childEnv());
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/no recorded response/);
  });

  it('a missing or damaged cache file, or none given, is exit 2 before anything is built', async () => {
    const dir = out('replay-missing');
    const missing = await socsim(replay(path.join(tmp, 'no-such-cache.jsonl'), dir), childEnv());
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toMatch(/cannot read LLM cache .*no-such-cache\.jsonl/);
    expect(fs.existsSync(path.join(dir, 'manifest.json'))).toBe(false);
    const damaged = path.join(tmp, 'damaged.jsonl');
    const lines = fs.readFileSync(path.join(REC, 'llm-cache.jsonl'), 'utf8').split('\n');
    lines[2] = lines[2].slice(0, 20);
    fs.writeFileSync(damaged, lines.join('\n'));
    const bad = await socsim(replay(damaged, dir), childEnv());
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toMatch(/damaged\.jsonl line 3: not a cache entry/);
    expect(fs.existsSync(path.join(dir, 'manifest.json'))).toBe(false);
    const none = await socsim(replay('x', dir).filter((a, i, all) => a !== '--llm-cache' && all[i - 1] !== '--llm-cache'), childEnv());
    expect(none.code, none.stderr).toBe(2);
    expect(none.stderr).toMatch(/--llm replay needs --llm-cache FILE/);
    expect(fs.existsSync(path.join(dir, 'manifest.json'))).toBe(false);
  });

  it('--llm openai with --llm-cache of a recorded run calls the server only for the calls that failed, and that run replays exactly too', async () => {
    const server = await startFakeServer(mixed);
    const dir = out('reuse');
    let r: CliResult;
    let asked: string[] = [];
    try {
      r = await socsim(runArgs(server.baseURL, dir, [...SEED, '--llm-cache', path.join(REC, 'llm-cache.jsonl')]));
      expect(server.probes).toHaveLength(1);
      asked = server.requests.map((q) => q.persona);
    } finally {
      await server.close();
    }
    expectOk(r);
    // The HTTP 400s were never cached: those prompts (18 "left" archetypes a round) went to the
    // server again, and failed again; every reply was served from the cache.
    expect(asked).toHaveLength(3 * 18);
    for (const persona of asked) expect(persona).toContain('politically left,');
    const m = metrics(dir);
    for (const s of DECISION_STEPS) {
      expect(m.llm_calls[s]).toBe(108);
      expect(m.llm_cache_hits[s]).toBe(108 - 18);
      expect(m.llm_failures[s]).toBe(18);
    }
    for (const row of archetypeRows(dir)) expect(row.cache_hit).toBe(PERSONAS[row.archetype].includes('politically left,') ? 0 : 1);
    // Same simulation as the recorded run: the served replies are the recorded ones.
    for (const f of ['posts.arrow', 'graph-end.arrow', 'agents/step-000007.arrow']) {
      expect(fs.readFileSync(path.join(dir, f)).equals(fs.readFileSync(path.join(REC, f))), f).toBe(true);
    }
    // Replaying this run gives its own files back, cache hits included.
    const again = out('reuse-replay');
    const p = await socsim(replay(path.join(dir, 'llm-cache.jsonl'), again), childEnv());
    expectOk(p);
    expectReplayOf(dir, again);
  });
});
