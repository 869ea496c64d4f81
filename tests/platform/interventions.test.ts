/**
 * Each intervention kind on real social-feed runs (6,000 agents, a few hours): what it must do to
 * the posts, accounts and actions, read back from the run's files, and the arms-share-seeds
 * property (common random numbers): before an intervention's step, a run with it and a run
 * without it are identical.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tableFromIPC, type Table } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { socsim, tempDir } from '../runner/cliHelpers.ts';
import { stepOf } from '../../platform/interventions/time.ts';

const tmp = tempDir('socsim-iv-');
const BASE = ['run', 'social-feed', '--agents', '6000', '--steps', '8', '--seed', '7', '--events', '--quiet', '--set', 'platform.startHour=9'];

function run(name: string, interventions: unknown[], extra: string[] = []): string {
  const dir = path.join(tmp, name);
  const r = socsim([...BASE, ...extra, '--out', dir, '--set', `interventions=${JSON.stringify(interventions)}`]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return dir;
}
const read = (dir: string, file: string): Table => tableFromIPC(fs.readFileSync(path.join(dir, file)));
const col = (t: Table, name: string) => Array.from(t.getChild(name)!.toArray() as ArrayLike<unknown>);
function rows(t: Table): Record<string, unknown>[] {
  return t.toArray().map((r) => r.toJSON() as Record<string, unknown>);
}

/** Events (agent, action, target) at or after `step`. */
function eventsFrom(dir: string, step: number) {
  return rows(read(dir, 'events.arrow')).filter((e) => (e.step as number) >= step);
}

const INJECT = { kind: 'inject', step: 0, count: 12, stance: 0.6, veracity: 'false', novelty: 1.2, tag: 'rumour', authors: { topFollowers: 100 } };
const RESHARES = new Set(['like', 'repost', 'quote']);

describe('interventions', () => {
  const base = run('base', [INJECT]);

  it('inject: one post per chosen author, with the given content, followed in stories.arrow', () => {
    const stories = rows(read(base, 'stories.arrow'));
    expect(stories).toHaveLength(12);
    const posts = read(base, 'posts.arrow');
    const ids = col(posts, 'id') as number[];
    for (const s of stories) {
      const r = ids.indexOf(s.id as number);
      expect(col(posts, 'tag')[r]).toBe('rumour');
      expect(col(posts, 'veracity')[r]).toBe('false');
      expect(col(posts, 'novelty')[r]).toBeCloseTo(1.2, 6);
      expect(col(posts, 'stance')[r]).toBeCloseTo(0.6, 6);
      expect(col(posts, 'step')[r]).toBe(0);
      expect(col(posts, 'kind')[r]).toBe('original');
      expect(s.reach as number).toBeGreaterThan(0);
      expect(s.sharers as number).toBeGreaterThanOrEqual(1);
    }
    // Authors are among the 100 most-followed accounts of the starting graph.
    const g = read(base, 'graph.arrow');
    const followers = new Map<number, number>();
    for (const t of col(g, 'target') as number[]) followers.set(t, (followers.get(t) ?? 0) + 1);
    const top = [...followers].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 100).map(([v]) => v);
    for (const s of stories) expect(top).toContain(s.author);
    // Reposts and quotes of a tagged post carry the tag and veracity.
    const kinds = col(posts, 'kind');
    const tags = col(posts, 'tag');
    const reshared = kinds.map((k, i) => [k, i] as const).filter(([k, i]) => (k === 'repost' || k === 'quote') && tags[i] === 'rumour');
    expect(reshared.length).toBeGreaterThan(0);
    for (const [, i] of reshared) expect(col(posts, 'veracity')[i]).toBe('false');
    expect(rows(read(base, 'interventions.arrow'))).toEqual([{ step: 0, index: 0, name: 'inject-0', kind: 'inject', posts: 12, agents: 12 }]);
  });

  it('label with multipliers 0: nobody likes or reshares the story from that step on, but did before', () => {
    const dir = run('label', [INJECT, { kind: 'label', step: 3, posts: { tag: 'rumour' }, like: 0, reshare: 0 }]);
    const posts = read(dir, 'posts.arrow');
    const tagged = new Set((col(posts, 'id') as number[]).filter((_, i) => col(posts, 'tag')[i] === 'rumour'));
    const hits = (from: number, to: number) => eventsFrom(dir, from).filter((e) => (e.step as number) < to && RESHARES.has(e.action as string) && tagged.has(e.target as number)).length;
    expect(hits(0, 3)).toBeGreaterThan(0);
    expect(hits(3, 99)).toBe(0);
    // Every tagged post existing at step 3 has the fact-check flag (2), as have later reshares.
    const flags = col(posts, 'flags') as number[];
    (col(posts, 'id') as number[]).forEach((id, i) => {
      if (tagged.has(id) && (col(posts, 'kind')[i] !== 'comment')) expect(flags[i] & 2).toBe(2);
    });
    expect(rows(read(dir, 'interventions.arrow'))[1]).toMatchObject({ step: 3, kind: 'label', posts: tagged.size });
  });

  it('remove: removed posts get no action from that step on', () => {
    const dir = run('remove', [INJECT, { kind: 'remove', step: 2, posts: { tag: 'rumour' } }]);
    const posts = read(dir, 'posts.arrow');
    const removed = new Set((col(posts, 'id') as number[]).filter((_, i) => ((col(posts, 'flags')[i] as number) & 8) !== 0));
    expect(removed.size).toBeGreaterThan(0);
    expect(eventsFrom(dir, 2).filter((e) => removed.has(e.target as number) && e.action !== 'mute' && e.action !== 'unfollow' && e.action !== 'follow')).toEqual([]);
    expect(eventsFrom(base, 2).filter((e) => removed.has(e.target as number) && RESHARES.has(e.action as string)).length).toBeGreaterThan(0);
  });

  it('suspend: suspended accounts do nothing from that step on; runs agree before it', () => {
    const agents = Array.from({ length: 300 }, (_, i) => i * 20);
    const dir = run('suspend', [INJECT, { kind: 'suspend', step: 4, agents: { agents } }]);
    const set = new Set(agents);
    expect(eventsFrom(dir, 4).filter((e) => set.has(e.agent as number))).toEqual([]);
    expect(eventsFrom(base, 4).filter((e) => set.has(e.agent as number)).length).toBeGreaterThan(0);
    expect(rows(read(dir, 'interventions.arrow'))[1]).toMatchObject({ step: 4, kind: 'suspend', agents: 300 });
    // Common random numbers: everything before step 4 is the same as without the suspension.
    const before = (d: string) => rows(read(d, 'metrics.arrow')).filter((m) => (m.step as number) < 4);
    expect(before(dir)).toEqual(before(base));
    expect(rows(read(dir, 'metrics.arrow'))[5]).not.toEqual(rows(read(base, 'metrics.arrow'))[5]);
  });

  it('downrank to 0 under chronological ranking: the story (reshares included) gets fewer impressions, but is not removed', () => {
    // Injected at step 3, when the platform has other content: at step 0 the story is all there is
    // to show, whatever its rank. The downrank applies from the same step (list order).
    const extra = ['--set', 'platform.ranker=chronological'];
    const inject = { ...INJECT, step: 3 };
    const plain = run('chrono', [inject], extra);
    const down = run('downrank', [inject, { kind: 'downrank', step: 3, posts: { tag: 'rumour' }, factor: 0 }], extra);
    const impressions = (d: string) => {
      const p = read(d, 'posts.arrow');
      return (col(p, 'impressions') as number[]).reduce((t, x, i) => t + (col(p, 'tag')[i] === 'rumour' ? x : 0), 0);
    };
    // A score multiplier, not a removal: users with fewer candidates than feed slots still see it.
    expect(impressions(down)).toBeLessThan(impressions(plain) * 0.9);
    expect(impressions(down)).toBeGreaterThan(0);
    const p = read(down, 'posts.arrow');
    const rank = col(p, 'rank') as number[];
    col(p, 'tag').forEach((t, i) => {
      if (t === 'rumour' && col(p, 'kind')[i] !== 'comment') expect(rank[i]).toBe(0);
      if (t !== 'rumour') expect(rank[i]).toBe(1);
    });
  });

  it('setRanker and setParam take effect at their step and not before', () => {
    const dir = run('set', [
      INJECT,
      { kind: 'setParam', step: 3, param: 'behaviour.post', value: 0 },
      { kind: 'setParam', step: 5, param: 'platform.inNetwork', value: 0 },
      { kind: 'setRanker', step: 5, ranker: 'random' },
    ]);
    const m = rows(read(dir, 'metrics.arrow'));
    const b = rows(read(base, 'metrics.arrow'));
    expect(m.slice(0, 3).map((x) => x.actions_post)).toEqual(b.slice(0, 3).map((x) => x.actions_post));
    for (const x of m.slice(3)) expect(x.actions_post).toBe(0);
    for (const x of m.slice(5)) expect(x.in_network_share).toBe(0);
    expect(m[4].in_network_share as number).toBeGreaterThan(0);
    expect(rows(read(dir, 'interventions.arrow')).map((r) => [r.step, r.kind])).toEqual([[0, 'inject'], [3, 'setParam'], [5, 'setParam'], [5, 'setRanker']]);
  });

  it('assign: new originals join the groups at their shares, carry the vote, and the log counts them', () => {
    const dir = run('assign', [{ kind: 'assign', step: 2, groups: { up: { share: 0.25, vote: 1 }, down: { share: 0.25, vote: -1 }, control: { share: 0.5 } } }]);
    const p = read(dir, 'posts.arrow');
    const group = col(p, 'group');
    const vote = col(p, 'treat_vote');
    const kind = col(p, 'kind');
    const step = col(p, 'step') as number[];
    const counts: Record<string, number> = {};
    group.forEach((g, i) => {
      if (step[i] < 2 || kind[i] !== 'original') expect(g).toBe('');
      else counts[g as string] = (counts[g as string] ?? 0) + 1;
      expect(vote[i]).toBe(g === 'up' ? 1 : g === 'down' ? -1 : 0);
    });
    const n = Object.values(counts).reduce((a, b) => a + b, 0);
    expect(n).toBeGreaterThan(300);
    // Binomial shares within 5 standard errors.
    for (const [g, share] of [['up', 0.25], ['down', 0.25], ['control', 0.5]] as const) {
      expect(Math.abs(counts[g] / n - share)).toBeLessThan(5 * Math.sqrt((share * (1 - share)) / n));
    }
    const log = rows(read(dir, 'interventions.arrow'));
    expect(log.every((r) => r.kind === 'assign' && (r.step as number) >= 2)).toBe(true);
    expect(log.reduce((t, r) => t + (r.posts as number), 0)).toBe(n);
  });

  it('bad interventions are refused before the run with one line naming the field (exit 2)', () => {
    const bad = (iv: unknown, pattern: RegExp) => {
      const r = socsim([...BASE, '--out', path.join(tmp, 'bad'), '--force', '--set', `interventions=${JSON.stringify([iv])}`]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(pattern);
    };
    bad({ kind: 'label', step: 1, posts: { tags: 'x' } }, /unknown parameter interventions\.0\.posts\.tags; did you mean interventions\.0\.posts\.tag\?/);
    bad({ kind: 'label', hour: 1, step: 1, posts: {} }, /interventions\.0\.hour: give the time as exactly one of hour or step/);
    bad({ kind: 'remove', step: 1, posts: { tag: 'nope' } }, /no inject has tag "nope"/);
    bad({ kind: 'suspend', step: 1, agents: { agents: [6000] } }, /interventions\.0\.agents: agent id 6000 is not below the number of agents \(6000\)/);
    bad({ kind: 'setParam', step: 1, param: 'platform.inNetwork', value: 99 }, /interventions\.0\.value: platform\.inNetwork = 99: in-network count 99 is larger than feedSize/);
    bad({ kind: 'explode', step: 1 }, /interventions\.0\.kind/);
  });

  it('hour is the first step starting at or after it', () => {
    expect(stepOf({ hour: 0 }, 3600)).toBe(0);
    expect(stepOf({ hour: 1 }, 3600)).toBe(1);
    expect(stepOf({ hour: 1.5 }, 3600)).toBe(2);
    expect(stepOf({ hour: 1 }, 180)).toBe(20);
    expect(stepOf({ step: 7 }, 3600)).toBe(7);
  });
});
