/**
 * Classic-model scenario options end to end: seed fractions, fixed thresholds, initial opinion
 * distributions, the initial-state metrics row, and parameter errors that name the field.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../../runner/run/loadScenario.ts';
import { runScenario } from '../../runner/run/runScenario.ts';
import { synthesizePopulation } from '../../population/synthesize.ts';
import { readArrowFile } from '../../sim-core/io/arrowFile.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-classic-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function run(name: string, params: Record<string, unknown>, o: { agents?: number; steps?: number; seed?: number } = {}) {
  const { scenario } = await loadScenario(name);
  const out = path.join(tmp, `${name}-${JSON.stringify(params).replace(/[^a-z0-9]+/gi, '_')}-${o.agents ?? 1000}-${o.steps ?? 2}-${o.seed ?? 1}`);
  const { manifest } = await runScenario(scenario, { agents: o.agents ?? 1000, steps: o.steps ?? 2, seed: o.seed ?? 1, params, out });
  const metrics = readArrowFile(path.join(out, 'metrics.arrow'));
  const column = (name: string) => Array.from(metrics.getChild(name)!.toArray() as ArrayLike<number>, Number);
  const snapshot = (step: number) => readArrowFile(path.join(out, `agents/step-${String(step).padStart(6, '0')}.arrow`));
  return { manifest, metrics, column, snapshot };
}

async function paramError(name: string, params: Record<string, unknown>): Promise<string> {
  const { scenario } = await loadScenario(name);
  const err = await runScenario(scenario, { agents: 100, steps: 1, params, out: path.join(tmp, 'bad') }).then(
    () => undefined,
    (e: Error) => e,
  );
  expect(err, JSON.stringify(params)).toBeInstanceOf(Error);
  expect(err!.constructor.name).toBe('InputError');
  return err!.message;
}

describe('the initial-state metrics row', () => {
  it('SIR with seedFraction 0.1 of 1000 agents: row step 0 holds 100 infectious, matching snapshot 0', async () => {
    const r = await run('sir', { seedFraction: 0.1 });
    expect(r.metrics.numRows).toBe(3);
    expect(r.column('step')).toEqual([0, 1, 2]);
    expect(r.column('time')).toEqual([0, 3600, 7200]);
    expect([r.column('susceptible')[0], r.column('infectious')[0], r.column('recovered')[0], r.column('new_infections')[0]]).toEqual([900, 100, 0, 0]);
    const state = r.snapshot(0).getChild('state')!.toArray() as string[];
    expect(state.filter((s) => s === 'infectious').length).toBe(100);
    // Later rows are what they always were: one per step, after the step.
    expect(r.column('new_infections')[1]).toBeGreaterThan(0);
    expect(r.manifest.steps_completed).toBe(2);
  });

  it('IC: ic_fraction in row 0 is the seeded fraction; opinion models report the starting statistics', async () => {
    const ic = await run('independent-cascade', { seedFraction: 0.05 });
    expect(ic.column('ic_fraction')[0]).toBe(0.05);
    expect(ic.column('ic_active')[0]).toBe(50);
    expect(ic.column('ic_new')[0]).toBe(0);
    const hk = await run('hegselmann-krause', {});
    const x = Array.from(hk.snapshot(0).getChild('opinion')!.toArray() as Float32Array);
    expect(hk.column('opinion_mean')[0]).toBeCloseTo(x.reduce((a, b) => a + b, 0) / x.length, 9);
  });
});

describe('scenario options', () => {
  it('linear-threshold: a fixed threshold reaches every node; "uniform" is the default', async () => {
    const fixed = await run('linear-threshold', { threshold: 0.25, seedCount: 10 });
    expect(new Set(fixed.snapshot(0).getChild('threshold')!.toArray() as Float32Array)).toEqual(new Set([0.25]));
    expect(fixed.column('lt_active')[0]).toBe(10);
    expect(fixed.manifest.parameters.threshold).toBe(0.25);
    const uniform = await run('linear-threshold', { seedCount: 10 });
    expect(new Set(uniform.snapshot(0).getChild('threshold')!.toArray() as Float32Array).size).toBeGreaterThan(900);
    expect(uniform.manifest.parameters.threshold).toBe('uniform');
  });

  it('deffuant starts uniform on [-1, 1] by default (mean and variance within 4 SE over 3 seeds); leanings keeps the population mix', async () => {
    const n = 3000;
    for (const seed of [1, 2, 3]) {
      const r = await run('deffuant', {}, { agents: n, seed, steps: 1 });
      const x = Array.from(r.snapshot(0).getChild('opinion')!.toArray() as Float32Array);
      const mean = x.reduce((a, b) => a + b, 0) / n;
      expect(Math.abs(mean), `seed ${seed}`).toBeLessThan(4 * Math.sqrt(1 / 3 / n));
      const v = x.reduce((a, b) => a + (b - mean) ** 2, 0) / n;
      // Var of U[-1, 1] is 1/3; the variance of the sample variance is (1/5 - 1/9) / n.
      expect(Math.abs(v - 1 / 3), `seed ${seed}`).toBeLessThan(4 * Math.sqrt((1 / 5 - 1 / 9) / n));
    }
    const mix = await run('deffuant', { initial: { kind: 'leanings' } }, { agents: n, steps: 1 });
    const pop = synthesizePopulation(n, 1).agents.columns.opinion as Float32Array;
    expect(Array.from(mix.snapshot(0).getChild('opinion')!.toArray() as Float32Array)).toEqual(Array.from(pop));
    const narrow = await run('hegselmann-krause', { initial: { lo: 0, hi: 0.5 } }, { agents: n, steps: 1 });
    const y = Array.from(narrow.snapshot(0).getChild('opinion')!.toArray() as Float32Array);
    expect(Math.min(...y)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...y)).toBeLessThanOrEqual(0.5);
    expect(narrow.manifest.parameters.initial).toEqual({ kind: 'uniform', lo: 0, hi: 0.5 });
  });

  it('deffuant runs the pairwise scheme unless told otherwise, and says so in the manifest; HK records its options', async () => {
    const r = await run('deffuant', {}, { agents: 500, steps: 3 });
    expect(r.manifest.parameters.scheme).toBe('pairwise');
    // Pairwise moves keep the mean (to float32 rounding); the synchronous one-sided moves do not.
    const mean = r.column('opinion_mean');
    expect(Math.abs(mean[3] - mean[0])).toBeLessThan(3 * 500 * 2 ** -24 / 500);
    const s = await run('deffuant', { scheme: 'synchronous' }, { agents: 500, steps: 3 });
    expect(Math.abs(s.column('opinion_mean')[3] - s.column('opinion_mean')[0])).toBeGreaterThan(1e-4);
    const hk = await run('hegselmann-krause', { includeSelf: false, strict: true }, { agents: 500, steps: 1 });
    expect([hk.manifest.parameters.includeSelf, hk.manifest.parameters.strict]).toEqual([false, true]);
  });

  it('initial opinions from a file and from an agent column, for every opinion model', async () => {
    const file = path.join(tmp, 'opinions.txt');
    const x = Array.from({ length: 300 }, (_, i) => ((i % 7) - 3) / 4);
    fs.writeFileSync(file, `# one per agent\n${x.join('\n')}\n`);
    for (const name of ['degroot', 'deffuant', 'hegselmann-krause']) {
      const r = await run(name, { initial: { kind: 'file', path: file } }, { agents: 300, steps: 1 });
      expect(Array.from(r.snapshot(0).getChild('opinion')!.toArray() as Float32Array), name).toEqual(x);
    }
    const c = await run('hegselmann-krause', { initial: { kind: 'column', column: 'leaning', values: [-1, -0.5, 0, 0.5, 1] } }, { agents: 300, steps: 1 });
    const leaning = synthesizePopulation(300, 1).agents.columns.leaning as Uint8Array;
    expect(Array.from(c.snapshot(0).getChild('opinion')!.toArray() as Float32Array)).toEqual(Array.from(leaning, (l) => [-1, -0.5, 0, 0.5, 1][l]));
  });

  it('voter shares set the starting mix', async () => {
    const r = await run('voter', { states: 3, shares: [1, 0, 1] }, { steps: 1 });
    expect(r.column('vote_1')[0]).toBe(0);
    expect(r.column('vote_0')[0] + r.column('vote_2')[0]).toBe(1000);
  });
});

describe('bad options are input errors that name the field', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['independent-cascade', { seedCount: 5, seedFraction: 0.1 }, /parameter seedFraction: give seedCount or seedFraction, not both/],
    ['sir', { seedFraction: 0 }, /parameter seedFraction: .*0/],
    ['sir', { seedFraction: 1.5 }, /parameter seedFraction: .*1/],
    ['opinion-cascade', { seedCount: 5, seedFraction: 0.1 }, /parameter seedFraction/],
    ['linear-threshold', { threshold: 1.5 }, /parameter threshold: .*1/],
    ['linear-threshold', { threshold: 'fixed' }, /parameter threshold: must be "uniform" or a number in \[0, 1\]/],
    ['deffuant', { initial: { kind: 'normal' } }, /parameter initial\.kind: .*uniform.*leanings/],
    ['deffuant', { initial: { lo: -2 } }, /parameter initial\.lo/],
    ['hegselmann-krause', { initial: { lo: 0.5, hi: 0 } }, /parameter initial\.hi: must be >= lo/],
    ['hegselmann-krause', { initial: { kind: 'leanings', lo: 0 } }, /parameter initial\.lo: applies to kind "uniform" only/],
    ['degroot', { initial: { mean: 0 } }, /unknown parameter initial\.mean; known under initial: kind, lo, hi/],
    ['voter', { states: 3, shares: [1, 1] }, /parameter shares: needs 3 weights/],
    ['deffuant', { scheme: 'async' }, /parameter scheme: .*"pairwise"\|"synchronous"/],
    ['deffuant', { pairs: 10 }, /unknown parameter pairs/],
    ['hegselmann-krause', { includeSelf: 'no' }, /parameter includeSelf: .*boolean/],
    ['hegselmann-krause', { strict: 1 }, /parameter strict: .*boolean/],
    ['degroot', { initial: { kind: 'file' } }, /parameter initial\.path: kind "file" needs the path of an opinions file/],
    ['deffuant', { initial: { kind: 'column', column: 'leaning', path: 'x.txt' } }, /parameter initial\.path: applies to kind "file" only/],
  ];
  for (const [name, params, re] of cases) {
    it(`${name} ${JSON.stringify(params)}`, async () => {
      expect(await paramError(name, params)).toMatch(re);
    });
  }

  it('a bad opinions file: the CLI exits 2 with one line naming the file and line', () => {
    const bin = fileURLToPath(new URL('../../bin/socsim.mjs', import.meta.url));
    const file = path.join(tmp, 'bad-opinions.txt');
    fs.writeFileSync(file, '0.5\n0.25\n1.5\n');
    const r = spawnSync(process.execPath, [bin, 'run', 'deffuant', '--agents', '10', '--set', 'initial.kind=file', '--set', `initial.path=${file}`, '--out', path.join(tmp, 'cli-file'), '--quiet'], { encoding: 'utf8', timeout: 600_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([`socsim: initial opinions file ${file} line 3: 1.5 is outside [-1, 1]`]);
  });

  it('the CLI exits 2 with the field named', () => {
    const bin = fileURLToPath(new URL('../../bin/socsim.mjs', import.meta.url));
    const r = spawnSync(process.execPath, [bin, 'run', 'independent-cascade', '--set', 'seedCount=5', '--set', 'seedFraction=0.1', '--out', path.join(tmp, 'cli')], { encoding: 'utf8', timeout: 600_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/parameter seedFraction: give seedCount or seedFraction, not both/);
  });
});
