/**
 * The prosocial platform options (hidden counts, out-partisan boost, downranked dominant voices)
 * switched on by setParam on a real run: nothing changes before the step, and each acts where it
 * should after it. The bridging ranker on both backends is in tests/runner/backends.
 */
import { describe, expect, it } from 'vitest';
import { col, INJECT, read, refused, rows, run, runsDir } from './runs.ts';

const tmp = runsDir('prosocial');
const AT = 3;
const at = (param: string, value: number | string) => ({ kind: 'setParam', step: AT, param, value });

/** Metrics rows and events (as JSON) before step AT. */
function before(dir: string) {
  const events = rows(read(dir, 'events.arrow')).filter((e) => (e.step as number) < AT);
  return { metrics: rows(read(dir, 'metrics.arrow')).slice(0, AT), events: JSON.stringify(events) };
}
const sum = (dir: string, metric: string, from = AT) => rows(read(dir, 'metrics.arrow')).slice(from).reduce((t, r) => t + (r[metric] as number), 0);

describe('prosocial options', () => {
  const base = run(tmp, 'base', [INJECT]);

  it('setParam refuses a value out of range, in one line naming the field', () => {
    refused(tmp, [at('platform.outPartisan', 0)], /interventions\.0\.value: platform\.outPartisan = 0: /);
    refused(tmp, [at('platform.counts', 'off')], /interventions\.0\.value: platform\.counts = "off": /);
    refused(tmp, [at('platform.dominant.factor', 2)], /interventions\.0\.value: platform\.dominant\.factor = 2: /);
  });

  it('platform.counts hidden: from its step, fewer likes and reactions (no social proof, no herding), the same before', () => {
    const dir = run(tmp, 'hidden', [INJECT, at('platform.counts', 'hidden')]);
    expect(before(dir)).toEqual(before(base));
    // Social proof and herding only ever raise these probabilities (platform/kernels.ts act).
    const reactions = (d: string) => ['actions_like', 'actions_repost', 'actions_quote', 'actions_comment'].reduce((t, m) => t + sum(d, m), 0);
    expect(sum(dir, 'actions_like')).toBeLessThan(sum(base, 'actions_like'));
    expect(reactions(dir)).toBeLessThan(reactions(base));
    // The counts themselves are still kept.
    expect((col(read(dir, 'posts.arrow'), 'likes') as number[]).some((x) => x > 0)).toBe(true);
  });

  it('platform.outPartisan 4: from its step, feeds hold content farther from the reader, the same before', () => {
    const dir = run(tmp, 'boost', [INJECT, at('platform.outPartisan', 4)]);
    expect(before(dir)).toEqual(before(base));
    const distance = (d: string) => rows(read(d, 'metrics.arrow')).slice(AT).map((r) => r.feed_stance_distance as number);
    const [boosted, plain] = [distance(dir), distance(base)];
    boosted.forEach((x, i) => expect(x, `step ${AT + i}`).toBeGreaterThan(plain[i]));
  });

  it('platform.dominant.factor 0: from its step, the most-followed accounts\' posts are seen less, the same before', () => {
    const dir = run(tmp, 'dominant', [INJECT, at('platform.dominant.share', 0.05), at('platform.dominant.factor', 0)]);
    expect(before(dir)).toEqual(before(base));
    // Followers at the start (graph.arrow: source follows target): the top 2% then stay among the top 5% demoted.
    const g = read(base, 'graph.arrow');
    const followers = new Map<number, number>();
    for (const t of col(g, 'target') as number[]) followers.set(t, (followers.get(t) ?? 0) + 1);
    const top = new Set([...followers.entries()].sort((a, b) => b[1] - a[1]).slice(0, 120).map(([v]) => v));
    /** Impressions per post of the top accounts' original posts made from step AT on, and of the rest. */
    const seen = (d: string) => {
      const p = read(d, 'posts.arrow');
      const [author, step, kind, imp] = ['author', 'step', 'kind', 'impressions'].map((c) => col(p, c));
      const acc = { top: [0, 0], rest: [0, 0] };
      author.forEach((a, i) => {
        if ((step[i] as number) < AT || kind[i] !== 'original') return;
        const x = top.has(a as number) ? acc.top : acc.rest;
        x[0] += imp[i] as number;
        x[1]++;
      });
      return { top: acc.top[0] / acc.top[1], rest: acc.rest[0] / acc.rest[1] };
    };
    const [demoted, plain] = [seen(dir), seen(base)];
    expect(demoted.top).toBeLessThan(plain.top * 0.8);
    expect(demoted.rest).toBeGreaterThan(plain.rest);
  });
});
