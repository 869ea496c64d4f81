/** `describe` derives the parameter list from the schema, so it follows a schema as it grows. */
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { parameterLines } from '../../runner/cli/describe.ts';

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
});
