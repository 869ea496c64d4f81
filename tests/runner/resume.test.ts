/**
 * Resume: a run killed with SIGKILL at an arbitrary point (or stopped with Ctrl-C), then continued
 * with `socsim run --resume DIR`, ends with files byte-identical to the same run uninterrupted.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { readCheckpoint } from '../../sim-core/checkpoint.ts';
import { BIN, ROOT, expectSameFiles, runAndStop, socsim, steps, tempDir } from './cliHelpers.ts';
import { childEnv, personaReply, socsim as socsimAsync } from '../llm-archetypes/cliHelpers.ts';
import { ok, startFakeServer } from '../llm-archetypes/fakeServer.ts';

const tmp = tempDir('socsim-resume-');

// With interventions on both sides of the checkpoints: their state (assignment, suspensions,
// stories, changed parameters, the open interventions.arrow row) must survive a resume.
const INTERVENTIONS = [
  { kind: 'assign', step: 1, groups: { up: { share: 0.3, vote: 1 }, down: { share: 0.3, vote: -1 } } },
  { kind: 'inject', step: 2, count: 10, stance: 0.7, veracity: 'false', novelty: 1.2, tag: 'rumour' },
  { kind: 'suspend', step: 5, agents: { fraction: 0.02 } },
  { kind: 'label', step: 6, posts: { tag: 'rumour' }, reshare: 0.5 },
  { kind: 'setParam', step: 7, param: 'behaviour.repost', scale: 1.5 },
  { kind: 'setRanker', step: 9, ranker: 'chronological' },
];
// A 6-hour post window, so posts retire within the run and some checkpoints hold retired rows
// not yet moved out (posts.ts: after 6 and 8 steps, for this seed).
const SOCIAL = ['run', 'social-feed', '--agents', '20000', '--steps', '14', '--seed', '4', '--snapshot-every', '3', '--events', '--checkpoint-every', '2', '--set', 'platform.windowHours=6', '--set', `interventions=${JSON.stringify(INTERVENTIONS)}`];
const SIR = ['run', 'sir', '--agents', '150000', '--steps', '12', '--seed', '2', '--set', 'beta=0.05', '--checkpoint-every', '3'];

describe('socsim run --resume', () => {
  const socialRef = path.join(tmp, 'social-ref');
  const sirRef = path.join(tmp, 'sir-ref');

  it('reference runs complete and leave no checkpoint', () => {
    expect(socsim([...SOCIAL, '--out', socialRef]).code).toBe(0);
    expect(socsim([...SIR, '--out', sirRef, '--threads', '2']).code).toBe(0);
    expect(fs.existsSync(path.join(socialRef, 'checkpoint.bin'))).toBe(false);
  });

  for (const after of [3, 8]) {
    it(`social-feed killed (SIGKILL) after step ${after} resumes to identical files`, async () => {
      const dir = path.join(tmp, `social-kill-${after}`);
      const code = await runAndStop(SOCIAL, dir, after, 'SIGKILL');
      expect(code).toBe(null); // killed, not finished
      const done = steps(dir);
      expect(done).toBeGreaterThanOrEqual(after);
      expect(done).toBeLessThan(14);
      const inspect = socsim(['inspect', dir]);
      expect(inspect.stdout).toMatch(/status\s+interrupted \(process \d+ is gone\); resume from step \d+/);
      const r = socsim(['run', '--resume', dir, '--quiet']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expectSameFiles(socialRef, dir);
      const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
      expect(m.status).toBe('completed');
      expect(m.steps_completed).toBe(14);
      expect(m.resumed).toHaveLength(1);
      expect(m.resumed[0].from_step % 2).toBe(0);
      expect(socsim(['inspect', dir]).stdout).toContain(`resumed    from step ${m.resumed[0].from_step}`);
      expect(fs.existsSync(path.join(dir, 'checkpoint.bin'))).toBe(false);
      expect(socsim(['run', '--resume', dir]).stderr).toMatch(/the run is complete \(14 steps\); nothing to resume/);
    });
  }

  it('sir stopped with Ctrl-C on 2 threads resumes on 1 thread to identical files', async () => {
    const dir = path.join(tmp, 'sir-int');
    const code = await runAndStop([...SIR, '--threads', '2'], dir, 5, 'SIGINT');
    expect(code).toBe(130);
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect(m.status).toBe('interrupted');
    // Ctrl-C takes a checkpoint where it stops, so nothing done is lost.
    expect(m.checkpoint.step).toBe(m.steps_completed);
    const r = socsim(['run', '--resume', dir, '--threads', '1', '--quiet']);
    expect(r.code).toBe(0);
    expectSameFiles(sirRef, dir);
    // The manifest says what stepped the run since the resume, and the resume entry keeps it.
    const after = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect([after.threads, after.backend]).toEqual([1, 'cpu']);
    expect(after.resumed).toMatchObject([{ from_step: m.checkpoint.step, threads: 1, backend: 'cpu' }]);
  });

  it('social-feed with a follow rebuild every 2 steps, stopped with Ctrl-C, resumes from a checkpoint holding the new following rows only, taking them instead of generating a graph', async () => {
    // The story comes after the checkpoint, from 2,000 hubs of set-up's graph: chosen among the
    // rebuilt graph's hubs instead, many would differ.
    const REBUILDS = ['run', 'social-feed', '--agents', '20000', '--steps', '8', '--seed', '5', '--checkpoint-every', '1', '--set', 'platform.rebuildEvery=2', '--set', 'platform.startHour=10', '--set', 'story.step=6', '--set', 'story.count=2000'];
    const ref = path.join(tmp, 'rebuild-ref');
    expect(socsim([...REBUILDS, '--out', ref, '--quiet']).code).toBe(0);
    const dir = path.join(tmp, 'rebuild-int');
    expect(await runAndStop(REBUILDS, dir, 3, 'SIGINT')).toBe(130);
    // The checkpoint's JSON (after the 32-byte header: "SOCSIMCK", the format, the JSON's length,
    // ...): the rebuilt graph as its following rows, without the followers (their transpose, built
    // again only if read).
    const file = path.join(dir, 'checkpoint.bin');
    const head = Buffer.alloc(32);
    const fd = fs.openSync(file, 'r');
    fs.readSync(fd, head, 0, 32, 0);
    const json = Buffer.alloc(head.readUInt32LE(12));
    fs.readSync(fd, json, 0, json.length, 32);
    fs.closeSync(fd);
    const { meta, tree } = JSON.parse(json.toString('utf8'));
    expect(meta.step).toBeGreaterThanOrEqual(3);
    expect(meta.graphChanged).toBe(true);
    expect(Object.keys(tree.f.graph.f)).toEqual(['following']);
    expect(meta.graphForSetup).toBe(true);
    const r = socsim(['run', '--resume', dir]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/took the checkpoint's graph \(\d+ follows\) instead of generating one/);
    expect(r.stderr).not.toMatch(/generated homophilous graph/);
    expectSameFiles(ref, dir);
    const manifest = (d: string) => JSON.parse(fs.readFileSync(path.join(d, 'manifest.json'), 'utf8'));
    expect(manifest(dir).edges).toBe(manifest(ref).edges);
  });

  // A run stopped with Ctrl-C after its 8th step or later: two checkpoints (every 2 steps, and the
  // one Ctrl-C takes), damaged below.
  const damaged = path.join(tmp, 'social-damaged');
  const newest = path.join(damaged, 'checkpoint.bin');
  const previous = path.join(damaged, 'checkpoint.prev.bin');
  const stepOf = (file: string) => readCheckpoint<{ step: number }>(file).meta.step;
  // 64 bytes inverted in the middle of a checkpoint (as probed: such a checkpoint was accepted, and
  // the resume wrote wrong steps, checkpointed them and failed later). Inverted, not set to 0xFF:
  // the middle may fall in an array of -1s, which setting would leave as it was.
  const flip = (file: string) => {
    const fd = fs.openSync(file, 'r+');
    const at = Math.floor(fs.fstatSync(fd).size / 2);
    const bytes = Buffer.alloc(64);
    fs.readSync(fd, bytes, 0, 64, at);
    for (let i = 0; i < 64; i++) bytes[i] ^= 0xff;
    fs.writeSync(fd, bytes, 0, 64, at);
    fs.closeSync(fd);
  };

  it('with no previous checkpoint, one with bytes flipped or truncated is refused in one line (exit 2) and inspect does not advise resuming', async () => {
    expect(await runAndStop(SOCIAL, damaged, 8, 'SIGINT')).toBe(130);
    const newestStep = stepOf(newest);
    expect(socsim(['inspect', damaged]).stdout).toContain(`status     interrupted; resume from step ${newestStep} with: socsim run --resume ${damaged}\n`);
    // Copies without the previous checkpoint, the newest flipped or truncated.
    const alone = path.join(tmp, 'social-damaged-alone');
    const cut = path.join(tmp, 'social-damaged-cut');
    for (const d of [alone, cut]) {
      fs.cpSync(damaged, d, { recursive: true });
      fs.rmSync(path.join(d, 'checkpoint.prev.bin'), { force: true });
    }
    flip(path.join(alone, 'checkpoint.bin'));
    const size = fs.statSync(path.join(cut, 'checkpoint.bin')).size;
    fs.truncateSync(path.join(cut, 'checkpoint.bin'), 1000);

    let r = socsim(['run', '--resume', alone]);
    expect(r.stderr).toBe(`socsim: --resume ${alone}: ${alone}/checkpoint.bin is damaged (checksum mismatch), and there is no previous checkpoint; start the run again with --force\n`);
    expect(r.code).toBe(2);
    expect(socsim(['inspect', alone]).stdout).toContain(`status     interrupted; checkpoint.bin is damaged (checksum mismatch) and there is no previous checkpoint: nothing to resume from\n`);
    r = socsim(['run', '--resume', cut]);
    expect(r.stderr).toBe(`socsim: --resume ${cut}: ${cut}/checkpoint.bin is damaged (truncated: 1000 of ${size} bytes), and there is no previous checkpoint; start the run again with --force\n`);
    expect(r.code).toBe(2);
    expect(socsim(['inspect', cut]).stdout).not.toMatch(/resume from step/);
    // A refused resume changes nothing: the manifest still says interrupted.
    expect(JSON.parse(fs.readFileSync(path.join(cut, 'manifest.json'), 'utf8')).status).toBe('interrupted');
  }, 120_000);

  it('with a previous good checkpoint, --resume passes over a damaged newest one, saying so in one line, and ends byte-identical; inspect advises the previous one', async () => {
    const newestStep = stepOf(newest);
    const prevStep = stepOf(previous);
    expect(newestStep).toBeGreaterThan(prevStep);
    expect(prevStep).toBeGreaterThanOrEqual(6);
    flip(newest);
    const dir = damaged;
    expect(socsim(['inspect', dir]).stdout).toContain(`status     interrupted; checkpoint.bin is damaged (checksum mismatch); the previous checkpoint, checkpoint.prev.bin, is good: resume from step ${prevStep} with: socsim run --resume ${dir}\n`);
    // Resumed from the previous checkpoint and stopped again (Ctrl-C) a step or more on, with one
    // checkpoint only (the one Ctrl-C takes): it replaces the damaged one, and the previous one is
    // kept, not the damaged one made previous.
    const child = spawn(process.execPath, [BIN, 'run', '--resume', dir, '--quiet', '--checkpoint-every', '100'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const resumedTo = () => {
      try {
        const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
        return m.resumed?.length === 1 ? m.steps_completed : -1;
      } catch {
        return -1; // caught mid-rename
      }
    };
    // One SIGINT only: a second one quits at once, without the checkpoint.
    const poll = setInterval(() => {
      if (resumedTo() <= prevStep) return;
      clearInterval(poll);
      child.kill('SIGINT');
    }, 2);
    const code = await new Promise((resolve) => child.on('exit', resolve));
    clearInterval(poll);
    expect(code).toBe(130);
    // The line, then Ctrl-C's.
    expect(stderr.split('\n')[0]).toBe(`${dir}/checkpoint.bin is damaged (checksum mismatch); resuming from the previous checkpoint, ${dir}/checkpoint.prev.bin (after step ${prevStep})`);
    expect(stepOf(previous)).toBe(prevStep);
    expect(stepOf(newest)).toBeGreaterThan(prevStep);
    const restep = stepOf(newest);
    const r = socsim(['run', '--resume', dir, '--quiet']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expectSameFiles(socialRef, dir);
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect(m.resumed.map((x: { from_step: number }) => x.from_step)).toEqual([prevStep, restep]);
    for (const f of ['checkpoint.bin', 'checkpoint.prev.bin']) expect(fs.existsSync(path.join(dir, f)), f).toBe(false);
  }, 180_000);

  it('refuses what it cannot resume, with the reason (exit 2)', async () => {
    const dir = path.join(tmp, 'social-refuse');
    await runAndStop(SOCIAL, dir, 4, 'SIGKILL');
    let r = socsim(['run', '--resume', dir, '--seed', '9']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/takes --seed from the recorded run; leave --seed out/);
    r = socsim(['run', 'voter', '--resume', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/takes the scenario from the run/);
    for (const f of ['checkpoint.bin', 'checkpoint.prev.bin']) fs.rmSync(path.join(dir, f), { force: true });
    r = socsim(['run', '--resume', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no checkpoint/);
    r = socsim(['run', '--resume', path.join(tmp, 'nowhere')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a socsim run directory/);
  });

  it('LLM runs: a killed replay resumes byte for byte (archetypes and llm-cache.jsonl too); a killed live run resumes against its server', async () => {
    const server = await startFakeServer((req) => ok(personaReply(req.persona)));
    try {
      const env = childEnv({ SOCSIM_LLM_API_KEY: 'resume-test' });
      const LIVE = ['run', 'social-feed', '--agents', '20000', '--steps', '12', '--seed', '5', '--llm', 'openai', '--llm-base-url', server.baseURL, '--llm-every', '2', '--checkpoint-every', '2'];
      const live = path.join(tmp, 'llm-live');
      let r = await socsimAsync([...LIVE, '--out', live, '--quiet'], env);
      expect(r.code).toBe(0);
      const cache = path.join(live, 'llm-cache.jsonl');
      const REPLAY = ['run', 'social-feed', '--agents', '20000', '--steps', '12', '--seed', '5', '--llm', 'replay', '--llm-cache', cache, '--llm-every', '2', '--checkpoint-every', '2'];
      const ref = path.join(tmp, 'llm-replay-ref');
      expect((await socsimAsync([...REPLAY, '--out', ref, '--quiet'], env)).code).toBe(0);

      const killed = path.join(tmp, 'llm-replay-kill');
      expect(await runAndStop(REPLAY, killed, 5, 'SIGKILL', env)).toBe(null);
      r = await socsimAsync(['run', '--resume', killed, '--quiet'], env);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expectSameFiles(ref, killed);
      expect(fs.readFileSync(path.join(killed, 'llm-cache.jsonl')).equals(fs.readFileSync(path.join(ref, 'llm-cache.jsonl')))).toBe(true);

      // Live: the server answers by persona, so the replies are the same; latencies are not, and
      // archetypes.arrow records them, so that file is compared by rows only.
      const liveKilled = path.join(tmp, 'llm-live-kill');
      const asked = server.requests.length;
      expect(await runAndStop(LIVE, liveKilled, 7, 'SIGKILL', env)).toBe(null);
      r = await socsimAsync(['run', '--resume', liveKilled, '--quiet'], env);
      expect(r.code).toBe(0);
      expectSameFiles(live, liveKilled, ['archetypes.arrow']);
      expect(server.requests.length).toBeGreaterThan(asked);
      const rows = (d: string) => fs.readFileSync(path.join(d, 'llm-cache.jsonl'), 'utf8').trim().split('\n').length;
      expect(rows(liveKilled)).toBe(rows(live));
    } finally {
      await server.close();
    }
  });

  it('a checkpoint that cannot be written does not stop the run; the manifest says why', () => {
    const dir = path.join(tmp, 'ckpt-fail');
    const args = ['run', 'sir', '--agents', '3000', '--steps', '4', '--checkpoint-every', '1', '--quiet', '--out', dir];
    expect(socsim(args).code).toBe(0);
    // A directory where the checkpoint's temporary file must go: every checkpoint write fails.
    fs.mkdirSync(path.join(dir, 'checkpoint.bin.tmp'));
    const r = socsim([...args, '--force']);
    expect(r.code).toBe(0);
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect(m.status).toBe('completed');
    expect(m.steps_completed).toBe(4);
    expect(m.checkpoint_error).toMatch(/^step 3: .*checkpoint\.bin\.tmp.*; there is no checkpoint to resume from$/);
    expect(socsim(['inspect', dir]).stdout).toMatch(/checkpoint failed: step 3: /);
  });
});
