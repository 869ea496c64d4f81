/**
 * Determinism across thread counts, end to end: the same run with `--threads 1`, 2 and 4 writes
 * byte-identical Arrow files (every top-level *.arrow and every agents/*.arrow snapshot).
 *
 * The contract under test (sim-core/exec.ts): chunk boundaries depend on the row count only, chunk
 * partials are combined in chunk order, and randomness is keyed by row or edge, so which thread
 * runs a chunk, and in what order chunks finish, cannot change a result. A run that fits in one
 * chunk cannot show a violation (one chunk is one task whatever the pool size), so the sizes here
 * are chosen to give several chunks: more than two CHUNK_ROWS for the agent-level kernels and,
 * for social-feed, more than two USER_CHUNKs of active users in every step for the per-user
 * kernels. Both are asserted, so a later change of either constant cannot quietly turn this into
 * a one-chunk test. Three thread counts, because 2 and 4 workers take chunks in different
 * interleavings (and 4 workers with 3 agent-level chunks leave one idle).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tableFromIPC } from '@uwdata/flechette';
import { CHUNK_ROWS } from '../../sim-core/exec.ts';
import { USER_CHUNK } from '../../platform/state.ts';
import { socsim, tempDir } from './cliHelpers.ts';

const THREADS = [1, 2, 4];
const tmp = tempDir('socsim-determinism-');

const arrowFiles = (dir: string) => (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.arrow')).sort();

/**
 * Runs `args` once per thread count and checks that every run wrote the same set of Arrow files
 * with the same bytes as the 1-thread run. Returns the 1-thread run's directory (still present;
 * the others are removed, as the social-feed graphs are ~55 MB a file).
 */
function expectSameFilesAcrossThreads(name: string, args: string[]): { dir: string; files: string[] } {
  const dirs = THREADS.map((t) => path.join(tmp, `${name}-t${t}`));
  THREADS.forEach((t, i) => {
    const r = socsim([...args, '--quiet', '--threads', String(t), '--out', dirs[i]]);
    expect(r.code, `--threads ${t}: ${r.stderr}`).toBe(0);
  });
  const files = arrowFiles(dirs[0]);
  const differ: string[] = [];
  for (let i = 1; i < THREADS.length; i++) {
    expect(arrowFiles(dirs[i]), `--threads ${THREADS[i]} file list`).toEqual(files);
    for (const f of files) {
      if (!fs.readFileSync(path.join(dirs[0], f)).equals(fs.readFileSync(path.join(dirs[i], f)))) differ.push(`${f} (--threads ${THREADS[i]} vs 1)`);
    }
    fs.rmSync(dirs[i], { recursive: true, force: true });
  }
  // All mismatches at once: which files differ says which part of the step broke.
  expect(differ).toEqual([]);
  return { dir: dirs[0], files };
}

describe('byte-identical output with 1, 2 and 4 threads over several chunks', () => {
  it('social-feed: 140,000 agents, 4 steps from 10:00, follow rebuilds, events and snapshots', () => {
    const agents = 140_000;
    expect(Math.ceil(agents / CHUNK_ROWS)).toBeGreaterThanOrEqual(3);
    // From 10:00 about 11% of users are active (~16k, 8 user chunks); rebuildEvery=2 folds the
    // follows into a new CSR twice within the run, so later steps read a rebuilt graph.
    const { dir, files } = expectSameFilesAcrossThreads('social', [
      'run', 'social-feed', '--agents', String(agents), '--steps', '4', '--seed', '3', '--events', '--snapshot-every', '2',
      '--set', 'platform.startHour=10', '--set', 'platform.rebuildEvery=2',
      // Interventions of every kind that touches posts, accounts or the ranker, during the run.
      '--set', `interventions=${JSON.stringify([
        { kind: 'inject', step: 0, count: 20, stance: -0.6, veracity: 'false', novelty: 1.2, tag: 'rumour' },
        { kind: 'assign', step: 0, groups: { up: { share: 0.2, vote: 1 }, down: { share: 0.2, vote: -1 } } },
        { kind: 'suspend', step: 1, agents: { fraction: 0.01 } },
        { kind: 'label', step: 2, posts: { tag: 'rumour' } },
        { kind: 'downrank', step: 2, posts: { fraction: 0.3 }, factor: 0.5 },
        { kind: 'setRanker', step: 3, ranker: 'reddit-hot' },
      ])}`,
    ]);
    expect(files).toEqual([
      'agents/step-000000.arrow', 'agents/step-000002.arrow', 'agents/step-000004.arrow',
      'cascades.arrow', 'conversations.arrow', 'events.arrow', 'graph-end.arrow', 'graph.arrow', 'interventions.arrow', 'metrics.arrow', 'posts.arrow', 'stories.arrow',
    ]);
    const metrics = tableFromIPC(fs.readFileSync(path.join(dir, 'metrics.arrow')));
    const active = Array.from(metrics.getChild('active_users')!.toArray() as Int32Array);
    expect(active).toHaveLength(4);
    expect(Math.min(...active)).toBeGreaterThan(2 * USER_CHUNK);
    const follows = (metrics.getChild('actions_follow')!.toArray() as Int32Array).reduce((s, v) => s + v, 0);
    expect(follows).toBeGreaterThan(0);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // Classic models: a contagion (edge-keyed draws, idempotent cross-chunk marks), a CSR segment
  // mean, a sequential pair-update model (one chunk, whatever the thread count) and a
  // sampled-partner model; the opinion models also reduce floating-point moments across chunks for
  // their metrics, where summation order matters.
  const classic: Array<[string, string[]]> = [
    ['sir', ['--set', 'seedCount=2000', '--set', 'beta=0.1']],
    ['hegselmann-krause', []],
    ['deffuant', []],
    ['deffuant', ['--set', 'scheme=synchronous']],
  ];
  for (const [model, extra] of classic) {
    it(`${[model, ...extra.filter((a) => a !== '--set')].join(' ')}: 150,000 agents, 4 steps, snapshots every 2`, () => {
      const agents = 150_000;
      expect(Math.ceil(agents / CHUNK_ROWS)).toBeGreaterThanOrEqual(3);
      const { dir, files } = expectSameFilesAcrossThreads([model, ...extra.filter((a) => a !== '--set')].join('-').replace(/[^a-z0-9-]/gi, '_'), [
        'run', model, '--agents', String(agents), '--steps', '4', '--seed', '5', '--snapshot-every', '2', ...extra,
      ]);
      expect(files).toEqual(['agents/step-000000.arrow', 'agents/step-000002.arrow', 'agents/step-000004.arrow', 'graph.arrow', 'metrics.arrow']);
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }
});
