import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tableFromIPC } from '@uwdata/flechette';
import { socsim, tempDir } from './cliHelpers.ts';

const tmp = tempDir('socsim-social-');

const arrowFiles = (dir: string) => (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.arrow')).sort();

describe('socsim run social-feed', () => {
  // Byte-identity across thread counts is tests/runner/determinism.test.ts (sizes that give several
  // chunks); this run checks what the files hold, over 30 steps with three follow rebuilds.
  it('writes posts, events, cascades, metrics and both graphs; posts are complete and in id order', () => {
    const a = socsim(['run', 'social-feed', '--agents', '3000', '--steps', '30', '--seed', '11', '--events', '--quiet', '--set', 'platform.rebuildEvery=10', '--out', path.join(tmp, 't1')]);
    expect(a.code, a.stderr).toBe(0);
    const files = arrowFiles(path.join(tmp, 't1'));
    for (const f of ['posts.arrow', 'events.arrow', 'cascades.arrow', 'conversations.arrow', 'metrics.arrow', 'graph.arrow', 'graph-end.arrow']) expect(files).toContain(f);
    // posts.arrow holds every post ever made, in id order, with dictionary-encoded kinds.
    const posts = tableFromIPC(fs.readFileSync(path.join(tmp, 't1/posts.arrow')));
    const metrics = tableFromIPC(fs.readFileSync(path.join(tmp, 't1/metrics.arrow')));
    const made = ['posts_original', 'posts_repost', 'posts_quote', 'posts_comment']
      .map((c) => (metrics.getChild(c)!.toArray() as Int32Array).reduce((s, v) => s + v, 0))
      .reduce((s, v) => s + v, 0);
    expect(posts.numRows).toBe(made);
    const ids = posts.getChild('id')!.toArray() as Int32Array;
    for (let i = 0; i < ids.length; i++) if (ids[i] !== i) throw new Error(`post ${i} has id ${ids[i]}`);
    expect(new Set(posts.getChild('kind')!.toArray() as string[])).toEqual(new Set(['original', 'repost', 'quote', 'comment']));
    // Every event refers to a real agent; follows changed the graph.
    const events = tableFromIPC(fs.readFileSync(path.join(tmp, 't1/events.arrow')));
    expect(events.numRows).toBeGreaterThan(1000);
    const m = JSON.parse(fs.readFileSync(path.join(tmp, 't1/manifest.json'), 'utf8'));
    expect(m.files.graph_end).toBe('graph-end.arrow');
    expect(Object.keys(m.phase_wall_ms)).toEqual(['intervene', 'activate', 'recommend', 'act', 'apply', 'update', 'maintain', 'opinion-stats']);
  });

  it('3-minute steps work (OASIS used them)', () => {
    const out = path.join(tmp, 'short');
    const r = socsim(['run', 'social-feed', '--agents', '3000', '--steps', '20', '--step-seconds', '180', '--quiet', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const metrics = tableFromIPC(fs.readFileSync(path.join(out, 'metrics.arrow')));
    expect(Array.from(metrics.getChild('time')!.toArray() as Float64Array).slice(0, 3)).toEqual([180, 360, 540]); // the states after 1, 2 and 3 steps
  });

  it('the population is a parameter: a heavier activity tail reaches the agents', () => {
    const activity = (set: string[], dir: string) => {
      const out = path.join(tmp, dir);
      const r = socsim(['run', 'social-feed', '--agents', '3000', '--steps', '1', '--quiet', ...set, '--out', out]);
      expect(r.code, r.stderr).toBe(0);
      const a = tableFromIPC(fs.readFileSync(path.join(out, 'agents/step-000000.arrow')));
      return Array.from(a.getChild('activity')!.toArray() as Float32Array);
    };
    const base = activity([], 'pop-default');
    const heavy = activity(['--set', 'population.activityShape=1.05'], 'pop-heavy');
    // Same capped mean (0.065); a Pareto shape nearer 1 puts more agents at the cap (4) and lowers the median.
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
    expect(median(heavy)).toBeLessThan(median(base) * 0.8);
    expect(heavy.filter((x) => x === 4).length).toBeGreaterThan(base.filter((x) => x === 4).length);
  });

  const bad: Array<[string, string[], RegExp]> = [
    ['negative feed size', ['--set', 'platform.feedSize=-1'], /parameter platform\.feedSize: .*--set platform\.feedSize=VALUE/],
    ['probability out of [0, 1]', ['--set', 'graph.reciprocity=1.5'], /parameter graph\.reciprocity: .*1/],
    ['feed mix larger than the feed', ['--set', 'platform.inNetwork=20'], /parameter platform\.inNetwork: in-network count 20 is larger than feedSize 10/],
    ['unknown recommender', ['--set', 'platform.ranker=popular'], /parameter platform\.ranker: .*x-interest/],
    ['negative agents', ['--agents', '-5'], /--agents must be a whole number/],
    ['a Pareto shape of 1 or less', ['--set', 'population.activityShape=1'], /parameter population\.activityShape: /],
  ];
  for (const [what, args, re] of bad) {
    it(`rejects ${what} with exit 2 and the field's name`, () => {
      const r = socsim(['run', 'social-feed', ...args, '--out', path.join(tmp, 'bad')]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(re);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    });
  }
});

describe('nothing asked of a run is silently dropped', () => {
  const refused = (args: string[], re: RegExp) => {
    const out = path.join(tmp, `noop-${Math.abs(JSON.stringify(args).split('').reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, 7))}`);
    const r = socsim(['run', ...args, '--out', out, '--quiet']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(re)]);
    // Refused before anything was written.
    expect(fs.existsSync(out)).toBe(false);
  };

  it('an intervention after the run\'s last step, or a story after it, is refused instead of never applied', () => {
    refused(['social-feed', '--agents', '2000', '--steps', '24', '--set', 'interventions=[{"kind":"setRanker","hour":30,"ranker":"random"}]'], /^socsim: interventions\[0\] \(setRanker at hour 30\) comes after the run's last step \(24 steps of 1 h, the last at step 23\), so it would never apply/);
    refused(['social-feed', '--agents', '2000', '--steps', '4', '--set', 'story.step=10'], /^socsim: story\.step 10 comes after the run's last step \(3\), so the story would never be posted/);
  });

  it('more story seeds or cascade seeds than accounts is refused instead of clamped', () => {
    refused(['social-feed', '--agents', '2000', '--steps', '2', '--set', 'story.count=1000000'], /^socsim: story\.count 1000000 is more than the 2000 accounts/);
    refused(['independent-cascade', '--agents', '300', '--steps', '2', '--set', 'seedCount=1000'], /^socsim: seedCount 1000 is more than the 300 accounts/);
  });
});
