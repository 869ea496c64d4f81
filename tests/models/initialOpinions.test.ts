/**
 * Initial opinions from an agent column or a file (models/initialOpinions.ts); `uniform` and
 * `leanings` are covered in classic.test.ts and end to end in tests/scenarios/classic-options.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initOpinions, initialOpinionParam, readOpinionsFile, type InitialOpinion } from '../../models/initialOpinions.ts';
import { degroot } from '../../models/opinion.ts';
import { InputError } from '../../sim-core/errors.ts';
import { createTable } from '../../sim-core/table.ts';
import type { World } from '../../sim-core/phase.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-initial-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function world(n: number): World {
  const agents = createTable({ opinion: { type: 'f32' }, leaning: { type: 'u8' }, activity: { type: 'f32' }, interest: { type: 'f32', width: 2 } }, n);
  (agents.columns.opinion as Float32Array).fill(9);
  (agents.columns.leaning as Uint8Array).set([0, 4, 2, 1].slice(0, n));
  (agents.columns.activity as Float32Array).set([0.5, -0.25, 1, 3].slice(0, n));
  return { agents, graph: undefined as never, exec: undefined as never, seed: 1, stepSeconds: 3600 };
}

const opinions = (w: World) => Array.from(w.agents.columns.opinion);

function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('did not throw');
}

function file(name: string, text: string): string {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, text);
  return p;
}

describe('kind "column"', () => {
  it('copies a column of values in [-1, 1], or maps codes through `values`', () => {
    const w = world(3);
    initOpinions(w, { kind: 'column', column: 'activity' });
    expect(opinions(w)).toEqual([0.5, -0.25, 1]);
    const c = world(4);
    initOpinions(c, { kind: 'column', column: 'leaning', values: [-1, -0.5, 0, 0.5, 1] });
    expect(opinions(c)).toEqual([-1, 1, 0, -0.5]);
  });

  it('an unknown column, a vector column, a value outside [-1, 1] or a code without a value are input errors', () => {
    const cases: Array<[InitialOpinion, RegExp]> = [
      [{ kind: 'column', column: 'age' }, /column "age" is not an agent column; the agents have opinion, leaning, activity, interest/],
      [{ kind: 'column', column: 'interest' }, /column "interest" holds 2 values per agent; it needs one/],
      [{ kind: 'column', column: 'activity' }, /column "activity": row 3 holds 3, outside \[-1, 1\]/],
      [{ kind: 'column', column: 'leaning', values: [0, 0.5] }, /column "leaning": row 1 holds 4, which initial.values \(2 of them\) has no entry for/],
    ];
    for (const [initial, re] of cases) {
      const e = thrown(() => initOpinions(world(4), initial));
      expect(e).toBeInstanceOf(InputError);
      expect(e.message).toMatch(re);
    }
  });
});

describe('kind "file"', () => {
  it('one opinion per line in row order; blank lines, # comments, CRLF and spaces are fine', () => {
    const p = file('ok.txt', '# opinions for 3 agents\r\n0.5\r\n\r\n  -1 \r\n# last\r\n1e-1\r\n');
    const w = world(3);
    const phase = degroot({ initial: { kind: 'file', path: p } });
    phase.init!(w);
    expect(opinions(w)).toEqual([0.5, -1, Math.fround(0.1)]);
  });

  it('bad files are one-line input errors naming the file and line', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['nan.txt', '0.5\n# x\nabc\n', /^initial opinions file \S+nan\.txt line 3: "abc" is not a number$/],
      ['hex.txt', '0x1\n', /line 1: "0x1" is not a number/],
      ['range.txt', '0.5\n-1.5\n', /^initial opinions file \S+range\.txt line 2: -1\.5 is outside \[-1, 1\]$/],
      ['long.txt', '0\n0\n0\n0.1\n', /line 4: more opinions than the run's 3 agents/],
      ['short.txt', '0\n0\n', /line 2: the file ends after 2 opinions; the run has 3 agents, give one per agent/],
    ];
    for (const [name, text, re] of cases) {
      const e = thrown(() => readOpinionsFile(file(name, text), 3));
      expect(e, name).toBeInstanceOf(InputError);
      expect(e.message, name).toMatch(re);
      expect(e.message).not.toMatch(/\n/);
    }
    const missing = thrown(() => readOpinionsFile(path.join(tmp, 'none.txt'), 3));
    expect(missing.message).toMatch(/^initial opinions file \S+none\.txt: cannot read it \(ENOENT\)$/);
  });
});

describe('the `initial` parameter', () => {
  const param = initialOpinionParam('uniform');
  it('defaults to uniform on [-1, 1]; each kind takes its own fields only', () => {
    expect(param.parse(undefined)).toEqual({ kind: 'uniform', lo: -1, hi: 1 });
    expect(param.parse({ kind: 'file', path: 'x.txt' })).toEqual({ kind: 'file', lo: -1, hi: 1, path: 'x.txt' });
    const issue = (v: unknown) => {
      const r = param.safeParse(v);
      return r.success ? 'ok' : `${r.error.issues[0].path.join('.')}: ${r.error.issues[0].message}`;
    };
    expect(issue({ kind: 'file' })).toBe('path: kind "file" needs the path of an opinions file');
    expect(issue({ kind: 'column' })).toBe('column: kind "column" needs the name of an agent column');
    expect(issue({ kind: 'uniform', path: 'x.txt' })).toBe('path: applies to kind "file" only');
    expect(issue({ kind: 'file', path: 'x', lo: 0 })).toBe('lo: applies to kind "uniform" only');
    expect(issue({ kind: 'column', column: 'leaning', values: [2] })).toMatch(/^values\.0: /);
    expect(issue({ kind: 'column', column: 'leaning', values: [0.5] })).toBe('ok');
  });
});
