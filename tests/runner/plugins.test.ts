/**
 * Plugins from a study, through the CLI (dist/): a ranker of the study's own (defineRanker, in a
 * file outside socsim) used by a run with --plugin, the same bytes on 1 and 2 threads (its score
 * function runs in the worker threads, which import the plugin module), recorded for --resume,
 * used by an experiment's arms; and a bad plugin gets one line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tableFromIPC } from '@uwdata/flechette';
import { ROOT, expectSameFiles, runAndStop, socsim, tempDir } from './cliHelpers.ts';
import { gpuOrSkip } from '../gpuHelpers.ts';

const tmp = tempDir('socsim-plugins-');
const API = pathToFileURL(path.join(ROOT, 'dist', 'index.js')).href;

/**
 * A plugin ranker: engagement per hour of age, with the user's interest and a little noise. It
 * leaves a mark when a worker thread imports it, for the test to know the workers scored feeds.
 */
const ENGAGEMENT = `import { appendFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { defineRanker } from '${API}';

if (!isMainThread) appendFileSync(new URL('./worker-imported', import.meta.url), 'x');

export default defineRanker({
  name: 'engagement',
  doc: 'Likes and reposts per hour of age, times the interest match, plus a small random term.',
  score: (post, user) => ((1 + post.likes + 2 * post.reposts) / (1 + post.ageHours)) * (1 + user.interest) + 0.01 * user.random,
});
`;
fs.writeFileSync(path.join(tmp, 'engagement.ts'), ENGAGEMENT);

// 40,000 agents from noon: more active users a step than one chunk of the feed kernel, so both
// threads score feeds.
const RUN = ['run', 'social-feed', '--agents', '40000', '--steps', '3', '--seed', '4', '--events', '--quiet', '--set', 'platform.startHour=12'];

describe('a ranker plugin', () => {
  it('orders feeds in a run (the worker threads import it), the same bytes on 1 and 2 threads, recorded in the manifest', () => {
    const dirs = [1, 2].map((threads) => {
      const out = path.join(tmp, `engagement-${threads}`);
      const r = socsim([...RUN, '--plugin', 'engagement.ts', '--set', 'platform.ranker=engagement', '--threads', String(threads), '--out', out], tmp);
      expect(r.code, r.stderr).toBe(0);
      return out;
    });
    expectSameFiles(dirs[0], dirs[1]);
    expect(fs.existsSync(path.join(tmp, 'worker-imported'))).toBe(true);
    const m = JSON.parse(fs.readFileSync(path.join(dirs[0], 'manifest.json'), 'utf8'));
    expect(m.invocation.plugins).toEqual([path.join(tmp, 'engagement.ts')]);
    expect(m.parameters.platform.ranker).toBe('engagement');
    // Its feeds are not x-interest's: the same run under x-interest shows other posts.
    const x = path.join(tmp, 'x-interest');
    expect(socsim([...RUN, '--threads', '2', '--out', x], tmp).code).toBe(0);
    const posts = (d: string) => tableFromIPC(fs.readFileSync(path.join(d, 'posts.arrow'))).numRows;
    expect(posts(x)).toBeGreaterThan(1000);
    expect(fs.readFileSync(path.join(x, 'events.arrow')).equals(fs.readFileSync(path.join(dirs[0], 'events.arrow')))).toBe(false);
  });

  it('with --backend webgpu, its feed kernel runs on the CPU, said once, and the bytes are the CPU\'s', async () => {
    if (!(await gpuOrSkip('a plugin ranker on the webgpu backend'))) return;
    const small = ['run', 'social-feed', '--agents', '3000', '--steps', '3', '--quiet', '--plugin', 'engagement.ts', '--set', 'platform.ranker=engagement'];
    const gpu = socsim([...small, '--backend', 'webgpu', '--out', 'gpu'], tmp);
    expect(gpu.code, gpu.stderr).toBe(0);
    expect(gpu.stderr.split('\n').filter((l) => l.includes('engagement'))).toEqual(["socsim: ranker engagement is a plugin's: its feed kernel runs on the CPU (user scoring has no WGSL); the other kernels stay on the device"]);
    expect(socsim([...small, '--backend', 'cpu', '--out', 'cpu'], tmp).code).toBe(0);
    expectSameFiles(path.join(tmp, 'cpu'), path.join(tmp, 'gpu'));
  });

  it('a run stopped midway resumes with it (loaded again from the manifest) to the same bytes', async () => {
    const out = path.join(tmp, 'stopped');
    const args = [...RUN, '--plugin', path.join(tmp, 'engagement.ts'), '--set', 'platform.ranker=engagement', '--threads', '1', '--checkpoint-every', '1'];
    await runAndStop(args, out, 1, 'SIGINT');
    expect(JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')).status).toBe('interrupted');
    const r = socsim(['run', '--resume', out, '--quiet'], tmp);
    expect(r.code, r.stderr).toBe(0);
    expectSameFiles(path.join(tmp, 'engagement-1'), out);
  });

  it('an experiment lists it and its arms use it', () => {
    fs.writeFileSync(
      path.join(tmp, 'rankers.ts'),
      `import { defineExperiment, metric } from '${API}';
export default defineExperiment({
  name: 'rankers', description: 'engagement against x-interest', scenario: 'social-feed',
  plugins: ['./engagement.ts'],
  arms: { x: {}, engagement: { platform: { ranker: 'engagement' } } },
  seeds: 1, defaults: { agents: 2000, steps: 3 },
  outcomes: { posts: metric('posts_original').final() },
});
`,
    );
    const r = socsim(['experiment', 'rankers.ts', '--out', 'exp', '--jobs', '2', '--quiet'], tmp);
    expect(r.code, r.stderr).toBe(0);
    const m = JSON.parse(fs.readFileSync(path.join(tmp, 'exp', 'runs', 'engagement-s1', 'manifest.json'), 'utf8'));
    expect(m.parameters.platform.ranker).toBe('engagement');
    expect(m.invocation.plugins).toEqual([path.join(tmp, 'engagement.ts')]);
  });

  it('a bad plugin or an unknown ranker gets one line, exit 2', () => {
    const one = (file: string, text: string, ...set: string[]) => {
      fs.writeFileSync(path.join(tmp, file), text);
      const r = socsim(['run', 'social-feed', '--agents', '500', '--steps', '1', '--quiet', '--plugin', file, ...set], tmp);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      return r.stderr.trim();
    };
    expect(one('none.ts', 'export const x = 1;\n')).toBe('socsim: plugin none.ts has no default export; export default defineRanker({...}) or defineIntervention({...}) from it');
    expect(one('other.ts', 'export default { type: "colour" };\n')).toMatch(/^socsim: plugin other\.ts: its default export is not a plugin \(type "colour"\); the plugin types are ranker, intervention/);
    expect(one('plain.ts', 'export default 42;\n')).toMatch(/^socsim: plugin plain\.ts: its default export is not a plugin \(type undefined\)/);
    expect(one('badname.ts', `import { defineRanker } from '${API}';\nexport default defineRanker({ name: 'Bad Name', doc: 'x', score: () => 0 });\n`)).toMatch(/^socsim: badname\.ts:2: invalid ranker definition Bad Name: name: use lowercase letters/);
    const unknown = one('engagement.ts', ENGAGEMENT, '--set', 'platform.ranker=engagment');
    expect(unknown).toMatch(/unknown ranker "engagment": the rankers are chronological, random, reddit-hot, x-interest, bridging, engagement; a study adds its own with a plugin file/);
    const taken = one('taken.ts', `import { defineRanker } from '${API}';\nexport default defineRanker({ name: 'random', doc: 'x', score: () => 0 });\n`);
    expect(taken).toMatch(/^socsim: plugin taken\.ts: ranker name "random" is already taken by a bundled ranker/);
  });
});
