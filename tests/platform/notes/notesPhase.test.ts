/**
 * Community Notes in the social step (platform/notes/notesPhase.ts), through the CLI (dist/): notes
 * are written, rated and scored into their files; a shown note flags its post and scales liking and
 * resharing from then on; the files are the same bytes on one thread, two and the webgpu backend,
 * and after a stop and resume.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectSameFiles, runAndStop, socsim, tempDir } from '../../runner/cliHelpers.ts';
import { read, rows } from '../interventions/runs.ts';
import { FLAG } from '../../../platform/posts.ts';
import { gpuOrSkip } from '../../gpuHelpers.ts';

const gpu = await gpuOrSkip('Community Notes on the webgpu backend');
afterAll(() => gpu?.close());
const tmp = tempDir('socsim-notes-');
/** Enough contributors at 20,000 agents for notes to reach a status within a day. */
const NOTES = ['--set', 'platform.notes.enabled=true', '--set', 'platform.notes.contributors=0.05', '--set', 'platform.notes.write=0.01', '--set', 'platform.notes.rate=0.3'];
const RUN = ['run', 'social-feed', '--agents', '20000', '--steps', '24', '--seed', '3', '--quiet', ...NOTES];

/**
 * A false story of 20 posts by popular accounts that contributors note often and raters find
 * helpful, scored by majority: its posts show notes while they still draw likes and reshares.
 */
const STORY = [
  '--events',
  '--set', 'platform.notes.scoring=majority',
  '--set', 'platform.notes.rate=1',
  '--set', 'platform.notes.queue=10',
  '--set', 'platform.notes.falseMultiplier=5',
  '--set', 'platform.notes.helpfulness={"veracity":3}',
  '--set', 'interventions=[{"kind":"inject","step":0,"count":20,"stance":0.6,"veracity":"false","novelty":1.2,"tag":"rumour","authors":{"topFollowers":200}}]',
];

/** Runs RUN plus `extra` into tmp/name; expects a clean exit (and, on the CPU, nothing on stderr). */
function run(name: string, extra: string[] = [], quiet = true): string {
  const dir = path.join(tmp, name);
  const r = socsim([...RUN, ...extra, '--out', dir]);
  if (quiet) expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return dir;
}

describe('Community Notes in a run', () => {
  const base = run('base', ['--threads', '2']);

  it('writes notes, ratings and status changes that agree with each other and the metrics', () => {
    const notes = rows(read(base, 'notes.arrow'));
    const ratings = rows(read(base, 'note-ratings.arrow'));
    const changes = rows(read(base, 'note-status.arrow'));
    const metrics = rows(read(base, 'metrics.arrow'));
    expect(notes.length).toBe(metrics.reduce((t, m) => t + (m.notes_written as number), 0));
    expect(ratings.length).toBe(metrics.reduce((t, m) => t + (m.note_ratings as number), 0));
    // Each note's counts are its ratings'; nobody rates their own note or a note twice.
    for (const n of notes) expect(ratings.filter((r) => r.note === n.id).length).toBe(n.ratings);
    const writer = new Map(notes.map((n) => [n.id, n.writer]));
    expect(ratings.every((r) => writer.get(r.note) !== r.rater)).toBe(true);
    expect(new Set(ratings.map((r) => `${r.rater},${r.note}`)).size).toBe(ratings.length);
    // Some notes were shown; each note's last logged status is its final one.
    const shown = notes.filter((n) => n.status === 'helpful');
    expect(shown.length).toBeGreaterThan(0);
    expect(metrics.at(-1)!.notes_shown).toBe(shown.length);
    for (const n of notes) {
      const last = changes.filter((c) => c.note === n.id).at(-1);
      expect(last?.status ?? 'needs_more_ratings').toBe(n.status);
    }
    // The posts of shown notes carry the flag in posts.arrow.
    const posts = new Map(rows(read(base, 'posts.arrow')).map((p) => [p.id, p.flags as number]));
    for (const n of shown) expect((posts.get(n.post)! & FLAG.noted) !== 0).toBe(true);
  });

  it('a shown note with multipliers 0: nobody likes or reshares its post after it shows', () => {
    const dir = run('muted', [...STORY, '--set', 'platform.notes.shown={"like":0,"reshare":0}']);
    const changes = rows(read(dir, 'note-status.arrow'));
    const notes = rows(read(dir, 'notes.arrow'));
    const shownAt = new Map<number, number>();
    for (const c of changes) if (c.status === 'helpful' && !shownAt.has(notes[c.note as number].post as number)) shownAt.set(notes[c.note as number].post as number, c.step as number);
    expect(shownAt.size).toBeGreaterThan(0);
    const events = rows(read(dir, 'events.arrow'));
    const after = events.filter((e) => ['like', 'repost', 'quote'].includes(e.action as string) && shownAt.has(e.target as number) && (e.step as number) > shownAt.get(e.target as number)!);
    expect(after).toEqual([]);
    // The same run without the multipliers does see such actions (the test can fail).
    const free = rows(read(run('free', STORY), 'events.arrow'));
    expect(free.filter((e) => ['like', 'repost', 'quote'].includes(e.action as string) && shownAt.has(e.target as number) && (e.step as number) > shownAt.get(e.target as number)!).length).toBeGreaterThan(0);
  });

  it.skipIf(!gpu)('the same bytes on the webgpu backend', () => {
    expectSameFiles(base, run('gpu', ['--backend', 'webgpu'], false));
  });

  it('the same bytes on one thread, and stopped and resumed', async () => {
    expectSameFiles(base, run('one', ['--threads', '1']));
    const stopped = path.join(tmp, 'stopped');
    await runAndStop([...RUN, '--threads', '2', '--checkpoint-every', '1'], stopped, 12, 'SIGINT');
    const resumed = socsim(['run', '--resume', stopped, '--quiet']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expectSameFiles(base, stopped);
  });
});
