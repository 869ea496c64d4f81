/**
 * Crowd notes against professional labels: 30 false and 30 true stories, injected at hour 0, with
 * no moderation, a professional fact-check label on the false ones at hour 12 (fact-checks lag
 * misinformation by about 13-14 h: Shao et al., WWW 2016 companion; Zubiaga et al., PLoS ONE 2016),
 * or Community Notes (platform/notes/) scored by X's bridging algorithm or by majority vote.
 *
 * Published comparisons: a note shown under a post cut its reposts by 46.1% and likes by 44.1%
 * afterwards (Slaughter et al., PNAS 2025; the model's shown-note multipliers are these), but over
 * the post's life by only 11.6%, so about three quarters of a noted post's reposts come before its
 * note shows (the ratio of the two published averages); Chuai et al. (CSCW 2024) found the
 * roll-out of notes did not reduce engagement with misleading posts overall, notes being too slow.
 *
 * The notes arms' contributors (2% of accounts), rates and rating queue are this study's choices
 * (no published values; the default 0.15% of accounts leaves a 20,000-agent run ~30 contributors);
 * raters judge notes by the post's veracity and their distance from its stance with the platform's
 * neutral defaults. Arms share seeds (common random numbers): every arm is the world of `none`
 * until its moderation first acts.
 *
 * Outcomes: false_reach and true_reach (mean unique users shown each story); hours_to_note (mean
 * hours from a false story's posting to the first helpful note on any of its posts, over stories
 * that got one); share_before_note (of the reshares of noted false stories, the share made before
 * the story's first note showed); false_noted and true_noted (share of stories with a shown note:
 * on true stories, a false positive); helpful_both_sides (share of shown notes with a helpful
 * rating from each side of the opinion scale).
 *
 *   npx socsim experiment experiments/community-notes.ts --out runs/community-notes --jobs 2
 */
import { custom, defineExperiment, rows, type RunView } from 'socsim';

const stories = [
  { kind: 'inject', hour: 0, count: 30, stance: 0.5, veracity: 'false', novelty: 1.2, tag: 'false-story' },
  { kind: 'inject', hour: 0, count: 30, stance: 0.5, veracity: 'true', novelty: 1.2, tag: 'true-story' },
];
const notes = (scoring: string) => ({ platform: { notes: { enabled: true, scoring, contributors: 0.02, rate: 0.5, queue: 5 } } });

/** Each story's root id by tag, and the first step at which any of its posts showed a helpful note. */
function noted(run: RunView): { roots: Map<number, string>; shownAt: Map<number, number>; hours: number } {
  const roots = new Map<number, string>();
  for (const s of run.rows('stories.arrow')) roots.set(s.id as number, s.tag as string);
  const rootOf = new Map<number, number>();
  for (const p of run.rows('posts.arrow')) if (roots.has(p.root as number)) rootOf.set(p.id as number, p.root as number);
  const postOf = new Map<number, number>();
  for (const n of run.rows('notes.arrow')) postOf.set(n.id as number, n.post as number);
  const shownAt = new Map<number, number>();
  for (const c of run.rows('note-status.arrow')) {
    if (c.status !== 'helpful') continue;
    const root = rootOf.get(postOf.get(c.note as number)!);
    if (root !== undefined && !shownAt.has(root)) shownAt.set(root, c.step as number);
  }
  return { roots, shownAt, hours: (run.manifest.step_seconds ?? 3600) / 3600 };
}

/** Share of the stories tagged `tag` that showed a note (0 without notes). */
function notedShare(run: RunView, tag: string): number {
  if (!hasNotes(run)) return 0;
  const { roots, shownAt } = noted(run);
  const all = [...roots.values()].filter((t) => t === tag).length;
  return [...shownAt.keys()].filter((r) => roots.get(r) === tag).length / all;
}

const hasNotes = (run: RunView) => run.manifest.files?.other?.includes('notes.arrow') ?? false;

export default defineExperiment({
  name: 'community-notes',
  description: 'false and true stories under no moderation, a professional label at hour 12, or Community Notes scored by bridging or by majority',
  scenario: 'social-feed',
  params: { story: { count: 0 }, interventions: stories },
  arms: {
    none: {},
    'label-h12': { interventions: [...stories, { kind: 'label', hour: 12, posts: { veracity: 'false' } }] },
    'notes-bridging': notes('bridging'),
    'notes-majority': notes('majority'),
  },
  reference: 'none',
  seeds: 10,
  defaults: { agents: 20000, hours: 48 },
  outcomes: {
    false_reach: rows('stories.arrow', { where: (r) => r.veracity === 'false', mean: (r) => r.reach as number }),
    true_reach: rows('stories.arrow', { where: (r) => r.veracity === 'true', mean: (r) => r.reach as number }),
    hours_to_note: custom((run) => {
      if (!hasNotes(run)) return NaN;
      const { roots, shownAt, hours } = noted(run);
      const posted = new Map<number, number>();
      for (const s of run.rows('stories.arrow')) posted.set(s.id as number, s.step as number);
      // A status comes at the end of its scoring step.
      const waits = [...shownAt].filter(([root]) => roots.get(root) === 'false-story').map(([root, step]) => (step + 1 - posted.get(root)!) * hours);
      return waits.length ? waits.reduce((a, b) => a + b, 0) / waits.length : NaN;
    }, 'mean hours from a false story to its first shown note'),
    share_before_note: custom((run) => {
      if (!hasNotes(run)) return NaN;
      const { roots, shownAt } = noted(run);
      let before = 0;
      let all = 0;
      for (const p of run.rows('posts.arrow')) {
        const root = p.root as number;
        if (roots.get(root) !== 'false-story' || !shownAt.has(root) || (p.kind !== 'repost' && p.kind !== 'quote')) continue;
        all++;
        if ((p.step as number) <= shownAt.get(root)!) before++;
      }
      return all ? before / all : NaN;
    }, "share of noted false stories' reshares made before the note showed"),
    false_noted: custom((run) => notedShare(run, 'false-story'), 'share of false stories with a shown note'),
    true_noted: custom((run) => notedShare(run, 'true-story'), 'share of true stories with a shown note (false positives)'),
    helpful_both_sides: custom((run) => {
      if (!hasNotes(run)) return NaN;
      const opinion = run.table('agents/final.arrow').getChild('opinion')!.toArray() as Float32Array;
      const shown = new Set<number>();
      for (const n of run.rows('notes.arrow')) if (n.status === 'helpful') shown.add(n.id as number);
      const sides = new Map<number, number>();
      for (const r of run.rows('note-ratings.arrow')) {
        if (!shown.has(r.note as number) || r.value !== 1) continue;
        sides.set(r.note as number, (sides.get(r.note as number) ?? 0) | (opinion[r.rater as number] < 0 ? 1 : 2));
      }
      return shown.size ? [...shown].filter((k) => sides.get(k) === 3).length / shown.size : NaN;
    }, 'share of shown notes rated helpful by raters on both sides'),
  },
});
