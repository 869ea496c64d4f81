/**
 * `describe` derives the parameter list from the schema, so it follows a schema as it grows: every
 * bundled scenario's parameters carry a doc, and a default is the one the scenario gives (an
 * enclosing object's default over the field's own).
 */
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { parameterLines } from '../../runner/cli/describe.ts';
import { bundledScenarios, loadScenario } from '../../runner/run/loadScenario.ts';

describe('parameterLines', () => {
  it('lists nested objects, arrays of tagged unions, defaults and docs', () => {
    const schema = z.strictObject({
      beta: z.number().min(0).max(1).default(0.05).describe('infection probability'),
      platform: z.strictObject({ feedSize: z.number().int().min(1).default(10) }).default({ feedSize: 10 }),
      interventions: z
        .array(
          z.discriminatedUnion('kind', [
            z.strictObject({ kind: z.literal('label'), at: z.number().describe('hour') }).describe('labels posts'),
            z.strictObject({ kind: z.literal('remove'), share: z.number().min(0).max(1) }),
          ]),
        )
        .default([])
        .describe('what the platform does, when'),
    });
    const lines = parameterLines(schema);
    const by = Object.fromEntries(lines.map((l) => [l.path, l]));
    expect(by.beta).toEqual({ path: 'beta', type: 'number (>= 0, <= 1)', def: '0.05', doc: 'infection probability' });
    expect(by['platform.feedSize'].type).toBe('integer (>= 1)');
    expect(by.interventions).toMatchObject({ type: 'array', def: '[]', doc: 'what the platform does, when' });
    expect(by['interventions[]'].type).toBe('one of kind: "label" | "remove"');
    expect(by['interventions[](kind=label)']).toMatchObject({ type: 'object', doc: 'labels posts' });
    expect(by['interventions[](kind=label).at']).toMatchObject({ type: 'number', doc: 'hour' });
    expect(by['interventions[](kind=remove).share'].type).toBe('number (>= 0, <= 1)');
  });

  it('takes a default from the enclosing default: the union option it names, an object\'s fields', () => {
    const graph = z.discriminatedUnion('kind', [
      z.strictObject({ kind: z.literal('a'), mean: z.number().default(20) }),
      z.strictObject({ kind: z.literal('b'), m: z.number().default(5) }),
    ]);
    const schema = z.strictObject({
      graph: graph.default({ kind: 'a', mean: 45 }),
      pair: z.strictObject({ x: z.number().default(1), y: z.number().default(2) }).default({ x: 3, y: 2 }),
    });
    const by = Object.fromEntries(parameterLines(schema).map((l) => [l.path, l.def]));
    expect(by['graph(kind=a).mean']).toBe('45');
    expect(by['graph(kind=b).m']).toBe('5');
    expect([by['pair.x'], by['pair.y']]).toEqual(['3', '2']);
  });
});

describe('socsim describe on the bundled scenarios', () => {
  it('shows the scenario\'s own default where it overrides the schema\'s: social-feed follows 45 accounts', async () => {
    const lines = async (name: string) => Object.fromEntries(parameterLines((await loadScenario(name)).scenario.params).map((l) => [l.path, l]));
    expect((await lines('social-feed'))['graph(kind=homophilous).meanFollowing'].def).toBe('45');
    expect((await lines('opinion-cascade'))['graph(kind=homophilous).meanFollowing'].def).toBe('20');
    const sir = await lines('sir');
    expect(sir['graph(kind=barabasi-albert).m'].def).toBe('5');
    expect(sir['graph(kind=homophilous).meanFollowing'].def).toBe('20');
  });

  it('documents every parameter of every scenario, intervention kinds and their fields included', async () => {
    for (const name of bundledScenarios()) {
      const undocumented = parameterLines((await loadScenario(name)).scenario.params)
        .filter((l) => l.path !== 'interventions[]' && l.doc.trim() === '')
        .map((l) => l.path);
      expect(undocumented, name).toEqual([]);
    }
  });
});
