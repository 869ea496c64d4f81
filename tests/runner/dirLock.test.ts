/** One writer per directory (runner/run/dirLock.ts): the lock, its holder record, shared holds, and a dead holder. */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { directoryBusy, HOLDER_FILE, lockDirectory, readHolder } from '../../runner/run/dirLock.ts';
import { writerState } from '../../runner/run/runDirectory.ts';
import { tableFromIPC } from '@uwdata/flechette';
import { ROOT, steps, tempDir } from './cliHelpers.ts';

const tmp = tempDir('socsim-lock-');
const dirLock = path.join(ROOT, 'runner', 'run', 'dirLock.ts');

/** A child process that takes the lock of `dir` (mode) and holds it until killed; resolves once it holds it. */
function holder(dir: string, mode: 'exclusive' | 'shared') {
  const script = `import { lockDirectory } from ${JSON.stringify(dirLock)};\nlockDirectory(${JSON.stringify(dir)}, { mode: '${mode}', what: 'test holder' });\nprocess.stdout.write('held\\n');\nsetInterval(() => {}, 1000);\n`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
    child.on('exit', (code) => reject(new Error(`holder exited ${code}`)));
  });
  return { child, ready };
}

const exited = (c: ReturnType<typeof spawn>) => new Promise<void>((resolve) => (c.exitCode !== null || c.signalCode !== null ? resolve() : c.on('exit', () => resolve())));

describe('lockDirectory', () => {
  it('creates the directory, records the holder, and lets the next writer in once released', () => {
    const dir = path.join(tmp, 'a', 'b');
    const lock = lockDirectory(dir, { what: 'socsim run sir' });
    expect(readHolder(dir)).toMatchObject({ pid: process.pid, host: os.hostname(), command: 'socsim run sir' });
    lock.release();
    expect(fs.existsSync(path.join(dir, HOLDER_FILE))).toBe(false);
    expect(directoryBusy(dir)).toBe(false);
    lockDirectory(dir, { what: 'again' }).release();
  });

  it('refuses a second writer, naming the holder; a holder killed with SIGKILL leaves the lock free and its record taken over', async () => {
    const dir = path.join(tmp, 'held');
    const h = holder(dir, 'exclusive');
    await h.ready;
    expect(directoryBusy(dir)).toBe(true);
    expect(writerState({}, dir)).toBe('alive');
    expect(() => lockDirectory(dir, { what: 'second', label: 'runs/x' })).toThrow(new RegExp(`^runs/x is being written by process ${h.child.pid} on this host \\(test holder, since .*\\); wait for it to finish or stop it`));
    h.child.kill('SIGKILL');
    await exited(h.child);
    expect(directoryBusy(dir)).toBe(false);
    expect(writerState({ pid: h.child.pid, host: os.hostname() }, dir)).toBe('gone');
    const lock = lockDirectory(dir, { what: 'third' });
    expect(lock.tookOverFrom?.pid).toBe(h.child.pid);
    lock.release();
  });

  it('shared holders (shards) run together, and keep an exclusive writer out', async () => {
    const dir = path.join(tmp, 'shared');
    const a = holder(dir, 'shared');
    await a.ready;
    const b = lockDirectory(dir, { mode: 'shared', what: 'shard 1' });
    expect(directoryBusy(dir)).toBe(true);
    expect(() => lockDirectory(dir, { what: 'whole experiment' })).toThrow(/is being written by another socsim process/);
    b.release();
    a.child.kill('SIGKILL');
    await exited(a.child);
    lockDirectory(dir, { what: 'whole experiment' }).release();
  });
});

describe('writerState without a lock file (a run from before locks)', () => {
  it('counts an exited process that is not yet reaped as gone', () => {
    // sh starts `sleep 0.2` in the background, then becomes `sleep 60`, which never reaps it: a
    // zombie until the test kills the parent (long enough for a loaded machine to look at it). The
    // child outlives the exec, so sh cannot reap it first (with `sleep 0` it sometimes did).
    const r = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    return new Promise<void>((resolve, reject) => {
      r.stdout!.once('data', (d: Buffer) => {
        try {
          const pid = Number(d.toString().trim());
          const deadline = Date.now() + 10_000;
          while (!/\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')) && Date.now() < deadline);
          expect(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')).toMatch(/\) Z/);
          expect(spawnSync('kill', ['-0', String(pid)]).status).toBe(0); // signal 0 still reaches it
          expect(writerState({ pid, host: os.hostname() })).toBe('gone');
          resolve();
        } catch (err) {
          reject(err);
        } finally {
          r.kill();
        }
      });
    });
  });
});

describe('two writers on one run directory', () => {
  it('a second `run --force` is refused while the first writes, and the first run\'s files stay its own', async () => {
    const dir = path.join(tmp, 'two-runs');
    const first = spawn(process.execPath, [path.join(ROOT, 'bin/socsim.mjs'), 'run', 'voter', '--agents', '2000', '--steps', '1000000', '--snapshot-every', '0', '--checkpoint-every', '0', '--quiet', '--force', '--out', dir], { stdio: 'ignore' });
    const code = new Promise<number | null>((resolve) => first.on('exit', resolve));
    // Wait (on work, not time) until the first run has completed steps.
    while (steps(dir) < 1) await new Promise((r) => setTimeout(r, 20));
    const second = spawnSync(process.execPath, [path.join(ROOT, 'bin/socsim.mjs'), 'run', 'voter', '--agents', '300', '--steps', '2', '--quiet', '--force', '--out', dir], { encoding: 'utf8' });
    expect(second.status, second.stderr).toBe(2);
    expect(second.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^socsim: .*two-runs is being written by process ${first.pid} on this host \\(socsim run voter, since `))]);
    first.kill('SIGINT');
    expect(await code).toBe(130);
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect([m.status, m.agents, m.pid]).toEqual(['interrupted', 2000, first.pid]);
    expect(tableFromIPC(fs.readFileSync(path.join(dir, 'metrics.arrow'))).numRows).toBe(m.steps_completed + 1);
  });
});
