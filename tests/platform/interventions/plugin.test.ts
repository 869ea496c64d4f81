/**
 * An intervention kind from a study (study/boost.ts, public API only): registered before the
 * scenario's parameters are parsed, it is validated, listed, applied and logged like a bundled
 * one, in an in-process run, with the same bytes at any thread count.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineIntervention, registerInterventionKind, run, z } from '../../../index.ts';
import socialFeed from '../../../scenarios/social-feed.ts';
import { parameterLines } from '../../../runner/cli/describe.ts';
import { tempDir } from '../../runner/cliHelpers.ts';
import boost from './study/boost.ts';
import { col, read, rows } from './runs.ts';

const tmp = tempDir('socsim-iv-plugin-');
const INJECT = { kind: 'inject', step: 0, count: 10, stance: 0.6, veracity: 'false', novelty: 1.2, tag: 'rumour' };
const BOOST = { kind: 'boost', step: 2, posts: { tag: 'rumour' }, factor: 3 };
const runWith = (name: string, interventions: unknown[], threads = 1) =>
  run({ scenario: 'social-feed', params: { interventions }, agents: 2000, steps: 5, seed: 3, threads, out: path.join(tmp, name) });

describe('an intervention kind from a study', () => {
  it('registers once (after a parse without interventions too), and refuses another kind under a known name', () => {
    socialFeed.params.parse({});
    registerInterventionKind(boost);
    registerInterventionKind(boost);
    const other = defineIntervention({ name: 'boost', doc: 'another', fields: {}, apply: () => ({ posts: 0, agents: 0 }) });
    expect(() => registerInterventionKind(other)).toThrow(/intervention kind "boost" is already defined \(by another plugin\)/);
    const label = defineIntervention({ name: 'label', doc: 'another', fields: {}, apply: () => ({ posts: 0, agents: 0 }) });
    expect(() => registerInterventionKind(label)).toThrow(/"label" is already defined \(bundled\)/);
    expect(() => defineIntervention({ name: 'x', doc: '', fields: { step: z.number() }, apply: () => null })).toThrow(/field step is one every intervention has/);
  });

  it('is listed with its fields by describe', () => {
    const lines = new Map(parameterLines(socialFeed.params).map((l) => [l.path, l]));
    expect(lines.get('interventions[]')!.type).toMatch(/"assign" \| "boost"$/);
    expect(lines.get('interventions[](kind=boost)')!.doc).toBe(boost.doc);
    expect(lines.get('interventions[](kind=boost).factor')!.type).toBe('number (>= 1)');
  });

  it('is applied at its step and logged, with the same bytes at 1 and 2 threads', async () => {
    const { dir } = await runWith('one', [INJECT, BOOST]);
    const p = read(dir, 'posts.arrow');
    const rank = col(p, 'rank') as number[];
    let boosted = 0;
    col(p, 'tag').forEach((t, i) => {
      if (t === 'rumour' && col(p, 'kind')[i] !== 'comment') expect(rank[i], `row ${i}`).toBe(3);
      if (t !== 'rumour') expect(rank[i]).toBe(1);
      if (t === 'rumour' && (col(p, 'step')[i] as number) < 2) boosted++;
    });
    expect(rows(read(dir, 'interventions.arrow'))).toEqual([
      { step: 0, index: 0, name: 'inject-0', kind: 'inject', posts: 10, agents: 10 },
      { step: 2, index: 1, name: 'boost-1', kind: 'boost', posts: boosted, agents: 1 },
    ]);
    const { dir: two } = await runWith('two', [INJECT, BOOST], 2);
    for (const f of ['posts.arrow', 'interventions.arrow', 'metrics.arrow']) expect(fs.readFileSync(path.join(two, f)).equals(fs.readFileSync(path.join(dir, f))), f).toBe(true);
  });

  it('is checked like a bundled kind: one line naming the field', async () => {
    await expect(runWith('bad', [INJECT, { ...BOOST, factor: 0.5 }])).rejects.toThrow(/^scenario social-feed: parameter interventions\.1\.factor: .*>=1/);
    await expect(runWith('bad', [INJECT, { ...BOOST, facto: 2 }])).rejects.toThrow(/unknown parameter interventions\.1\.facto; did you mean interventions\.1\.factor\?/);
    await expect(runWith('bad', [{ ...BOOST, posts: { tag: 'nope' } }])).rejects.toThrow(/interventions\.0\.posts\.tag: no inject has tag "nope"/);
    await expect(runWith('bad', [{ kind: 'bost', step: 1 }])).rejects.toThrow(/interventions\.0\.kind: .*'assign' \| 'boost'/);
  });

  it('cannot be added once a list of interventions was parsed', () => {
    const late = defineIntervention({ name: 'late', doc: 'too late', fields: {}, apply: () => ({ posts: 0, agents: 0 }) });
    expect(() => registerInterventionKind(late)).toThrow(/registered after a scenario's interventions were parsed/);
  });
});
