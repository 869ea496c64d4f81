/**
 * Personas from the population: the default template (the words recorded caches match), a
 * template over every attribute (member mixes of the attributes that do not make the archetype,
 * attributes a persona file adds, single archetypes' texts), strict persona files, and the persona
 * in the prompt's cache key: a changed persona is a miss, a replay with the same file is exact.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ok, replyObject, type FakeServer } from './fakeServer.ts';
import { childEnv, expectOk, expectReplayOf, fakeServerSuite, replayArgs, runArgs, socsim } from './cliHelpers.ts';
import { archetypePersonas, DEFAULT_PERSONA_TEMPLATE } from '../../llm-archetypes/personas.ts';
import { loadPersonaFile } from '../../llm-archetypes/personaFile.ts';
import type { Table } from '../../sim-core/table.ts';
import { InputError } from '../../sim-core/errors.ts';

let server: FakeServer;
const out = fakeServerSuite('socsim-llm-personas-', (s) => (server = s));
const file = (name: string, content: unknown) => {
  const f = out(name);
  fs.mkdirSync(path.dirname(f), { recursive: true });
  fs.writeFileSync(f, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return f;
};

/** Two age bands x two leanings x two tiers, with a gender column; agents by (archetype, gender). */
function population(): Table {
  // archetype = (age x 2 + leaning) x 2 + tier
  const archetype = Uint16Array.from([0, 0, 0, 0, 5, 5, 7]);
  const gender = Uint8Array.from([0, 0, 0, 1, 1, 1, 0]);
  return {
    length: archetype.length,
    schema: {
      age_band: { type: 'u8', dictionary: ['young', 'old'] },
      leaning: { type: 'u8', dictionary: ['left', 'right'] },
      activity_tier: { type: 'u8', dictionary: ['low', 'high'] },
      gender: { type: 'u8', dictionary: ['female', 'male'] },
      archetype: { type: 'u16' },
    },
    columns: { archetype, gender, age_band: new Uint8Array(7), leaning: new Uint8Array(7), activity_tier: new Uint8Array(7) },
  };
}

describe('persona templates', () => {
  it('the default template is the one socsim has always used', () => {
    expect(DEFAULT_PERSONA_TEMPLATE).toBe('social-media users aged {age_band}, politically {leaning}, with {activity_tier} activity on the platform');
    const p = archetypePersonas(population());
    expect(p).toHaveLength(8);
    expect(p[5]).toBe('social-media users aged old, politically left, with high activity on the platform');
  });

  it('fills every attribute: own labels, members, member mixes, added attributes, single archetypes', () => {
    const p = archetypePersonas(population(), {
      template: '{age_band}/{leaning}/{activity_tier}: {members} members, {gender}; worried about {worry}',
      attributes: { worry: { by: 'leaning', values: { left: 'climate', right: 'taxes' } } },
      archetypes: { 'old/right/high': 'the loud ones' },
    });
    expect(p[0]).toBe('young/left/low: 4 members, 75% female, 25% male; worried about climate');
    expect(p[5]).toBe('old/left/high: 2 members, 100% male; worried about climate');
    expect(p[2]).toBe('young/right/low: 0 members, none; worried about taxes');
    expect(p[7]).toBe('the loud ones');
  });

  it('refuses names and labels the population lacks, naming the field and what to use', () => {
    const err = (spec: Parameters<typeof archetypePersonas>[1]) => {
      try {
        archetypePersonas(population(), { file: 'p.json', ...spec });
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
        return (e as Error).message;
      }
      throw new Error('no error');
    };
    expect(err({ template: 'aged {age}' })).toBe('--llm-personas p.json: template uses {age}, which the population does not have; use {age_band}, {leaning}, {activity_tier}, {members}, {gender}');
    expect(err({ attributes: { worry: { by: 'leaning', values: { left: 'climate' } } } })).toContain('attributes.worry.values has no text for leaning "right"');
    expect(err({ attributes: { worry: { by: 'leaning', values: { left: 'a', right: 'b', centre: 'c' } } } })).toContain('names leaning "centre", which the population does not have');
    expect(err({ archetypes: { 'young/left/medium': 'x' } })).toContain('archetypes."young/left/medium" is not an archetype of the population');
  });
});

describe('persona files', () => {
  it('reads a good file', () => {
    const f = file('good.json', { template: '{age_band} {gender}', attributes: { worry: { by: 'leaning', values: { left: 'climate' } } }, archetypes: { 'a/b/c': 'x' } });
    expect(loadPersonaFile(f)).toEqual({ file: f, template: '{age_band} {gender}', attributes: { worry: { by: 'leaning', values: { left: 'climate' } } }, archetypes: { 'a/b/c': 'x' } });
  });

  it.each([
    ['not JSON', '{"template": "x",\n}', /not valid JSON \(.*line 2/],
    ['an array', '[]', /must be one JSON object/],
    ['an unknown field', { templat: 'x' }, /"templat" is not a persona file field; use "template", "attributes", "archetypes"/],
    ['an empty template', { template: ' ' }, /template must be a non-empty string/],
    ['a bad attribute name', { attributes: { Worry: { by: 'leaning', values: {} } } }, /attributes\.Worry has a name placeholders cannot use/],
    ['a taken attribute name', { attributes: { leaning: { by: 'leaning', values: {} } } }, /attributes\.leaning names an attribute socsim already gives/],
    ['a bad "by"', { attributes: { worry: { by: 'gender', values: {} } } }, /attributes\.worry\.by must be one of "age_band", "leaning", "activity_tier"/],
    ['a number as text', { attributes: { worry: { by: 'leaning', values: { left: 3 } } } }, /attributes\.worry\.values\."left" must be a non-empty string/],
    ['a bad archetype key', { archetypes: { young: 'x' } }, /archetypes\."young" is not a key AGE_BAND\/LEANING\/ACTIVITY_TIER/],
  ])('refuses %s in one line naming the file and the field', (_, content, re) => {
    const f = file(`bad-${Math.random().toString(36).slice(2)}.json`, content);
    expect(() => loadPersonaFile(f)).toThrow(InputError);
    expect(() => loadPersonaFile(f)).toThrow(new RegExp(`^--llm-personas ${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ${re.source}`));
  });

  it('a missing file or a bad one stops the CLI with exit 2 and one line', async () => {
    for (const [f, text] of [[out('missing.json'), 'cannot read it (ENOENT)'], [file('cli-bad.json', { template: '{nope}' }), 'template uses {nope}']]) {
      const r = await socsim(runArgs(server.baseURL, out('never'), ['--llm-personas', f]));
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(text);
    }
    expect(server.requests).toHaveLength(0);
  });
});

describe('the persona is part of the prompt', () => {
  it('a run with a persona file sends its personas; its replay is exact; a changed persona is a cache miss', async () => {
    server.setScript((req) => ok(replyObject({}, `reply ${req.n}`)));
    const personas = file('run.json', { template: 'people aged {age_band}, {leaning}, {activity_tier} activity, {gender}; worried about {worry}', attributes: { worry: { by: 'leaning', values: { left: 'climate', 'center-left': 'rent', center: 'prices', 'center-right': 'crime', right: 'taxes' } } } });
    const rec = out('rec');
    expectOk(await socsim(runArgs(server.baseURL, rec, ['--llm-personas', personas])));
    const sent = server.requests.map((q) => q.persona);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((p) => /^people aged \S+, \S+, \S+ activity, \d+% (female|male|other).*; worried about (climate|rent|prices|crime|taxes)$/.test(p))).toBe(true);

    const replay = out('replay');
    expectOk(await socsim(replayArgs(path.join(rec, 'llm-cache.jsonl'), replay, ['--llm-personas', personas]), childEnv()));
    expectReplayOf(rec, replay);

    // Another persona text: the recorded replies do not answer it.
    const changed = file('changed.json', { template: 'people aged {age_band}, {leaning}' });
    const miss = await socsim(replayArgs(path.join(rec, 'llm-cache.jsonl'), out('miss'), ['--llm-personas', changed]), childEnv());
    expect(miss.code).toBe(2);
    expect(miss.stderr).toContain('no recorded response for this prompt');
    // As a reused cache, every call goes to the server again.
    server.reset();
    server.setScript((req) => ok(replyObject({}, `reply ${req.n}`)));
    expectOk(await socsim(runArgs(server.baseURL, out('reuse'), ['--llm-personas', changed, '--llm-cache', path.join(rec, 'llm-cache.jsonl')])));
    expect(server.requests.length).toBe(sent.length);
  });
});
