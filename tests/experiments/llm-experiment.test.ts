/**
 * LLM archetypes in an experiment: every run asks a live (local, chat-completions) server, and the
 * runs share one response cache, so a second arm that asks the same questions as the first (same
 * seed, common random numbers, an intervention only at the last step) is answered from it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../runner/cliHelpers.ts';
import { childEnv, fakeServerSuite, socsim } from '../llm-archetypes/cliHelpers.ts';
import { ok, replyObject, type FakeServer } from '../llm-archetypes/fakeServer.ts';

let server: FakeServer;
const out = fakeServerSuite('socsim-llm-exp-', (s) => (server = s));

describe('experiments with LLM archetypes', () => {
  it('runs share one response cache: the second arm is served from it', async () => {
    const api = path.join(ROOT, 'dist/index.js'); // the public entry, compiled, as a study imports it
    const file = out('llm.mts');
    fs.writeFileSync(
      file,
      `import { defineExperiment, metric } from ${JSON.stringify(api)};\n` +
        `export default defineExperiment({ name: 'llm', description: 'x', scenario: 'social-feed', seeds: 1,\n` +
        `  arms: { a: {}, b: { interventions: [{ kind: 'setRanker', step: 3, ranker: 'random' }] } },\n` +
        `  defaults: { agents: 3000, steps: 4 }, outcomes: { calls: metric('llm_calls').mean() } });\n`,
    );
    const dir = out('exp');
    const flags = ['--llm', 'openai', '--llm-base-url', server.baseURL, '--llm-every', '2'];
    // Without a key the experiment stops before any run (exit 2, one line).
    const nokey = await socsim(['experiment', file, '--out', out('nokey'), '--quiet', ...flags], childEnv());
    expect(nokey.code).toBe(2);
    expect(nokey.stderr).toMatch(/^socsim: --llm openai needs an API key/);
    expect(fs.existsSync(out('nokey'))).toBe(false);
    const r = await socsim(['experiment', file, '--out', dir, '--jobs', '1', '--quiet', ...flags], undefined, 150_000);
    expect(r.code, r.stderr).toBe(0);
    const shared = fs.readFileSync(path.join(dir, 'llm-cache.jsonl'), 'utf8').trim().split('\n');
    const hits = (run: string) => {
      const m = tableFromIPC(fs.readFileSync(path.join(dir, 'runs', run, 'metrics.arrow')));
      return (m.getChild('llm_cache_hits')!.toArray() as Int32Array).reduce((a, b) => a + b, 0);
    };
    // Rounds at steps 0 and 2, before the arms differ: b asks exactly what a asked.
    expect(hits('a-s1')).toBe(0);
    expect(hits('b-s1')).toBeGreaterThan(0);
    expect(server.requests.length).toBe(shared.length);
    expect(shared.every((l) => !JSON.parse(l).cache_hit)).toBe(true);
  });

  it('a base URL with a key in it reaches the runs, but no file and no command line', async () => {
    const SECRET = 'k3y-in-the-url';
    const api = path.join(ROOT, 'dist/index.js');
    const file = out('secret.mts');
    fs.writeFileSync(
      file,
      `import { defineExperiment, metric } from ${JSON.stringify(api)};\n` +
        `export default defineExperiment({ name: 'secret', description: 'x', scenario: 'social-feed', seeds: 1, arms: { a: {} },\n` +
        `  defaults: { agents: 2000, steps: 2 }, outcomes: { calls: metric('llm_calls').mean() } });\n`,
    );
    const dir = out('secret-exp');
    // While a run talks to the server, no process's command line may hold the key.
    const leaks: string[] = [];
    server.reset();
    server.setScript((req) => {
      for (const p of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
        try {
          const cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8');
          if (cmd.includes(SECRET)) leaks.push(cmd.replaceAll('\0', ' '));
        } catch {
          // gone meanwhile
        }
      }
      return ok(replyObject());
    });
    const r = await socsim(['experiment', file, '--out', dir, '--quiet', '--llm', 'openai', '--llm-base-url', `${server.baseURL}?key=${SECRET}`, '--llm-every', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests.length).toBeGreaterThan(0);
    expect(server.requests.every((q) => q.url.includes(`key=${SECRET}`))).toBe(true);
    // socsim's own argv is the test's; the runs it started must not carry the key.
    expect(leaks.filter((c) => !c.includes(' experiment '))).toEqual([]);
    const written = (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => /\.(json|jsonl|md)$/.test(f));
    expect(written).toContain('experiment.json');
    for (const f of written) expect(fs.readFileSync(path.join(dir, f), 'utf8'), f).not.toContain(SECRET);
  });
});
