/**
 * State tables (sim-core/stateTable.ts) and the phases' table declarations (phase.ts checkPhases):
 * the names must exist, a table rewritten every step must be written before it is read, a phase
 * holding tables must declare them; a table never bound refuses residency calls.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { checkPhases, type Phase } from '../../sim-core/phase.ts';
import { StateTable, tablesOf, type Lifetime } from '../../sim-core/stateTable.ts';
import { sharedArray } from '../../sim-core/table.ts';
import { makeWorld } from '../models/worlds.ts';

const exec = createExecutor(1);
afterAll(() => exec.close());

class Carried extends StateTable {
  values = sharedArray('f32', 4);
}
class Scratch extends StateTable {
  rows = sharedArray('i32', 4);
  override get lifetime(): Lifetime {
    return 'step';
  }
}

const state = { counts: new Carried(), shown: new Scratch(), label: 'not a table' };
const phase = (name: string, reads: string[], writes: string[], withState = true): Phase => ({
  name,
  reads: [],
  writes: [],
  ...(withState ? { state } : {}),
  tables: { reads, writes },
  run() {},
});

describe('table declarations', () => {
  it('accept a step that writes each per-step table before reading it', async () => {
    const world = await makeWorld(exec, 3, [[1, 0]]);
    expect([...tablesOf(state).keys()]).toEqual(['counts', 'shown']);
    expect(() => checkPhases(world, [phase('fill', ['counts'], ['shown']), phase('use', ['shown', 'counts'], ['counts'])])).not.toThrow();
    // A carried table may be read before this step writes it: it holds the last step's.
    expect(() => checkPhases(world, [phase('use', ['counts'], []), phase('fill', [], ['counts'])])).not.toThrow();
  });

  it('refuse a per-step table read before any phase writes it, naming both', async () => {
    const world = await makeWorld(exec, 3, [[1, 0]]);
    expect(() => checkPhases(world, [phase('use', ['shown'], []), phase('fill', [], ['shown'])])).toThrow(
      'phase use reads table "shown", which is rewritten every step, before any phase writes it; put a phase that writes it first',
    );
  });

  it('refuse an unknown name, an undeclared state and two tables under one name', async () => {
    const world = await makeWorld(exec, 3, [[1, 0]]);
    expect(() => checkPhases(world, [phase('fill', ['cuonts'], [])])).toThrow('phase fill declares table "cuonts", which no phase\'s state holds (tables: counts, shown)');
    const silent: Phase = { name: 'silent', reads: [], writes: [], state, run() {} };
    expect(() => checkPhases(world, [silent])).toThrow('phase silent holds state tables (counts, shown) but declares none: add tables: { reads, writes }');
    const other: Phase = { ...phase('other', [], []), state: { counts: new Carried() } };
    expect(() => checkPhases(world, [phase('fill', [], []), other])).toThrow('two phase states hold different tables named "counts"');
  });
});

describe('residency', () => {
  it('a table never bound refuses residency calls; bound to the CPU executor they do nothing', async () => {
    const t = new Carried();
    expect(() => t.wrote(t.values)).toThrow('Carried is used before it is bound to an executor (StateTable.bind)');
    t.bind(exec);
    expect(t.onDevice).toBe(false);
    t.wrote(t.values);
    await t.forHost([t.values]);
  });

  it('the binding is not part of what a checkpoint saves', () => {
    const t = new Carried().bind(exec);
    expect(Object.keys(t)).toEqual(['values']);
  });
});
