/**
 * Through the real CLI: bad LLM configuration fails fast (exit 2, one line, before the population
 * is built or the run directory written), and the concurrency limit holds at a slow server.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ok, queue, refusedBaseURL, startFakeServer, type FakeServer } from './fakeServer.ts';
import { childEnv, DECISION_STEPS, expectOk, fakeServerSuite, metrics, personaReply, runArgs, SECRET, socsim, type CliResult } from './cliHelpers.ts';

let server: FakeServer;
const out = fakeServerSuite('socsim-llm-failfast-', (s) => (server = s));
const serverCalls = (n: number) => expect(server.requests.length).toBe(n);

describe('concurrency limit at a slow server', () => {
  it('--llm-concurrency 4: never more than 4 calls in flight, and 4 are reached', async () => {
    server.setScript((req) => ok(personaReply(req.persona), { delayMs: 50 }));
    const dir = out('concurrency');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-budget', '24', '--llm-concurrency', '4']));
    expectOk(r);
    const m = metrics(dir);
    expect(DECISION_STEPS.map((s) => m.llm_calls[s])).toEqual([24, 24, 24]);
    expect(DECISION_STEPS.map((s) => m.llm_archetypes_updated[s])).toEqual([24, 24, 24]);
    serverCalls(72);
    expect(server.maxInFlight).toBe(4);
    expect(server.inFlight).toBe(0);
  });

  it('the default concurrency (16) is used in parallel too', async () => {
    server.setScript((req) => ok(personaReply(req.persona), { delayMs: 100 }));
    const dir = out('concurrency16');
    const r = await socsim(runArgs(server.baseURL, dir, ['--llm-budget', '40', '--steps', '1']));
    expectOk(r);
    serverCalls(40);
    expect(server.maxInFlight).toBe(16);
  });
});

describe('fail fast on LLM configuration (exit 2, nothing built)', () => {
  const noRunDir = (dir: string) => expect(fs.existsSync(path.join(dir, 'manifest.json'))).toBe(false);
  const oneLine = (r: CliResult) => {
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  };

  it('--llm openai without --llm-base-url', async () => {
    const dir = out('ff-nourl');
    const r = await socsim(['run', 'social-feed', '--agents', '3000', '--steps', '7', '--llm', 'openai', '--quiet', '--out', dir]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--llm-base-url/);
    oneLine(r);
    noRunDir(dir);
  });

  it('--llm openai without an API key in the environment', async () => {
    const dir = out('ff-nokey');
    const r = await socsim(runArgs(server.baseURL, dir), childEnv());
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/SOCSIM_LLM_API_KEY/);
    expect(r.stderr).toMatch(/OPENAI_API_KEY/);
    oneLine(r);
    noRunDir(dir);
    expect(server.probes).toHaveLength(0);
    // An empty key counts as none.
    const e = await socsim(runArgs(server.baseURL, dir), childEnv({ SOCSIM_LLM_API_KEY: '', OPENAI_API_KEY: '' }));
    expect(e.code, e.stderr).toBe(2);
    expect(e.stderr).toMatch(/SOCSIM_LLM_API_KEY/);
  });

  it('an unreachable server: exit 2 within seconds, naming the URL, before the run directory is written', async () => {
    const url = await refusedBaseURL();
    const dir = out('ff-refused');
    const r = await socsim(runArgs(url, dir));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(url);
    expect(r.stderr).toMatch(/cannot reach the LLM server/);
    expect(r.stderr).not.toContain(SECRET);
    oneLine(r);
    expect(r.ms).toBeLessThan(10_000);
    noRunDir(dir);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('a server that rejects the key (401): exit 2 about the key, without printing it', async () => {
    const s = await startFakeServer(queue([]), { modelsStatus: 401 });
    try {
      const dir = out('ff-401');
      const r = await socsim(runArgs(s.baseURL, dir));
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/rejected the API key/);
      expect(r.stderr).not.toContain(SECRET);
      oneLine(r);
      noRunDir(dir);
      expect(s.requests).toHaveLength(0);
    } finally {
      await s.close();
    }
  });
});
