/**
 * `--llm replay --llm-cache FILE` alone (docs/llm-archetypes.md's command): the model and the sampling
 * settings come from the cache, so a run recorded with a non-default model and two samples per
 * archetype replays without repeating --llm-model or --llm-samples. Flags that disagree with the
 * cache, and a cache that holds several models, are exit 2. The replay records its own provider
 * (`replay`) in the manifest and archetypes.arrow, and the manifest names the cache it replayed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok, startFakeServer } from './fakeServer.ts';
import { archetypeRows, childEnv, expectOk, expectReplayOf, personaReply, replayArgs, runArgs, socsim, type CliResult } from './cliHelpers.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-llm-replay-settings-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const out = (name: string) => path.join(tmp, name);
const REC = out('recorded');
const CACHE = path.join(REC, 'llm-cache.jsonl');
const MODEL = 'tiny-local-7b';
const SEED = ['--seed', '3'];

/** One line of stderr that names every string in `names`. */
function expectInputError(r: CliResult, ...names: RegExp[]) {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  for (const n of names) expect(r.stderr).toMatch(n);
}

describe('--llm replay takes the model and sampling settings from the cache', () => {
  let recorded: CliResult;
  beforeAll(async () => {
    const server = await startFakeServer((req) => ok(personaReply(req.persona, `reply ${req.n} (sample ${req.body.seed})`)));
    try {
      recorded = await socsim(runArgs(server.baseURL, REC, [...SEED, '--llm-model', MODEL, '--llm-samples', '2']));
    } finally {
      await server.close();
    }
  });

  it('each cache entry says which model and sampling settings produced it', () => {
    expectOk(recorded);
    const entries = fs.readFileSync(CACHE, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries) expect(e).toMatchObject({ model: MODEL, temperature: 0.7, max_tokens: 400 });
    expect(new Set(entries.map((e) => e.sample))).toEqual(new Set([0, 1]));
  });

  it('the documented command (no --llm-model, no --llm-samples) replays the run byte for byte and says so', async () => {
    const dir = out('replay');
    const r = await socsim(replayArgs(CACHE, dir, SEED), childEnv());
    expectOk(r);
    expectReplayOf(REC, dir);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect(manifest.llm).toMatchObject({ provider: 'replay', model: MODEL, samples: 2, cache: CACHE });
    expect(manifest.llm.base_url).toBeUndefined();
    const rows = archetypeRows(dir);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.provider).toBe('replay');
      expect(row.model).toBe(MODEL);
      expect(row.samples).toBe(2);
    }
    for (const row of archetypeRows(REC)) expect(row.provider).toBe('openai');
    // A replay of the replay: the same files, archetypes.arrow included.
    const again = out('replay-again');
    expectOk(await socsim(replayArgs(path.join(dir, 'llm-cache.jsonl'), again, SEED), childEnv()));
    expectReplayOf(REC, again);
    expect(fs.readFileSync(path.join(again, 'archetypes.arrow')).equals(fs.readFileSync(path.join(dir, 'archetypes.arrow')))).toBe(true);
  });

  it('flags that agree with the cache are accepted', async () => {
    const dir = out('replay-explicit');
    expectOk(await socsim(replayArgs(CACHE, dir, [...SEED, '--llm-model', MODEL, '--llm-samples', '2']), childEnv()));
    expectReplayOf(REC, dir);
  });

  it('an --llm-model or --llm-samples that disagrees with the cache is exit 2 naming both, before anything is built', async () => {
    const dir = out('replay-disagree');
    const model = await socsim(replayArgs(CACHE, dir, [...SEED, '--llm-model', 'gpt-4o-mini']), childEnv());
    expectInputError(model, /--llm-model gpt-4o-mini/, new RegExp(MODEL), /llm-cache\.jsonl/);
    const samples = await socsim(replayArgs(CACHE, dir, [...SEED, '--llm-samples', '1']), childEnv());
    expectInputError(samples, /--llm-samples 1/, /\b2\b/, /llm-cache\.jsonl/);
    expect(fs.existsSync(path.join(dir, 'manifest.json'))).toBe(false);
  });

  it('a cache with several models asks for --llm-model (exit 2); --llm-model picks one', async () => {
    const lines = fs.readFileSync(CACHE, 'utf8').trim().split('\n');
    const other = { ...JSON.parse(lines[0]), key: 'f'.repeat(64), model: 'other-model' };
    const mixed = out('mixed.jsonl');
    fs.writeFileSync(mixed, [...lines, JSON.stringify(other)].join('\n') + '\n');
    const dir = out('replay-mixed');
    const r = await socsim(replayArgs(mixed, dir, SEED), childEnv());
    expectInputError(r, /mixed\.jsonl/, new RegExp(MODEL), /other-model/, /--llm-model/);
    expect(fs.existsSync(path.join(dir, 'manifest.json'))).toBe(false);
    const picked = await socsim(replayArgs(mixed, dir, [...SEED, '--llm-model', MODEL]), childEnv());
    expectOk(picked);
    for (const f of ['metrics.arrow', 'posts.arrow', 'agents/step-000007.arrow']) {
      expect(fs.readFileSync(path.join(dir, f)).equals(fs.readFileSync(path.join(REC, f))), f).toBe(true);
    }
  });
});
