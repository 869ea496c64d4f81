/**
 * Transport failures are never served from the cache. A run whose server answers some archetypes
 * with HTTP 500 and lets others time out records those failures in its llm-cache.jsonl, so that
 * `--llm replay` reproduces its failure accounting byte for byte; but a later `--llm openai
 * --llm-cache` run against a healthy server asks the server again for exactly those prompts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ok, startFakeServer, type Script } from './fakeServer.ts';
import { archetypeOf, archetypeRows, childEnv, DECISION_STEPS, expectOk, expectReplayOf, fakeServerSuite, metrics, PERSONAS, personaReply, replayArgs, runArgs, socsim, type CliResult } from './cliHelpers.ts';
import type { FakeServer } from './fakeServer.ts';

let server: FakeServer;
const out = fakeServerSuite('socsim-llm-failure-cache-', (s) => (server = s));
const FLAKY = out('flaky');
const FLAGS = ['--seed', '7', '--llm-retries', '0', '--llm-timeout', '1'];

const isLeft = (persona: string) => PERSONAS[archetypeOf(persona)].includes('politically left,');
const isRight = (persona: string) => PERSONAS[archetypeOf(persona)].includes('politically right,');

/** "left" archetypes get HTTP 500, "right" ones an answer long after the 1 s timeout. */
const flaky: Script = (req) => {
  if (isLeft(req.persona)) return { kind: 'status', status: 500 };
  if (isRight(req.persona)) return ok(personaReply(req.persona), { delayMs: 5000 });
  return ok(personaReply(req.persona, `reply ${req.n}`));
};
const healthy: Script = (req) => ok(personaReply(req.persona, `healthy reply ${req.n}`));

describe('the LLM cache never serves a transport failure', () => {
  let recorded: CliResult;
  beforeAll(async () => {
    server.setScript(flaky);
    recorded = await socsim(runArgs(server.baseURL, FLAKY, FLAGS));
  });

  it('the flaky run has HTTP 500s and timeouts, and its llm-cache.jsonl records them', () => {
    expectOk(recorded);
    const m = metrics(FLAKY);
    for (const s of DECISION_STEPS) expect(m.llm_failures[s]).toBe(36);
    const kinds = new Set(archetypeRows(FLAKY).map((r) => r.failure));
    expect(kinds).toEqual(new Set(['none', 'http_5xx', 'timeout']));
    const entries = fs.readFileSync(path.join(FLAKY, 'llm-cache.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(entries.filter((e) => e.failure === 'http_5xx')).toHaveLength(3 * 18);
    expect(entries.filter((e) => e.failure === 'timeout')).toHaveLength(3 * 18);
  });

  it('--llm replay reproduces the failures byte for byte, offline', async () => {
    const dir = out('flaky-replay');
    const r = await socsim(replayArgs(path.join(FLAKY, 'llm-cache.jsonl'), dir, FLAGS), childEnv());
    expectOk(r);
    expectReplayOf(FLAKY, dir);
  });

  it('--llm openai --llm-cache against a healthy server asks again for the prompts that failed, and that run replays exactly', async () => {
    server.setScript(healthy);
    const dir = out('healed');
    const r = await socsim(runArgs(server.baseURL, dir, [...FLAGS, '--llm-cache', path.join(FLAKY, 'llm-cache.jsonl')]));
    expectOk(r);
    // Step 0 has the same prompts as the flaky run: its 54 good replies are cache hits, and the
    // 36 prompts that failed (and only those) went to the server, which answered them this time.
    const m = metrics(dir);
    expect(m.llm_calls[0]).toBe(90);
    expect(m.llm_cache_hits[0]).toBe(54);
    expect(m.llm_failures[0]).toBe(0);
    const first = server.requests.slice(0, 36).map((q) => q.persona);
    expect(new Set(first).size).toBe(36);
    for (const p of first) expect(isLeft(p) || isRight(p), p).toBe(true);
    for (const row of archetypeRows(dir).filter((x) => x.step === 0)) {
      expect(row.failure).toBe('none');
      expect(row.cache_hit).toBe(isLeft(PERSONAS[row.archetype]) || isRight(PERSONAS[row.archetype]) ? 0 : 1);
    }
    const again = out('healed-replay');
    expectOk(await socsim(replayArgs(path.join(dir, 'llm-cache.jsonl'), again, FLAGS), childEnv()));
    expectReplayOf(dir, again);
  });
});
