/**
 * Can feed design fix social media? The prosocial interventions Larooij and Törnberg ("Can We Fix
 * Social Media? Testing Prosocial Interventions using Generative Social Simulation", arXiv
 * 2508.03385, 2025) tested with 500 LLM agents, at platform scale against the default
 * interest-ranked feed: a chronological feed, a bridging ranker (posts approved across opinion
 * sides first), hidden social statistics, a boost of out-partisan content, and downranked dominant
 * voices (their sixth, hidden biographies, has no counterpart here: socsim's agents have none).
 * Their outcomes, measured here at the end of a week: echo chambers (in-group exposure: the feed
 * echo-chamber index; in-group interaction: the share of reshares of posts on the resharer's own
 * side), concentration of attention (the Gini coefficients of followers and of engagement
 * received), and amplification of extreme voices (mean |stance| of the most-seen 1% of posts).
 * Published directions (their paper's summary, as reported): only modest improvements, some
 * harmful; chronological cut attention inequality most but amplified extreme content; bridging
 * weakened the link between partisanship and engagement but raised attention inequality; boosting
 * out-partisan content had no significant effect. The boost multiplier (2) and the dominant
 * voices' factor (0.5) have no published values: this experiment's choices.
 *
 *   npx socsim experiment experiments/prosocial-feeds.ts --out runs/prosocial-feeds --jobs 2
 */
import { custom, defineExperiment, metric, type RunView } from 'socsim';

/** Gini coefficient of non-negative values (0: equal; near 1: one holds everything). */
function gini(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const n = v.length;
  const total = v.reduce((a, b) => a + b, 0);
  if (n === 0 || total === 0) return NaN;
  let weighted = 0;
  for (let i = 0; i < n; i++) weighted += (2 * (i + 1) - n - 1) * v[i];
  return weighted / (n * total);
}

const agents = (run: RunView) => run.table('agents/final.arrow').numRows;

export default defineExperiment({
  name: 'prosocial-feeds',
  description: 'the prosocial feed interventions of Larooij and Törnberg 2025 against the default interest-ranked feed',
  scenario: 'social-feed',
  params: { story: { count: 0 } },
  arms: {
    default: {},
    chronological: { platform: { ranker: 'chronological' } },
    bridging: { platform: { ranker: 'bridging' } },
    'hidden-counts': { platform: { counts: 'hidden' } },
    'out-partisan-boost': { platform: { outPartisan: 2 } },
    'dominant-downranked': { platform: { dominant: { factor: 0.5 } } },
  },
  reference: 'default',
  seeds: 5,
  defaults: { agents: 20000, hours: 168 },
  outcomes: {
    in_group_exposure: metric('echo_chamber_index').mean(),
    in_group_reshares: custom((run) => {
      const opinion = run.table('agents/final.arrow').getChild('opinion')!.toArray() as Float32Array;
      const stance = new Map<number, number>();
      let same = 0;
      let all = 0;
      for (const p of run.rows('posts.arrow')) {
        stance.set(p.id as number, p.stance as number);
        if (p.kind !== 'repost' && p.kind !== 'quote') continue;
        const s = stance.get(p.parent as number);
        if (s === undefined) continue;
        all++;
        if (opinion[p.author as number] < 0 === s < 0) same++;
      }
      return all ? same / all : NaN;
    }, "share of reshares of posts on the resharer's side"),
    followers_gini: custom((run) => {
      const followers = new Array<number>(agents(run)).fill(0);
      // graph-end.arrow when follows changed the graph, else the graph as set up.
      for (const e of run.rows(run.manifest.files?.graph_end ?? 'graph.arrow')) followers[e.target as number]++;
      return gini(followers);
    }, 'Gini coefficient of follower counts at the end'),
    engagement_gini: custom((run) => {
      const got = new Array<number>(agents(run)).fill(0);
      for (const p of run.rows('posts.arrow')) got[p.author as number] += (p.likes as number) + (p.reposts as number) + (p.quotes as number);
      return gini(got);
    }, 'Gini coefficient of likes and reshares received per account'),
    top_stance_extremity: custom((run) => {
      const posts = [...run.rows('posts.arrow')].map((p) => [p.impressions as number, Math.abs(p.stance as number), p.id as number] as const);
      posts.sort((a, b) => b[0] - a[0] || a[2] - b[2]);
      const top = posts.slice(0, Math.max(1, Math.floor(posts.length / 100)));
      return top.reduce((t, p) => t + p[1], 0) / top.length;
    }, 'mean |stance| of the most-seen 1% of posts'),
  },
});
