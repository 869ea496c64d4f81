/**
 * A single-node Slurm cluster for tests, from the distribution's packages (Debian: slurmctld,
 * slurmd, slurm-client, munge): munged, slurmctld and slurmd run in the foreground as children of
 * the test, with every file they write (munge key and socket, slurm.conf, state, spool, logs) in
 * one temporary folder, on ports chosen free, so nothing of a system installation is read or
 * changed and `stop()` ends exactly the daemons that `startCluster` started.
 *
 * `slurmOrSkip(what)` says whether a test can run: without the daemons and client commands it
 * prints one line and the file skips; with SOCSIM_REQUIRE_SLURM=1 (CI, after installing Slurm) a
 * missing piece fails the file instead.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const REQUIRE_SLURM_ENV = 'SOCSIM_REQUIRE_SLURM';

/** The daemons and the commands a test uses; the daemons live in sbin, often not on a user's PATH. */
const TOOLS = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'squeue', 'scontrol', 'scancel', 'sinfo'] as const;
const SBIN = ['/usr/sbin', '/usr/local/sbin', '/sbin'];

/** PATH for the daemons and the client commands: the Node running the tests first, then sbin. */
export function slurmPath(): string {
  const parts = [path.dirname(process.execPath), ...(process.env.PATH ?? '').split(path.delimiter), ...SBIN];
  return [...new Set(parts.filter((p) => p !== ''))].join(path.delimiter);
}

function findTool(name: string): string | undefined {
  for (const dir of slurmPath().split(path.delimiter)) {
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Why a cluster cannot be started here, or undefined when it can. */
export function slurmUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `the test cluster runs on Linux (this is ${process.platform})`;
  const missing = TOOLS.filter((t) => !findTool(t));
  if (missing.length > 0) return `${missing.join(', ')} not installed (Debian: apt-get install slurmctld slurmd slurm-client munge)`;
  return undefined;
}

export const slurmRequired = (): boolean => process.env[REQUIRE_SLURM_ENV] === '1';

/**
 * Whether the test of `what` can run. Prints one line when it skips; throws when Slurm is
 * required (SOCSIM_REQUIRE_SLURM=1) but unavailable.
 */
export function slurmOrSkip(what: string): boolean {
  const why = slurmUnavailable();
  if (!why) return true;
  if (slurmRequired()) throw new Error(`${REQUIRE_SLURM_ENV}=1 but ${why}`);
  console.log(`skipped (${what}): ${why}`);
  return false;
}

/** A TCP port nobody listens on now (the kernel's choice), for slurmctld and slurmd. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it returns a value, or throws `what` after `budgetMs`. */
export async function waitFor<T>(what: string, budgetMs: number, check: () => T | undefined, everyMs = 500): Promise<T> {
  const until = Date.now() + budgetMs;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`${what}: not within ${budgetMs / 1000} s`);
    await sleep(everyMs);
  }
}

export interface SlurmCluster {
  /** The temporary folder holding every file of the cluster (removed by stop). */
  dir: string;
  /** The node's (and the controller's) name: this machine's short hostname. */
  node: string;
  /** The environment for client commands and jobs: SLURM_CONF set, no SLURM_ or SBATCH_ variables inherited. */
  env: NodeJS.ProcessEnv;
  /** Runs a command (a Slurm client, or a script that calls them) against this cluster, in `cwd` (default `dir`) with `env` added. */
  run(cmd: string, args: string[], cwd?: string, env?: NodeJS.ProcessEnv): SpawnSyncReturns<string>;
  /** The daemons' logs, last `lines` lines of each, for a failure message. */
  logs(lines?: number): string;
  /** Cancels any job left, stops slurmd, slurmctld and munged, and waits for them to exit. */
  stop(): Promise<void>;
}

interface Daemon {
  name: string;
  child: ChildProcess;
  exited: Promise<void>;
}

function startDaemon(name: string, args: string[], env: NodeJS.ProcessEnv, log: string): Daemon {
  const fd = fs.openSync(log, 'a');
  const child = spawn(findTool(name)!, args, { env, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.on('exit', () => resolve());
  });
  child.on('error', () => {}); // reported through the readiness check and the logs
  return { name, child, exited };
}

/** Ends a daemon: it has `graceMs` to exit after `signal`, then gets SIGKILL. */
async function endDaemon(d: Daemon, graceMs: number, signal: NodeJS.Signals): Promise<void> {
  if (d.child.exitCode !== null || d.child.signalCode !== null) return;
  d.child.kill(signal);
  const timer = new Promise<'late'>((r) => setTimeout(() => r('late'), graceMs));
  if ((await Promise.race([d.exited.then(() => 'done' as const), timer])) === 'late') {
    d.child.kill('SIGKILL');
    await d.exited;
  }
}

/** slurm.conf for one node with `cpus` CPUs and 4 GiB, daemons run by `user`, without accounting or cgroups. */
function slurmConf(o: { dir: string; node: string; user: string; ctldPort: number; slurmdPort: number; socket: string; cpus: number }): string {
  const d = (p: string) => path.join(o.dir, p);
  return `# A single-node test cluster (tests/deploy/slurmCluster.ts); every path is in ${o.dir}.
ClusterName=socsimtest
SlurmctldHost=${o.node}(127.0.0.1)
SlurmctldPort=${o.ctldPort}
SlurmdPort=${o.slurmdPort}
# The daemons run as the user running the test: jobs of that same user need no privilege to
# start, so the cluster needs no root.
SlurmUser=${o.user}
SlurmdUser=${o.user}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${o.socket}
StateSaveLocation=${d('state')}
SlurmdSpoolDir=${d('spool')}
SlurmctldPidFile=${d('slurmctld.pid')}
SlurmdPidFile=${d('slurmd.pid')}
SlurmctldLogFile=${d('log/slurmctld.log')}
SlurmdLogFile=${d('log/slurmd.log')}
# No cgroups (a container or CI machine may not delegate them): processes are tracked by parent pid.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# No slurmdbd, so no sacct: finished jobs stay in slurmctld (MinJobAge) for scontrol, and each
# end is appended to the job completion file.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=${d('jobcomp.txt')}
MinJobAge=3600
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
# The node as declared here, whatever the machine has: jobs that ask for --mem=4G fit on any machine.
SlurmdParameters=config_overrides
NodeName=${o.node} NodeAddr=127.0.0.1 CPUs=${o.cpus} RealMemory=4096 State=UNKNOWN
PartitionName=test Nodes=${o.node} Default=YES MaxTime=INFINITE State=UP
`;
}

/**
 * Starts munged, slurmctld and slurmd with their files in a new temporary folder and waits until
 * the node is idle (at most `readyMs`). The caller must `stop()` it, also when a test fails; stop
 * removes the folder.
 */
export async function startCluster(opts: { cpus?: number; readyMs?: number } = {}): Promise<SlurmCluster> {
  // Its own folder right under the system's temporary one: munged wants every folder above its
  // socket open to all (mkdtemp makes them private), and its key folder private.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-slurm-cluster-'));
  const node = os.hostname().split('.')[0];
  for (const sub of ['state', 'spool', 'log', 'munge', 'munge-key']) fs.mkdirSync(path.join(dir, sub), { recursive: true });
  fs.chmodSync(path.join(dir, 'munge-key'), 0o700);
  for (const d of [dir, path.join(dir, 'munge')]) fs.chmodSync(d, 0o755);
  const key = path.join(dir, 'munge-key', 'munge.key');
  fs.writeFileSync(key, crypto.randomBytes(128), { mode: 0o600 });
  const socket = path.join(dir, 'munge', 'munge.socket');
  const [ctldPort, slurmdPort] = [await freePort(), await freePort()];
  const conf = path.join(dir, 'slurm.conf');
  fs.writeFileSync(conf, slurmConf({ dir, node, user: os.userInfo().username, ctldPort, slurmdPort, socket, cpus: opts.cpus ?? 2 }));

  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SLURM_') && !k.startsWith('SBATCH_')));
  env.SLURM_CONF = conf;
  env.PATH = slurmPath();
  const log = (name: string) => path.join(dir, 'log', `${name}.out`);
  const daemons: Daemon[] = [];
  const alive = () => {
    for (const d of daemons) if (d.child.exitCode !== null || d.child.signalCode !== null) throw new Error(`${d.name} exited (${d.child.exitCode ?? d.child.signalCode})`);
  };
  const run = (cmd: string, args: string[], cwd = dir, extra: NodeJS.ProcessEnv = {}) => spawnSync(cmd, args, { cwd, env: { ...env, ...extra }, encoding: 'utf8', timeout: 120_000 });
  const logs = (lines = 40) =>
    fs
      .readdirSync(path.join(dir, 'log'))
      .sort()
      .map((f) => {
        const text = fs.readFileSync(path.join(dir, 'log', f), 'utf8').trimEnd().split('\n');
        return `--- ${f} ---\n${text.slice(-lines).join('\n')}`;
      })
      .join('\n');

  const stop = async () => {
    const ctld = daemons.find((d) => d.name === 'slurmctld');
    if (ctld && ctld.child.exitCode === null && ctld.child.signalCode === null) {
      // Jobs first, so that no job's processes outlive slurmd (every job on this cluster is the test's).
      run('scancel', ['--full', `--user=${os.userInfo().username}`]);
      await waitFor('jobs cancelled', 30_000, () => (run('squeue', ['-h']).stdout?.trim() === '' ? true : undefined)).catch(() => {});
    }
    // SIGTERM is each daemon's clean shutdown; slurmd before slurmctld before munged, which both use.
    for (const d of [...daemons].reverse()) await endDaemon(d, 20_000, 'SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    // -F: stay in the foreground, a child of the test, so that stop() ends this process and no other.
    daemons.push(startDaemon('munged', ['-F', `--socket=${socket}`, `--key-file=${key}`, `--pid-file=${path.join(dir, 'munge', 'munged.pid')}`, `--log-file=${log('munged')}`, `--seed-file=${path.join(dir, 'munge', 'munged.seed')}`], env, log('munged-stdio')));
    await waitFor('munged socket', opts.readyMs ?? 60_000, () => (alive(), fs.existsSync(socket) ? true : undefined), 100);
    // -D: foreground; -i: a fresh StateSaveLocation has no state files, which is not an error here.
    daemons.push(startDaemon('slurmctld', ['-D', '-i'], env, log('slurmctld-stdio')));
    daemons.push(startDaemon('slurmd', ['-D', '-N', node], env, log('slurmd-stdio')));
    await waitFor(`node ${node} idle`, opts.readyMs ?? 60_000, () => {
      alive();
      const r = run('sinfo', ['-h', '-N', '-o', '%T']);
      return r.status === 0 && r.stdout.trim() === 'idle' ? true : undefined;
    });
  } catch (e) {
    const message = `${(e as Error).message}\n${logs()}`;
    await stop();
    throw new Error(message);
  }
  return { dir, node, env, run, logs, stop };
}

/** One record of `scontrol -o show job`: its Key=Value fields. */
export type JobRecord = Record<string, string>;

/** The records of job `id` (an array job gives one per task), from slurmctld. */
export function showJob(cluster: SlurmCluster, id: string): JobRecord[] {
  const r = cluster.run('scontrol', ['-o', 'show', 'job', id]);
  if (r.status !== 0) throw new Error(`scontrol show job ${id}: ${r.stderr}`);
  return r.stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => Object.fromEntries([...line.matchAll(/(\S+?)=(\S*)/g)].map((m) => [m[1], m[2]])));
}
