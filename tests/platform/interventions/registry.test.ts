/**
 * The registry of intervention kinds: every bundled kind has its docs, its test file and its row
 * in docs/experiments.md's table; a bad intervention is refused before the run with one line
 * naming the field.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLED_KINDS, INTERVENTION_KINDS } from '../../../platform/interventions/registry.ts';
import { ROOT } from '../../runner/cliHelpers.ts';
import { refused, runsDir } from './runs.ts';

const tmp = runsDir('registry');

describe('intervention kinds', () => {
  it("each bundled kind is one file with its docs and its own test, and a row of docs/experiments.md's table", () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'experiments.md'), 'utf8');
    // The table under "| kind | what it does | fields |", up to the blank line.
    const block = doc.slice(doc.indexOf('| kind | what it does | fields |')).split('\n\n')[0];
    const table = [...block.matchAll(/^\| `([A-Za-z-]+)` \|/gm)].map((m) => m[1]);
    expect(table).toEqual(INTERVENTION_KINDS);
    for (const k of BUNDLED_KINDS) {
      expect(k.doc.length, k.name).toBeGreaterThan(40);
      expect(fs.existsSync(path.join(ROOT, 'platform', 'interventions', `${k.name}.ts`)), k.name).toBe(true);
      expect(fs.existsSync(path.join(ROOT, 'tests', 'platform', 'interventions', `${k.name}.test.ts`)), k.name).toBe(true);
    }
  });

  it('bad interventions are refused before the run with one line naming the field (exit 2)', () => {
    const bad = (iv: unknown, pattern: RegExp) => refused(tmp, [iv], pattern);
    bad({ kind: 'label', step: 1, posts: { tags: 'x' } }, /unknown parameter interventions\.0\.posts\.tags; did you mean interventions\.0\.posts\.tag\?/);
    bad({ kind: 'label', hour: 1, step: 1, posts: {} }, /interventions\.0\.hour: give the time as exactly one of hour or step/);
    bad({ kind: 'remove', step: 1, posts: { tag: 'nope' } }, /interventions\.0\.posts\.tag: no inject has tag "nope"/);
    bad({ kind: 'suspend', step: 1, agents: { agents: [6000] } }, /interventions\.0\.agents: agent id 6000 is not below the number of agents \(6000\)/);
    bad({ kind: 'setParam', step: 1, param: 'platform.inNetwork', value: 99 }, /interventions\.0\.value: platform\.inNetwork = 99: in-network count 99 is larger than feedSize/);
    bad({ kind: 'explode', step: 1 }, new RegExp(`interventions\\.0\\.kind: .*${INTERVENTION_KINDS.map((k) => `'${k}'`).join(' \\| ')}`));
  });
});
