/**
 * The phenomena library (experiments/*.ts) at small scale: each experiment runs as a user would run
 * it (fewer agents, hours and seeds), and the effect the paper reports must appear with its sign,
 * its paired 95% interval excluding zero. Where the literature found no effect (down-votes after
 * correction, polarization under a chronological feed), nothing is asserted about the sign: the
 * numbers are published in docs/validation.md whatever they are. Where a mechanism is switched off in a
 * control arm, the effect must vanish.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { socsim, tempDir } from '../runner/cliHelpers.ts';

const tmp = tempDir('socsim-phen-');

interface Effect {
  arm: string;
  group: string;
  outcome: string;
  n: number;
  mean: number;
  diff: number;
  diff_ci_low: number;
  diff_ci_high: number;
}

function experiment(name: string, args: string[], dir = name): Effect[] {
  const out = path.join(tmp, dir);
  // Up to 9 minutes (the tests allow 10): 32 runs on CI's 2 cores take about 2.5 on a quiet
  // machine, and have passed 5 under heavy load.
  const r = socsim(['experiment', `experiments/${name}.ts`, '--out', out, '--jobs', '2', '--quiet', ...args], undefined, 540_000);
  expect(r.code, r.stderr).toBe(0);
  const t = tableFromIPC(fs.readFileSync(path.join(out, 'effects.arrow')));
  return t.toArray().map((x) => x.toJSON() as unknown as Effect);
}

const find = (rows: Effect[], arm: string, outcome: string, group = '') => {
  const e = rows.find((r) => r.arm === arm && r.outcome === outcome && r.group === group);
  if (!e) throw new Error(`no effect row ${arm}/${group}/${outcome}`);
  return e;
};
const positive = (e: Effect) => expect(e.diff_ci_low, JSON.stringify(e)).toBeGreaterThan(0);
const negative = (e: Effect) => expect(e.diff_ci_high, JSON.stringify(e)).toBeLessThan(0);
/** Identical to the reference, seed by seed: nothing but the switched-off mechanism differed. */
const none = (e: Effect) => expect([e.diff, e.diff_ci_low, e.diff_ci_high], JSON.stringify(e)).toEqual([0, 0, 0]);

describe('phenomena', () => {
  it('herding (Muchnik et al. 2013): an up-vote at creation raises the score others give', () => {
    // The herding arm alone (its up and control groups; the no-herding arm is not asserted here):
    // on 8 seeds the difference was 0.62 [0.54, 0.69], so 4 seeds resolve it.
    const e = experiment('herding', ['--agents', '10000', '--hours', '36', '--seeds', '4', '--arms', 'herding']);
    positive(find(e, 'herding', 'final_score', 'up'));
    // positive_share (the share of up-votes among all votes a post got): reported, not asserted.
    // Muchnik et al.'s positivity effect is on the first vote; over all votes it is diluted here
    // because every post with one organic up-vote gets the same herding (docs/validation.md).
    expect(Number.isFinite(find(e, 'herding', 'positive_share', 'up').diff)).toBe(true);
  }, 600_000);

  it('misinformation (Vosoughi et al. 2018): false stories reach more people, deeper and broader; not without the novelty mechanism', () => {
    // 16 seeds: with reshare rates calibrated to Twitter's (most posts are never reshared), a story
    // at 10,000 agents gets a few sharers, and its depth effect needs them to be detected.
    const e = experiment('misinformation', ['--agents', '10000', '--hours', '36', '--seeds', '16', '--arms', 'true,false']);
    for (const o of ['reach', 'depth', 'max_breadth']) positive(find(e, 'false', o));
    // Veracity alone changes nothing: without novelty the runs are byte-for-byte the `true` runs.
    // Any leak of the label would show in every seed, so two suffice.
    const control = experiment('misinformation', ['--agents', '10000', '--hours', '36', '--seeds', '2', '--arms', 'true,false-no-novelty'], 'misinformation-control');
    for (const o of ['reach', 'depth', 'max_breadth']) none(find(control, 'false-no-novelty', o));
  }, 600_000);

  it('fact-check timing: a label cuts a false story\'s sharing, the more the earlier it comes', () => {
    const e = experiment('fact-check-timing', ['--agents', '10000', '--hours', '36', '--seeds', '4']);
    // Labels act on sharing (Martel & Rand 2024); reach, mostly the story's own impressions now that
    // reshares are rare, is reported, not asserted (docs/validation.md). At this size only the earliest label's
    // effect is resolved; later ones are smaller.
    const d = ['label-h1', 'label-h6', 'label-h12', 'label-h24'].map((a) => find(e, a, 'false_sharers'));
    negative(d[0]);
    for (let i = 1; i < d.length; i++) expect(d[i].diff).toBeGreaterThanOrEqual(d[i - 1].diff);
    expect(d[3].diff).toBeLessThanOrEqual(0);
  }, 600_000);

  it('polarization: the interest ranker narrows exposure against random feeds', () => {
    const e = experiment('polarization', ['--agents', '10000', '--hours', '36', '--seeds', '4', '--arms', 'random,x-interest']);
    negative(find(e, 'x-interest', 'exposure_diversity'));
    positive(find(e, 'x-interest', 'echo_chamber_index'));
    // Polarization itself: reported, not asserted (see docs/validation.md).
    expect(Number.isFinite(find(e, 'x-interest', 'polarization').diff)).toBe(true);
  }, 600_000);
});
