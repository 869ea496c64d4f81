/**
 * Scenario parameters reject unknown keys at every depth: a mistyped `--set` name is an error (exit
 * 2) that names the full dotted path and the closest valid key, never silently dropped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { bundledScenarios, loadScenario } from '../../runner/run/loadScenario.ts';
import { defineScenario } from '../../runner/run/defineScenario.ts';
import { closestKey, editDistance, looseObjects } from '../../runner/run/strictParams.ts';
import { socialConfig } from '../../platform/state.ts';
import { populationConfig } from '../../population/synthesize.ts';
import { graphSpec } from '../../population/buildSociety.ts';
import { llmOptions } from '../../llm-archetypes/setup.ts';
import { socsim, tempDir } from './cliHelpers.ts';

const tmp = tempDir('socsim-strict-');

describe('every config schema rejects unknown keys at every depth', () => {
  for (const name of bundledScenarios()) {
    it(`scenario ${name}: params`, async () => {
      const { scenario } = await loadScenario(name);
      expect(looseObjects(scenario.params)).toEqual([]);
    });
  }

  it('the platform, population, graph and LLM option schemas', () => {
    for (const [name, s] of Object.entries({ socialConfig, populationConfig, graphSpec, llmOptions })) {
      expect(looseObjects(s), name).toEqual([]);
    }
  });

  it('the check sees through defaults, optionals, unions, arrays and records', () => {
    const loose = z.strictObject({
      a: z.strictObject({ b: z.object({ c: z.number() }).default({ c: 1 }) }).optional(),
      u: z.discriminatedUnion('kind', [z.strictObject({ kind: z.literal('x') }), z.object({ kind: z.literal('y') })]),
      list: z.array(z.object({ d: z.number() })),
      rec: z.record(z.string(), z.looseObject({ e: z.number() })),
      fine: z.partialRecord(z.enum(['p', 'q']), z.number()).default({}),
    });
    expect(looseObjects(loose).sort()).toEqual(['a.b', 'list[]', 'rec{}', 'u(kind=y)']);
    expect(looseObjects(z.object({ x: z.number() }))).toEqual(['(top level)']);
  });

  it('defineScenario refuses params with an object that accepts unknown keys, naming it', () => {
    const define = () =>
      defineScenario({
        name: 'loose',
        description: 'a scenario whose nested params object is not strict',
        params: z.strictObject({ story: z.object({ count: z.number().default(5) }).default({ count: 5 }) }),
        defaults: { agents: 10, steps: 1 },
        setup: async () => {
          throw new Error('not run');
        },
      });
    expect(define).toThrow(/params\.story accepts unknown keys.*z\.strictObject/);
  });
});

describe('closest key', () => {
  it('edit distance counts a transposition as one edit', () => {
    expect(editDistance('feedSzie', 'feedSize')).toBe(1);
    expect(editDistance('repst', 'repost')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
  it('suggests the nearest key, or none when nothing is close', () => {
    expect(closestKey('feedSzie', ['feedSize', 'inNetwork', 'seenSize'])).toBe('feedSize');
    expect(closestKey('feedsize', ['feedSize', 'seenSize'])).toBe('feedSize');
    expect(closestKey('colour', ['graph', 'states'])).toBeUndefined();
  });
});

describe('socsim run --set with an unknown key exits 2 naming it and the closest valid key', () => {
  const cases: Array<[string, string, string[], RegExp]> = [
    ['nested typo', 'social-feed', ['platform.feedSzie=5'], /unknown parameter platform\.feedSzie; did you mean platform\.feedSize\?/],
    ['behaviour multiplier typo', 'social-feed', ['platform.behaviour.repst=2'], /unknown parameter platform\.behaviour\.repst; did you mean platform\.behaviour\.repost\?/],
    ['story typo', 'social-feed', ['story.cont=3'], /unknown parameter story\.cont; did you mean story\.count\?/],
    ['graph variant typo', 'social-feed', ['graph.homophly=0.5'], /unknown parameter graph\.homophly; did you mean graph\.homophily\?/],
    ['key of another graph kind', 'opinion-cascade', ['graph.kind=barabasi-albert', 'graph.meanFollowing=3'], /unknown parameter graph\.meanFollowing; known under graph: kind, m$/m],
    ['top-level typo', 'opinion-cascade', ['epss=0.2'], /unknown parameter epss; did you mean eps\?/],
    ['nothing close', 'voter', ['colour=red'], /unknown parameter colour; known: graph, states/],
    ['below a classic scenario graph', 'voter', ['graph.mm=3'], /unknown parameter graph\.mm; did you mean graph\.m\?/],
  ];
  for (const [what, scenario, sets, re] of cases) {
    it(what, () => {
      const r = socsim(['run', scenario, ...sets.flatMap((s) => ['--set', s]), '--agents', '500', '--steps', '1', '--quiet', '--out', path.join(tmp, 'never')]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(re);
      expect(r.stderr).toMatch(new RegExp(`scenario ${scenario}`));
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(fs.existsSync(path.join(tmp, 'never'))).toBe(false);
    });
  }

  it('switching a graph kind with --set still works (the old kind\'s keys are not carried over)', () => {
    const out = path.join(tmp, 'ba');
    const r = socsim(['run', 'opinion-cascade', '--agents', '500', '--steps', '1', '--quiet', '--set', 'graph.kind=barabasi-albert', '--set', 'graph.m=3', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const m = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
    expect(m.parameters.graph).toEqual({ kind: 'barabasi-albert', m: 3 });
  });
});
