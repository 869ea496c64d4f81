/**
 * An intervention kind from a study through the CLI (dist/): a plugin file outside socsim, loaded
 * with --plugin, recorded for --resume, and listed by an experiment whose arms use it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT, expectSameFiles, runAndStop, socsim, tempDir } from '../../runner/cliHelpers.ts';
import { read, rows } from './runs.ts';

const tmp = tempDir('socsim-iv-plugin-cli-');
const API = pathToFileURL(path.join(ROOT, 'dist', 'index.js')).href;
// study/boost.ts, importing socsim as a study does.
fs.writeFileSync(path.join(tmp, 'boost.ts'), fs.readFileSync(path.join(import.meta.dirname, 'study', 'boost.ts'), 'utf8').replace('../../../../index.ts', API));

const IVS = [
  { kind: 'inject', step: 0, count: 10, stance: 0.6, veracity: 'false', novelty: 1.2, tag: 'rumour' },
  { kind: 'boost', step: 2, posts: { tag: 'rumour' }, factor: 3 },
];
const RUN = ['run', 'social-feed', '--agents', '3000', '--steps', '5', '--seed', '2', '--quiet', '--plugin', path.join(tmp, 'boost.ts'), '--set', `interventions=${JSON.stringify(IVS)}`];

describe('an intervention kind plugin, through the CLI', () => {
  it('a run applies and logs it; stopped midway, it resumes with it to the same bytes', async () => {
    const whole = path.join(tmp, 'whole');
    const r = socsim([...RUN, '--out', whole], tmp);
    expect(r.code, r.stderr).toBe(0);
    expect(rows(read(whole, 'interventions.arrow')).map((x) => [x.step, x.kind])).toEqual([[0, 'inject'], [2, 'boost']]);
    const stopped = path.join(tmp, 'stopped');
    await runAndStop([...RUN, '--checkpoint-every', '1'], stopped, 2, 'SIGINT');
    const resumed = socsim(['run', '--resume', stopped, '--quiet'], tmp);
    expect(resumed.code, resumed.stderr).toBe(0);
    expectSameFiles(whole, stopped);
  });

  it('an experiment lists it and its arms use it', () => {
    fs.writeFileSync(
      path.join(tmp, 'boosting.ts'),
      `import { defineExperiment, metric } from '${API}';
const inject = ${JSON.stringify(IVS[0])};
export default defineExperiment({
  name: 'boosting', description: 'a boosted story against a plain one', scenario: 'social-feed',
  plugins: ['./boost.ts'],
  arms: { plain: { interventions: [inject] }, boosted: { interventions: [inject, ${JSON.stringify(IVS[1])}] } },
  seeds: 1, defaults: { agents: 2000, steps: 4 },
  outcomes: { reposts: metric('posts_repost').final() },
});
`,
    );
    const r = socsim(['experiment', 'boosting.ts', '--out', 'exp', '--jobs', '2', '--quiet'], tmp);
    expect(r.code, r.stderr).toBe(0);
    expect(rows(read(path.join(tmp, 'exp', 'runs', 'boosted-s1'), 'interventions.arrow')).map((x) => x.kind)).toEqual(['inject', 'boost']);
  });
});
