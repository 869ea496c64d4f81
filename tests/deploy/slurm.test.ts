/**
 * deploy/slurm/submit.sh on a real Slurm: a single-node cluster from the distribution's packages
 * (slurmCluster.ts) runs the sir-beta experiment as an array of 3 shards (`--shard auto/3`) into
 * one directory and the merge as a job that depends on the array (afterok); the merged tables must
 * be byte-identical to a one-machine `socsim experiment` with the same options.
 *
 * Skips with one line where Slurm is not installed; CI installs it and sets
 * SOCSIM_REQUIRE_SLURM=1, so there it runs or fails. The scripts' syntax and socsim flags are
 * checked everywhere.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, socsim, tempDir } from '../runner/cliHelpers.ts';
import { experimentFlags } from './deployFiles.ts';
import { showJob, slurmOrSkip, startCluster, waitFor, type JobRecord, type SlurmCluster } from './slurmCluster.ts';

const run = slurmOrSkip('deploy/slurm on a one-node Slurm cluster');

const FILE = path.join(ROOT, 'experiments/sir-beta.ts');
const OPTIONS = ['--agents', '1000', '--seeds', '2', '--steps', '4'];
const SHARDS = 3;
const TABLES = ['summary.arrow', 'effects.arrow', 'series.arrow'];
/** How long the jobs may take, queueing included: generous, since the array's tasks run one at a time on two CPUs of a slow machine. */
const JOBS_BUDGET_MS = 15 * 60_000;

const SCRIPTS = ['submit.sh', 'experiment.sbatch', 'merge.sbatch'].map((f) => path.join(ROOT, 'deploy/slurm', f));

describe('deploy/slurm scripts', () => {
  it('parse as bash and are executable', () => {
    for (const f of SCRIPTS) {
      const r = spawnSync('bash', ['-n', f], { encoding: 'utf8' });
      expect(r.status, `${f}: ${r.stderr}`).toBe(0);
      expect(fs.statSync(f).mode & 0o111, f).toBe(0o111);
    }
  });

  it('call socsim with flags it accepts: a shard per array task, and the merge', () => {
    const shard = fs.readFileSync(SCRIPTS[1], 'utf8');
    const line = /^exec npx --offline socsim experiment "\$FILE" (.*)$/m.exec(shard);
    expect(line, shard).not.toBeNull();
    expect(line![1]).toContain('--shard "auto/$N"');
    const known = experimentFlags();
    expect(line![1].match(/--[a-z][a-z0-9-]*/g)!.filter((f) => !known.has(f))).toEqual([]);
    const merge = fs.readFileSync(SCRIPTS[2], 'utf8');
    expect(merge).toMatch(/^exec npx --offline socsim experiment merge "\$OUT"$/m);
    // A failed shard cancels the merge instead of leaving it pending for ever.
    expect(merge).toMatch(/^#SBATCH --kill-on-invalid-dep=yes$/m);
    expect(fs.readFileSync(SCRIPTS[0], 'utf8')).toMatch(/--dependency=afterok:"\$ARRAY"/);
  });
});

describe.skipIf(!run)('deploy/slurm/submit.sh', () => {
  const tmp = tempDir('socsim-slurm-');
  let cluster: SlurmCluster | undefined;

  beforeAll(async () => {
    cluster = await startCluster({ readyMs: 120_000 });
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 120_000);

  it(
    'runs an array of 3 shards and the merge after them, and the tables equal a one-machine run',
    async () => {
      const c = cluster!;
      const one = path.join(tmp, 'one');
      const ref = socsim(['experiment', FILE, ...OPTIONS, '--out', one, '--quiet'], ROOT, 600_000);
      expect(ref.code, ref.stderr).toBe(0);

      // Submitted from a folder of its own, where the jobs' logs go; the jobs run in SOCSIM_HOME.
      const logs = path.join(tmp, 'logs');
      fs.mkdirSync(logs);
      const out = path.join(tmp, 'shared', 'sir-beta');
      const sub = c.run(path.join(ROOT, 'deploy/slurm/submit.sh'), [FILE, out, String(SHARDS), ...OPTIONS], logs, { SOCSIM_HOME: ROOT });
      expect(sub.status, `${sub.stdout}\n${sub.stderr}`).toBe(0);
      const ids = /^(\d+) (\d+)$/m.exec(sub.stdout.trim().split('\n').at(-1) ?? '');
      expect(ids, sub.stdout).not.toBeNull();
      const [array, merge] = [ids![1], ids![2]];
      // The merge waits on the whole array, and only for success (shards take seconds, so it is pending now).
      expect(showJob(c, merge)[0].Dependency).toMatch(new RegExp(`^afterok:${array}_\\*`));

      const jobLogs = () =>
        fs
          .readdirSync(logs)
          .sort()
          .map((f) => `--- ${f} ---\n${fs.readFileSync(path.join(logs, f), 'utf8')}`)
          .join('\n');
      try {
        await waitFor(
          `jobs ${array} and ${merge} done`,
          JOBS_BUDGET_MS,
          () => {
            const q = c.run('squeue', ['-h', '-j', `${array},${merge}`, '-o', '%i %T']);
            // A finished job leaves squeue's list; slurmctld keeps its record for scontrol (MinJobAge).
            return q.status === 0 && q.stdout.trim() === '' ? true : undefined;
          },
          2000,
        );
      } catch (e) {
        throw new Error(`${(e as Error).message}\n${c.run('squeue', []).stdout}\n${jobLogs()}\n${c.logs()}`);
      }

      const tasks = showJob(c, array);
      const [mergeJob] = showJob(c, merge);
      const why = `${tasks.concat(mergeJob).map((j) => `${j.JobId} task ${j.ArrayTaskId ?? '-'}: ${j.JobState} exit ${j.ExitCode}`).join('\n')}\n${jobLogs()}`;
      expect(tasks.map((t) => Number(t.ArrayTaskId)).sort(), why).toEqual([0, 1, 2]);
      for (const t of [...tasks, mergeJob]) expect([t.JobState, t.ExitCode], why).toEqual(['COMPLETED', '0:0']);
      // afterok: the merge started only once every shard had ended.
      const lastShardEnd = tasks.map((t: JobRecord) => t.EndTime).sort().at(-1)!;
      expect(mergeJob.StartTime >= lastShardEnd, `merge started ${mergeJob.StartTime}, last shard ended ${lastShardEnd}`).toBe(true);
      // auto/3 gave each task its own shard index (each shard records itself in the directory).
      for (let i = 0; i < SHARDS; i++) expect(fs.existsSync(path.join(out, `shard-${i}-of-${SHARDS}.json`)), `${why}\nshard ${i}`).toBe(true);

      for (const f of TABLES) expect(fs.readFileSync(path.join(out, f)).equals(fs.readFileSync(path.join(one, f))), `${f}\n${why}`).toBe(true);
    },
    JOBS_BUDGET_MS + 10 * 60_000,
  );
});
