/**
 * A run file that cannot be written (disk full, file too large) must fail the run loudly: the error
 * names the file, the bytes and the OS error, and the run directory's manifest says "failed" and
 * why, even when finishing the run fails as well.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writevSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FileWriteError, readArrowFile, setWriteIo, type ColumnData } from '../../../sim-core/io/arrowFile.ts';
import type { Phase } from '../../../sim-core/phase.ts';
import { loadScenario } from '../../../runner/run/loadScenario.ts';
import { runScenario } from '../../../runner/run/runScenario.ts';
import type { Manifest } from '../../../runner/run/runDirectory.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const tmp = mkdtempSync(join(tmpdir(), 'socsim-write-failure-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const manifestOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;

// `ulimit -f` makes the kernel refuse to grow a file past the limit (EFBIG; Node ignores SIGXFSZ):
// a real OS write error, after a short write, on any POSIX machine.
describe.skipIf(process.platform === 'win32')('a real EFBIG from the OS', () => {
  it('fails the run naming the files, their sizes and EFBIG, and the manifest says so', () => {
    const out = join(tmp, 'efbig');
    // 256 blocks (128-256 KiB): the manifest fits, the ~400 KB graph.arrow and first snapshot of
    // 20,000 agents do not. The snapshot is written first (graph.arrow is written meanwhile, by
    // libuv's threads): its error stops the run, and graph.arrow's is recorded while finishing.
    const r = spawnSync('sh', ['-c', 'ulimit -f 256 && exec "$0" bin/socsim.mjs run sir --agents 20000 --steps 2 --out "$1"', process.execPath, out], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    const manifest = manifestOf(out);
    expect(manifest.status).toBe('failed');
    for (const file of ['agents/step-000000.arrow', 'graph.arrow']) {
      const message = new RegExp(`cannot write ${escape(join(out, file))}: EFBIG: file too large, write \\((\\d+) of (\\d+) bytes written\\)`);
      const m = message.exec(manifest.error ?? '');
      expect(m, manifest.error).not.toBeNull();
      expect(Number(m![1])).toBeGreaterThan(0); // a short write first, then the error
      expect(Number(m![1])).toBeLessThan(Number(m![2]));
      expect(existsSync(join(out, `${file}.tmp`))).toBe(false);
    }
    expect(r.stderr).toContain(`cannot write ${join(out, 'agents/step-000000.arrow')}: EFBIG`);
  });
});

describe('a disk that fills up during the run', () => {
  afterEach(() => setWriteIo());

  it('records the failure and the failure to finish in the manifest, keeping the finished steps', async () => {
    const { scenario } = await loadScenario('sir');
    const diskFull = { now: false };
    setWriteIo({
      writev: (fd, buffers, position) => {
        if (diskFull.now) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        return writevSync(fd, buffers, position);
      },
    });
    const columns: ColumnData[] = [{ name: 'x', type: 'f64', values: new Float64Array(1000) }];
    const filler: Phase = {
      name: 'filler',
      reads: [],
      writes: [],
      run(world, ctx) {
        if (ctx.step < 2) return;
        diskFull.now = true;
        world.out!.writeFile('fill.arrow', columns, 1000);
      },
      finish(world) {
        world.out!.writeFile('final.arrow', columns, 1000); // the disk is still full
      },
    };
    const wrapped = { ...scenario, setup: async (ctx: Parameters<typeof scenario.setup>[0]) => {
      const world = await scenario.setup(ctx);
      return { ...world, phases: [...world.phases, filler] };
    } };
    const out = join(tmp, 'enospc');
    const run = runScenario(wrapped, { agents: 2000, steps: 5, out });
    await expect(run).rejects.toBeInstanceOf(FileWriteError);
    await expect(run).rejects.toThrow(`cannot write ${join(out, 'fill.arrow')}: ENOSPC`);

    const manifest = manifestOf(out);
    expect(manifest.status).toBe('failed');
    expect(manifest.steps_completed).toBe(2);
    expect(manifest.error).toMatch(new RegExp(
      `^cannot write ${escape(join(out, 'fill.arrow'))}: ENOSPC: no space left on device, write \\(0 of \\d+ bytes written\\); ` +
      `then, finishing: cannot write ${escape(join(out, 'final.arrow'))}: ENOSPC`,
    ));
    expect(readArrowFile(join(out, 'metrics.arrow')).numRows).toBe(3); // the initial row (step 0) and two steps
    expect(readArrowFile(join(out, 'graph.arrow')).numRows).toBe(manifest.edges);
  });
});

/** A tmpfs of `size` mounted for the test (root only; undefined where mounting is not allowed). */
function smallDisk(name: string, options: string): string | undefined {
  const dir = join(tmp, name);
  const r = spawnSync('sh', ['-c', `mkdir -p "${dir}" && mount -t tmpfs -o ${options} tmpfs "${dir}"`], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  afterAll(() => void spawnSync('umount', [dir]));
  return dir;
}

describe('a real file system that is full or read-only (tmpfs; needs root, skipped where mount is refused)', () => {
  const full = smallDisk('full', 'size=600k');
  const ro = smallDisk('ro', 'size=1m,ro');

  it.skipIf(!full)('ENOSPC: the run fails with exit 1 and the manifest records "failed" and the ENOSPC, with checkpoints off', () => {
    const out = join(full!, 'run');
    const r = spawnSync(process.execPath, ['bin/socsim.mjs', 'run', 'sir', '--agents', '20000', '--steps', '3', '--checkpoint-every', '0', '--snapshot-every', '0', '--quiet', '--out', out], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/ENOSPC: no space left on device/);
    const m = manifestOf(out);
    expect(m.status).toBe('failed');
    expect(m.error).toMatch(/ENOSPC/);
  });

  it.skipIf(!ro)('a read-only --out is refused at once, naming the file system, before set-up', () => {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, ['bin/socsim.mjs', 'run', 'sir', '--agents', '2000000', '--steps', '3', '--quiet', '--out', join(ro!, 'a', 'run')], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([`socsim: cannot write ${join(ro!, 'a', 'run')}: read-only file system (EROFS at ${ro}); choose another path`]);
    // Before building 2,000,000 agents (seconds): refused in the time it takes to start.
    expect(performance.now() - t0).toBeLessThan(20_000);
  });

  const checkpointDisk = smallDisk('checkpoints', 'size=4500k');
  it.skipIf(!checkpointDisk)('a checkpoint that the full disk refuses: the run goes on, and the checkpoint its message promises is there and good', async () => {
    // 20,000 SIR agents: graph.arrow 0.8 MB, a checkpoint 1.7 MB, written beside the newest and the
    // previous one before it replaces them: the disk soon has no room for the next.
    const out = join(checkpointDisk!, 'run');
    const child = spawn(process.execPath, ['bin/socsim.mjs', 'run', 'sir', '--agents', '20000', '--steps', '1000000', '--checkpoint-every', '1', '--snapshot-every', '0', '--out', out], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const recorded = () => {
      try {
        return manifestOf(out).checkpoint_error;
      } catch {
        return undefined;
      }
    };
    while (!recorded()) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const m = manifestOf(out);
    const promise = /^step \d+: .*ENOSPC.*; the checkpoint of step (\d+) stays$/.exec(m.checkpoint_error ?? '');
    expect(promise, m.checkpoint_error).not.toBeNull();
    const kept = Number(promise![1]);
    expect(m.checkpoint?.step).toBe(kept);
    // The message's promise holds: inspect verifies the checkpoint and offers to resume from it.
    const inspect = spawnSync(process.execPath, ['bin/socsim.mjs', 'inspect', out], { cwd: ROOT, encoding: 'utf8' });
    expect(inspect.stdout).toMatch(new RegExp(`interrupted; resume from step ${kept} with: socsim run --resume ${escape(out)}`));
    expect(stderr).toMatch(new RegExp(`could not write the checkpoint after step \\d+ \\(.*ENOSPC.*\\); the run goes on and the checkpoint of step ${kept} stays`));
  });

  it('/proc/nope fails fast with one line instead of hanging', () => {
    const r = spawnSync(process.execPath, ['bin/socsim.mjs', 'run', 'sir', '--agents', '200', '--steps', '1', '--quiet', '--out', '/proc/nope'], { cwd: ROOT, encoding: 'utf8', timeout: 600_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual(['socsim: cannot create /proc/nope: /proc does not accept new folders (ENOENT at /proc/nope); choose another path']);
  });
});
