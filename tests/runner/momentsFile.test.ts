/**
 * The moments file: strict, every problem one line naming the file, the moment's field and the
 * fix; names are checked against the calibration's experiment and validate's patterns before any
 * run; and the CLI stops on them with exit code 2.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readMoments, type Moment } from '../../runner/calibrate/momentsFile.ts';
import { checkMoments, momentArms } from '../../runner/calibrate/momentValues.ts';
import { metric } from '../../runner/experiment/outcomes.ts';
import { socsim, tempDir } from './cliHelpers.ts';

const tmp = tempDir('socsim-moments-file-');
const source = { paper: 'Muchnik, Aral & Taylor, Science 2013', where: 'Fig. 2' };
const good = { id: 'up', kind: 'effect', outcome: 'final_score', group: 'up', versus: { group: 'control' }, contrast: 'ratio', value: 1.25, interval: [1.1, 1.4], source };
let n = 0;
const write = (content: unknown) => {
  const f = path.join(tmp, `m${n++}.json`);
  fs.writeFileSync(f, typeof content === 'string' ? content : JSON.stringify(content));
  return f;
};
const file = (...moments: unknown[]) => write({ format: 'socsim-moments/1', moments });
const errorOf = (f: string) => {
  try {
    readMoments(f);
  } catch (err) {
    return (err as Error).message;
  }
  return 'no error';
};

describe('moments file', () => {
  it('reads a valid file', () => {
    const m = readMoments(file(good, { id: 'never', kind: 'pattern', pattern: 'never_reshared', value: 0.93, se: 0.01, source }, { id: 's', kind: 'summary', table: 'posts', column: 'likes', where: { kind: 'original' }, quantile: 0.9, value: 3, se: 1, source }));
    expect(m.map((x) => x.id)).toEqual(['up', 'never', 's']);
  });

  it.each([
    ['not JSON', '{"format": ', /: not valid JSON \(.*\); the file is \{"format": "socsim-moments\/1", "moments": \[\.\.\.\]\}$/],
    ['another format', { format: 'x', moments: [good] }, /: format: format must be "socsim-moments\/1"$/],
    ['no moments', { format: 'socsim-moments/1', moments: [] }, /: moments: list at least one moment$/],
    ['a misspelt field', [{ ...good, valeu: 1 }], /: moments\[0\]\.valeu is not a field; did you mean value\?$/],
    ['a misspelt source field', [{ ...good, source: { paper: 'p', wher: 'x' } }], /: moments\[0\]\.source\.wher is not a field; did you mean where\?$/],
    ['no source', [{ ...good, source: undefined }], /: moments\[0\]\.source: missing; give it$/],
    ['an unknown kind', [{ ...good, kind: 'effects' }], /: moments\[0\]\.kind: kind must be "effect", "pattern" or "summary"$/],
    ['an unknown contrast', [{ ...good, contrast: 'log' }], /: moments\[0\]\.contrast: .*"difference".*"ratio"/],
    ['a bad versus', [{ ...good, versus: { arms: 'x' } }], /: moments\[0\]\.versus: give \{"arm": ARM\}.*or \{"group": GROUP\}/],
    ['interval and se', [{ ...good, se: 0.1 }], /: moments\[0\]: give the published 95% "interval": \[low, high\] or the standard error "se", one of them$/],
    ['neither interval nor se', [{ ...good, interval: undefined }], /: moments\[0\]: give the published 95% "interval"/],
    ['an empty interval', [{ ...good, interval: [1.4, 1.1] }], /: moments\[0\]\.interval: \[1\.4, 1\.1\] is empty; give \[low, high\] with low < high$/],
    ['a value outside its interval', [{ ...good, value: 2 }], /: moments\[0\]\.value: 2 is outside its interval \[1\.1, 1\.4\]; check the published figures$/],
    ['a negative se', [{ ...good, interval: undefined, se: -1 }], /: moments\[0\]\.se: /],
    ['a group against itself', [{ ...good, versus: { group: 'up' } }], /: moments\[0\]\.versus: group up is compared with itself; name another group$/],
    ['a group versus without group', [{ ...good, group: undefined }], /: moments\[0\]\.versus: a group is compared with group control; give "group" too$/],
    ['a repeated id', [good, good], /: moments\[1\]\.id: up is used twice; give each moment its own id$/],
    ['a bad id', [{ ...good, id: 'a b' }], /: moments\[0\]\.id: ids use letters/],
    ['a summary of metric and table', [{ id: 's', kind: 'summary', metric: 'x', table: 'posts', value: 1, se: 1, source }], /: moments\[0\]: a summary gives "metric" \(a metrics column\) or "table" \(a run table\), one of them$/],
    ['a metric summary without step', [{ id: 's', kind: 'summary', metric: 'x', value: 1, se: 1, source }], /: moments\[0\]: give "step" \(the value at a step\) or "steps": \[FROM, TO\]/],
    ['a metric summary with a quantile', [{ id: 's', kind: 'summary', metric: 'x', step: 3, quantile: 0.5, value: 1, se: 1, source }], /: moments\[0\]\.quantile: belongs to a table summary/],
    ['empty steps', [{ id: 's', kind: 'summary', metric: 'x', steps: [5, 2], value: 1, se: 1, source }], /: moments\[0\]\.steps: \[5, 2\] is empty/],
    ['a table summary without column', [{ id: 's', kind: 'summary', table: 'posts', mean: true, value: 1, se: 1, source }], /: moments\[0\]: a table summary needs "column"$/],
    ['a table summary with two statistics', [{ id: 's', kind: 'summary', table: 'posts', column: 'likes', mean: true, atLeast: 2, value: 1, se: 1, source }], /: moments\[0\]: give one of "quantile" \(0\.\.1\), "atLeast" \(a share of rows\) or "mean": true$/],
    ['a quantile above 1', [{ id: 's', kind: 'summary', table: 'posts', column: 'likes', quantile: 2, value: 1, se: 1, source }], /: moments\[0\]\.quantile: /],
  ])('refuses %s in one line naming the file and the field', (_, content, message) => {
    const f = Array.isArray(content) ? file(...content) : write(content);
    const e = errorOf(f);
    expect(e.startsWith(`${f}: `), e).toBe(true);
    expect(e).toMatch(message);
    expect(e).not.toContain('\n');
  });

  it('refuses a file it cannot read', () => {
    expect(errorOf(path.join(tmp, 'none.json'))).toMatch(/^--moments .*none\.json: cannot read it \(ENOENT\)$/);
  });
});

describe('moment names against the calibration', () => {
  const outcomes = { final_score: metric('x').final() };
  const experiment = { reference: 'herding', arms: ['herding', 'no-herding'], outcomes, patterns: { never_reshared: metric('x').final() } };
  const check = (m: Partial<Moment>, c: Parameters<typeof checkMoments>[1] = experiment) => {
    try {
      checkMoments([{ ...(good as Moment), ...m } as Moment], c, 'm.json');
    } catch (err) {
      return (err as Error).message;
    }
    return 'no error';
  };

  it('knows the arms, outcomes and patterns', () => {
    expect(check({})).toBe('no error');
    expect(check({ versus: { arm: 'no-herdin' } } as Partial<Moment>)).toBe('m.json: moments[0] (up).versus.arm: the experiment has no arm no-herdin; did you mean no-herding?');
    expect(check({ versus: { arm: 'herding' } } as Partial<Moment>)).toBe('m.json: moments[0] (up).versus: arm herding is compared with itself; name another arm');
    expect(check({ outcome: 'final_scor' } as Partial<Moment>)).toBe('m.json: moments[0] (up).outcome: the experiment has no outcome final_scor; did you mean final_score?');
    expect(check({ kind: 'pattern', pattern: 'never_reshare' } as Partial<Moment>)).toBe('m.json: moments[0] (up).pattern: socsim validate has no pattern never_reshare; did you mean never_reshared?');
    expect(check({}, { reference: 'calibration', arms: ['calibration'] })).toMatch(/^m\.json: moments\[0\] \(up\): an effect moment compares an experiment's arms or groups; calibrate an experiment file/);
  });

  it('runs the reference arm and the arms the moments read, in the experiment order', () => {
    const c = { reference: 'b', arms: ['a', 'b', 'c', 'd'], outcomes };
    const moments = [{ ...good, versus: { arm: 'd' } }, { id: 'x', kind: 'summary', arm: 'a', metric: 'm', step: 1, value: 1, se: 1, source }] as Moment[];
    expect(momentArms(moments, c)).toEqual(['b', 'a', 'd']);
  });
});

describe('socsim calibrate --moments', () => {
  it('stops on a bad moments file with one line and exit code 2', () => {
    const f = file({ ...good, valeu: 1 });
    const r = socsim(['calibrate', 'sir', '--moments', f, '--fit', 'beta=0.01..0.1', '--out', path.join(tmp, 'cal')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(`socsim: ${f}: moments[0].valeu is not a field; did you mean value?`);
  });

  it('needs a series or moments to fit, and --match only with --target', () => {
    const none = socsim(['calibrate', 'sir', '--fit', 'beta=0.01..0.1', '--out', path.join(tmp, 'cal')]);
    expect(none.code).toBe(2);
    expect(none.stderr.trim()).toBe('socsim: give --target FILE.csv (with --match COLUMN) or --moments FILE.json, or both: what the calibration fits');
    const match = socsim(['calibrate', 'sir', '--moments', file(good), '--match', 'infectious', '--fit', 'beta=0.01..0.1', '--out', path.join(tmp, 'cal')]);
    expect(match.code).toBe(2);
    expect(match.stderr.trim()).toMatch(/^socsim: --match names a column of the --target series/);
    const effect = socsim(['calibrate', 'sir', '--moments', file(good), '--fit', 'beta=0.01..0.1', '--out', path.join(tmp, 'cal')]);
    expect(effect.code).toBe(2);
    expect(effect.stderr.trim()).toMatch(/moments\[0\] \(up\): an effect moment compares an experiment's arms or groups/);
  });
});
