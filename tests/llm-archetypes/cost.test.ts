/**
 * The LLM cost before and during a run, through the real CLI against the local test server: the
 * plan's calls are the calls the run then makes (counted at the server), its prompt tokens are
 * what the server (counting with the same tokenizer) reports, and --llm-max-cost stops a run
 * before its spending would pass the limit, resumably, to the same bytes as a run never stopped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ok, replyObject, type FakeServer } from './fakeServer.ts';
import { expectOk, fakeServerSuite, listFiles, replayArgs, runArgs, socsim } from './cliHelpers.ts';
import { countTokens, loadTokenizer, promptTokens } from '../../llm-archetypes/tokens.ts';

let server: FakeServer;
const out = fakeServerSuite('socsim-llm-cost-', (s) => (server = s));
const manifestOf = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
/** The figure before `label` in a plan line, e.g. "360 calls". */
const planFigure = (stdout: string, re: RegExp) => Number(re.exec(stdout)![1].replace(/,/g, ''));

beforeAll(loadTokenizer);

describe('tokenizer', () => {
  it('counts o200k_base tokens of a fixed string, and a chat prompt with its framing', () => {
    expect(countTokens('Hello, world! socsim counts tokens.')).toBe(9);
    expect(countTokens('')).toBe(0);
    // 3 per message and 3 priming the reply, as OpenAI counts chat prompts.
    expect(promptTokens([{ content: 'Hello, world! socsim counts tokens.' }, { content: '' }])).toBe(9 + 3 + 3 + 3);
  });
});

describe('--plan', () => {
  it("gives the calls the run then makes, and the prompt tokens a server counting with o200k_base reports", async () => {
    // The server bills what the tokenizer counts, and 25 completion tokens per reply.
    server.setScript((req) => ok(replyObject(), { promptTokens: promptTokens(req.body.messages), completionTokens: 25 }));
    const dir = out('planned');
    const planned = await socsim(runArgs(server.baseURL, dir, ['--plan', '--llm-price-in', '0.15', '--llm-price-out', '0.6']));
    expectOk(planned);
    expect(server.requests).toHaveLength(0);
    expect(fs.existsSync(dir)).toBe(false);
    expect(planned.stdout).toContain('counted with o200k_base (gpt-tokenizer); for other models\' tokenizers an estimate');
    const calls = planFigure(planned.stdout, /rounds \(every 3 steps of 7\): ([\d,]+) calls/);
    const prompt = planFigure(planned.stdout, /prompt tokens: [\d,]+ per round[^,]*, ([\d,]+) in all/);
    const completionMax = planFigure(planned.stdout, /completion tokens: at most ([\d,]+)/);
    expect(completionMax).toBe(calls * 400);
    expect(planned.stdout).toMatch(/cost: at most \$\d+\.\d+/);

    const ran = await socsim(runArgs(server.baseURL, dir, ['--llm-price-in', '0.15', '--llm-price-out', '0.6']));
    expectOk(ran);
    expect(server.requests.length).toBe(calls);
    const spent = manifestOf(dir).llm.spent;
    expect(spent.calls).toBe(calls);
    expect(spent.completion_tokens).toBe(25 * calls);
    // The plan fills the feed figures with typical values: within 8% of the real prompts (0.2% at 50,000 agents).
    expect(Math.abs(spent.prompt_tokens - prompt) / prompt).toBeLessThan(0.08);
    expect(spent.cost_usd).toBeCloseTo((spent.prompt_tokens * 0.15 + spent.completion_tokens * 0.6) / 1e6, 6);
  });

  it('says so for a run without an LLM, and refuses --resume', async () => {
    const r = await socsim(['run', 'social-feed', '--agents', '2000', '--steps', '2', '--plan']);
    expectOk(r);
    expect(r.stdout).toContain('no LLM calls');
    const bad = await socsim(['run', '--resume', out('nothing'), '--plan']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--plan describes a new run');
  });
});

describe('--llm-max-cost', () => {
  const PRICES = ['--llm-price-in', '2', '--llm-price-out', '8'];
  let rec: string;
  let ref: string;
  let total: number;
  beforeAll(async () => {
    server.setScript((req) => ok(replyObject({}, `reply ${req.n}`), { promptTokens: 500 + (req.n % 13), completionTokens: 40 + (req.n % 7) }));
    rec = out('recorded');
    // Replies capped near what they use, so a round's bound is close to its cost.
    expectOk(await socsim(runArgs(server.baseURL, rec, ['--llm-max-tokens', '64'])));
    ref = out('ref');
    expectOk(await socsim(replayArgs(path.join(rec, 'llm-cache.jsonl'), ref, PRICES)));
    total = manifestOf(ref).llm.spent.cost_usd;
  });

  it('needs the prices, and an LLM', async () => {
    const heuristic = await socsim(['run', 'social-feed', '--agents', '2000', '--steps', '2', '--llm-max-cost', '1', '--out', out('heuristic')]);
    expect(heuristic.code).toBe(2);
    expect(heuristic.stderr).toContain('--llm-max-cost applies to LLM archetypes; add --llm openai');
    const r = await socsim(replayArgs(path.join(rec, 'llm-cache.jsonl'), out('noprice'), ['--llm-max-cost', '1']));
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('--llm-max-cost needs the prices');
  });

  it('stops before a round could pass the limit, and resumes to the bytes of a run never stopped', async () => {
    const limit = total * 0.6;
    const dir = out('stopped');
    const r = await socsim(replayArgs(path.join(rec, 'llm-cache.jsonl'), dir, [...PRICES, '--llm-max-cost', String(limit)]));
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.stdout).toMatch(/^stopped after 3 steps: the next LLM round \(\d+ calls, up to \$[\d.]+\) could take the \$[\d.]+ spent past --llm-max-cost \$[\d.]+; .* socsim run --resume .* --llm-max-cost USD$/m);
    const m = manifestOf(dir);
    expect(m.status).toBe('interrupted');
    expect(m.steps_completed).toBe(3);
    // Spent so far is within the limit; the uninterrupted run's total is past it.
    expect(m.llm.spent.cost_usd).toBeGreaterThan(0);
    expect(m.llm.spent.cost_usd).toBeLessThanOrEqual(limit);
    expect(total).toBeGreaterThan(limit);

    const resumed = await socsim(['run', '--resume', dir, '--llm-max-cost', String(total * 2), '--quiet']);
    expectOk(resumed);
    const files = listFiles(ref);
    expect(listFiles(dir)).toEqual(files);
    for (const f of files) if (f !== 'manifest.json') expect(fs.readFileSync(path.join(dir, f)).equals(fs.readFileSync(path.join(ref, f))), f).toBe(true);
    expect(manifestOf(dir).llm.spent).toEqual(manifestOf(ref).llm.spent);
  });
});

describe('socsim experiment --plan', () => {
  it('sums the runs: the calls its runs then make (at most, at the server: arms share replies), and counts the runs already complete', async () => {
    server.setScript(() => ok(replyObject()));
    const dir = out('experiment');
    const args = ['experiment', 'experiments/misinformation.ts', '--agents', '2000', '--steps', '4', '--seeds', '1', '--out', dir, '--quiet', '--llm', 'openai', '--llm-base-url', server.baseURL, '--llm-every', '3'];
    const planned = await socsim([...args, '--plan']);
    expectOk(planned);
    expect(server.requests).toHaveLength(0);
    const runs = Number(/^plan for (\d+) runs/.exec(planned.stdout)![1]);
    expect(runs).toBeGreaterThan(1);
    const calls = planFigure(planned.stdout, /in each of \d+ runs\): ([\d,]+) calls/);
    const ran = await socsim(args);
    expect(ran.code, ran.stderr).toBe(0);
    // Each run asks every planned call (its llm-cache.jsonl has a line for each); the arms of a
    // seed ask alike until their worlds part, and those are answered from the shared cache.
    const asked = fs.readdirSync(path.join(dir, 'runs')).reduce((t, r) => t + fs.readFileSync(path.join(dir, 'runs', r, 'llm-cache.jsonl'), 'utf8').trim().split('\n').length, 0);
    expect(asked).toBe(calls);
    expect(server.requests.length).toBeGreaterThan(0);
    expect(server.requests.length).toBeLessThanOrEqual(calls);
    const again = await socsim([...args, '--plan']);
    expect(again.stdout).toContain(`${runs} of ${runs} runs are complete in`);
  });
});
