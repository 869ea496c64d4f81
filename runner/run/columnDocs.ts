/**
 * What each file of a run, experiment or calibration directory holds, and what each of its columns
 * means: the text of docs/run-directory.md, whose file and column lists are read from the files
 * the writers write (scripts/docs). A column a writer adds without a line here fails
 * `npm run docs` and the docs test, naming the file and the column, so this table and the writers
 * cannot drift apart. Column names are those of the Arrow schemas; a metric is documented once,
 * whatever scenario writes it.
 */
import { REPLY_PARAMS } from '../../llm-archetypes/reply.ts';

export interface FileDoc {
  /** One or two sentences: when the file is written and what a row is. */
  about: string;
  /** Column name -> meaning. */
  columns: Readonly<Record<string, string>>;
}

/** metrics.arrow's columns, by name, for every bundled scenario. */
export const METRIC_DOCS: Readonly<Record<string, string>> = {
  step: 'the state after this many steps, as in agents/step-N.arrow (the first step\'s row is step 1); classic models write a first row, step 0, for the initial state',
  time: 'simulated seconds at that state: step x step_seconds (the end of the step)',
  // classic models
  susceptible: 'SIR/SIS: agents susceptible at the end of the step',
  infectious: 'SIR/SIS: agents infectious at the end of the step',
  recovered: 'SIR: agents recovered at the end of the step',
  new_infections: 'SIR/SIS: agents infected during the step',
  vote_0: 'voter: agents holding state 0 (one column per state, vote_0 .. vote_{states-1})',
  vote_1: 'voter: agents holding state 1',
  ic_new: 'independent cascade: agents activated during the step',
  ic_active: 'independent cascade: agents active so far',
  ic_fraction: 'independent cascade: ic_active / agents',
  lt_new: 'linear threshold: agents that adopted during the step',
  lt_active: 'linear threshold: agents adopted so far',
  lt_fraction: 'linear threshold: lt_active / agents',
  opinion_mean: 'mean opinion of all agents at the end of the step',
  opinion_var: 'variance of the opinions',
  opinion_bimodality: 'bimodality coefficient of the opinions (Pfister et al. 2013; above 5/9 suggests two modes)',
  // the social platform
  active_users: 'users online in the step (at least one session)',
  actions_refresh: 'feed reads (one per active user)',
  actions_like: 'likes (up-votes)',
  actions_dislike: 'dislikes (down-votes)',
  actions_repost: 'reposts',
  actions_quote: 'quotes',
  actions_comment: 'comments',
  actions_report: 'reports',
  actions_mute: 'mutes of a post\'s author',
  actions_unfollow: 'unfollows',
  actions_follow: 'follows (who-to-follow)',
  actions_post: 'original posts',
  actions_nothing: 'feed items read with no action',
  posts_original: 'original posts created in the step (injected stories included)',
  posts_repost: 'reposts created in the step',
  posts_quote: 'quotes created in the step',
  posts_comment: 'comments created in the step',
  feed_items: 'items shown in all feeds of the step',
  feed_stance_distance: 'mean |reader opinion - item stance| over the items shown',
  echo_chamber_index: '1 - feed_stance_distance / 2: 1 when users see only their own stance',
  feed_diversity: 'mean over active users of the share of distinct topic clusters among their feed items',
  in_network_share: 'share of the items shown that came from followed accounts',
  posts_in_window: 'posts held in memory (the recommendation window) at the end of the step',
  notes_written: 'With platform.notes: Community Notes written in the step',
  note_ratings: 'With platform.notes: ratings of notes given in the step',
  notes_shown: 'With platform.notes: notes rated helpful after the latest scoring (shown under their posts)',
  posts_noted: 'With platform.notes: posts with a note rated helpful after the latest scoring, in the window or past it',
  cascades_changed: 'reshare cascades that grew in the step',
  cascade_max_scale_this_step: 'largest scale (unique users) among the reshare cascades that grew in the step',
  cascade_max_depth_this_step: 'largest depth among the reshare cascades that grew in the step',
  cascade_max_breadth_this_step: 'largest breadth of one level among the reshare cascades that grew in the step',
  cascade_max_scale_so_far: 'largest reshare-cascade scale of the run so far',
  cascade_max_depth_so_far: 'largest reshare-cascade depth of the run so far',
  cascade_max_breadth_so_far: 'largest reshare-cascade breadth of the run so far',
  conversations_changed: 'conversations (comment trees) that grew in the step',
  conversation_max_scale_this_step: 'as cascade_max_scale_this_step, for conversations',
  conversation_max_depth_this_step: 'as cascade_max_depth_this_step, for conversations',
  conversation_max_breadth_this_step: 'as cascade_max_breadth_this_step, for conversations',
  conversation_max_scale_so_far: 'as cascade_max_scale_so_far, for conversations',
  conversation_max_depth_so_far: 'as cascade_max_depth_so_far, for conversations',
  conversation_max_breadth_so_far: 'as cascade_max_breadth_so_far, for conversations',
  story_scale: 'the scenario\'s seeded story: unique users in its reshare cascade (0 without one)',
  story_depth: 'the seeded story\'s cascade depth',
  story_max_breadth: 'the seeded story\'s cascade breadth',
  follows_pending: 'follows and unfollows not yet folded into the following rows (folded every rebuildEvery steps)',
  // LLM archetypes (--llm openai|replay)
  llm_calls: 'LLM calls made in the step (0 in steps without a decision round)',
  llm_tokens: 'tokens used by those calls (prompt and completion)',
  llm_failures: 'archetype decisions that failed in the step (the archetype kept its last good parameters)',
  llm_out_of_range: 'reply values clamped to their allowed range',
  llm_cache_hits: 'calls answered from the response cache',
  llm_archetypes_updated: 'archetypes whose behaviour row the round rewrote',
};

const AGENT_COLUMNS: Readonly<Record<string, string>> = {
  agent: 'agent id (the row number; with --graph FILE the renumbered node id)',
  age_band: 'age band',
  gender: 'gender',
  region: 'region',
  leaning: 'political leaning (five levels)',
  chronotype: 'the 24-hour activity profile the user follows',
  activity_tier: 'activity tier (low, medium, high), from the activity level',
  topic: 'the user\'s main topic prototype (index)',
  archetype: 'archetype id (age band x leaning x activity tier)',
  activity: 'mean sessions per hour before the hour-of-day profile',
  opinion: 'opinion in [-1, 1] (float32)',
  state: 'contagion state (SIR/SIS, independent cascade, linear threshold)',
  vote: 'voter model: the state held',
  threshold: 'linear threshold: the agent\'s adoption threshold',
};

const TREE_COLUMNS: Readonly<Record<string, string>> = {
  step: 'the step in which the tree grew, counted from 0 (between the states step and step + 1)',
  root: 'id of the tree\'s root post',
  scale: 'unique users in the tree',
  depth: 'largest depth (the root is depth 0)',
  max_breadth: 'most nodes at one depth',
  size: 'posts in the tree, the root included',
};

const GRAPH_COLUMNS: Readonly<Record<string, string>> = {
  source: 'the follower (undirected graphs: one end of the edge, each edge once)',
  target: 'the account followed',
};

/** Files of a run directory, by path relative to it (`agents/step-NNNNNN.arrow` for every snapshot). */
export const RUN_FILE_DOCS: Readonly<Record<string, FileDoc>> = {
  'metrics.arrow': { about: 'One row per step, appended as the run goes; which columns depends on the scenario\'s phases (below, every metric any bundled scenario writes). Steps count as the snapshots do: row `step = N` is the state after N steps and joins agents/step-N.arrow on `step` (progress shows the same numbers); the social platform\'s metrics are what happened in the N-th step, so its rows start at step 1, while classic models first write a row `step = 0` with the initial state. Event tables (posts, cascades, conversations, interventions, archetypes, events) count the step in which something happened from 0: step s lies between the states s and s + 1.', columns: METRIC_DOCS },
  'agents/step-NNNNNN.arrow': { about: 'The agent columns after N steps: at the start (step-000000), every --snapshot-every steps and at the end. Categorical columns are dictionary-encoded. Which columns depends on the scenario.', columns: AGENT_COLUMNS },
  'graph.arrow': { about: 'The follow graph the run started from: one row per edge.', columns: GRAPH_COLUMNS },
  'graph-end.arrow': { about: 'The follow edges at the end, when follows or unfollows changed them.', columns: GRAPH_COLUMNS },
  'posts.arrow': {
    about: 'Social scenarios: one row per post, written as posts leave the recommendation window and at the end.',
    columns: {
      id: 'post id: its creation rank',
      author: 'agent id of the author',
      step: 'step in which it was posted, counted from 0',
      kind: 'original, repost, quote or comment',
      parent: 'the post replied to or reshared (-1 for an original)',
      root: 'root of its tree: the reshare cascade for reposts and quotes, the conversation for comments',
      root_author: 'author of the root',
      depth: 'depth in its tree (0 for a root)',
      stance: 'stance on the opinion scale [-1, 1]',
      cluster: 'nearest topic cluster',
      flags: 'bit set: 1 story, 2 fact-check label, 4 reported, 8 removed, 16 a Community Note shown',
      veracity: 'unrated (organic), true or false (injected stories; reshares inherit it)',
      novelty: 'standard deviations above ordinary content (organic 0; reshares inherit it)',
      rank: 'ranking score multiplier (1; downrank lowers it)',
      group: 'treatment group of post-level random assignment ("" for none)',
      treat_vote: 'the artificial vote the assignment gave it at creation (+1, -1, 0)',
      tag: 'the tag of an injected story ("" for none)',
      likes: 'likes received',
      dislikes: 'dislikes received',
      reposts: 'reposts received',
      quotes: 'quotes received',
      comments: 'comments received',
      reports: 'reports received',
      impressions: 'times shown in a feed',
      topic: 'topic vector (fixed-size list of float32)',
    },
  },
  'cascades.arrow': { about: 'Social scenarios: per step, one row for every reshare cascade (reposts and quotes) that grew. A post never reshared has no row.', columns: TREE_COLUMNS },
  'conversations.arrow': { about: 'Social scenarios: the same for conversations (comment trees).', columns: TREE_COLUMNS },
  'interventions.arrow': {
    about: 'Social scenarios with interventions: one row per applied intervention (assignment: one row per step).',
    columns: {
      step: 'step at whose start it was applied, counted from 0 (it acts on the state of that many steps)',
      index: 'its position in the scenario\'s interventions list',
      name: 'its name (the kind and position unless named)',
      kind: 'its kind (label, remove, downrank, suspend, inject, setRanker, setParam, assign)',
      posts: 'posts it touched',
      agents: 'accounts it touched',
    },
  },
  'stories.arrow': {
    about: 'With inject interventions: one row per injected post, written at the end.',
    columns: {
      id: 'post id',
      tag: 'the inject intervention\'s tag',
      veracity: 'true or false',
      author: 'agent id of the author',
      step: 'step in which it was posted, counted from 0',
      novelty: 'novelty in standard deviations',
      stance: 'stance',
      reach: 'unique users it was shown to, with its reshares',
      sharers: 'users who reshared it',
      depth: 'depth of its reshare cascade',
      max_breadth: 'breadth of its reshare cascade',
      hours_to_reach_100: 'simulated hours until 100 users had seen it (NaN if never)',
      hours_to_reach_1000: 'simulated hours until 1,000 users had seen it (NaN if never)',
    },
  },
  'notes.arrow': {
    about: 'With platform.notes: one row per Community Note, written at the end.',
    columns: {
      id: 'note id (its rank in writing order, from 0)',
      post: 'id of the post it is about',
      writer: 'agent id of the contributor who wrote it',
      step: 'step in which it was written, counted from 0',
      status: 'its status after the last scoring: needs_more_ratings, helpful (shown) or not_helpful',
      status_step: 'step of its last status change (its writing step if none)',
      intercept: 'bridging scoring: the note intercept of the last scoring (0 when not fitted or with majority scoring)',
      factor: 'bridging scoring: the note factor of the last scoring (0 when not fitted or with majority scoring)',
      helpful: 'ratings of Yes (helpful) it received',
      ratings: 'ratings it received',
    },
  },
  'note-ratings.arrow': {
    about: 'With platform.notes: one row per rating of a note, appended each step.',
    columns: {
      rater: 'agent id of the contributor who rated',
      note: 'note id (notes.arrow)',
      value: '1 helpful (Yes), 0.5 somewhat, 0 not helpful (No)',
      step: 'step in which it was given, counted from 0',
    },
  },
  'note-status.arrow': {
    about: 'With platform.notes: one row per change of a note\'s status at a scoring, appended each step.',
    columns: {
      note: 'note id (notes.arrow)',
      step: 'step of the scoring, counted from 0 (at its end)',
      status: 'the new status: needs_more_ratings, helpful (shown) or not_helpful',
      intercept: 'bridging scoring: the note intercept (0 with majority scoring)',
      factor: 'bridging scoring: the note factor (0 with majority scoring)',
    },
  },
  'archetypes.arrow': {
    about: 'With --llm openai|replay: one row per archetype decision.',
    columns: {
    step: 'step of the decision round, counted from 0 (made at its end)',
    archetype: 'archetype id',
    members: 'agents in the archetype',
    prompt_hash: 'SHA-256 of the prompt',
    samples: 'replies asked for',
    valid: 'replies that passed the schema',
    ...Object.fromEntries(REPLY_PARAMS.map((p) => [`p_${p}`, `the averaged reply's ${p}, clamped to its range`])),
    reason: 'the reply\'s one-sentence reason',
    example_post: 'the reply\'s example post',
    provider: 'openai or replay',
    model: 'the model',
    latency_ms: 'milliseconds the call took (in a replay: the recorded figure)',
    prompt_tokens: 'prompt tokens',
    completion_tokens: 'completion tokens',
    cache_hit: '1 when the reply came from the cache',
    failure: 'none, or the kind of failure (the archetype then kept its last good parameters)',
  },
  },
  'events.arrow': {
    about: 'With --events: the full action trace, one row per action.',
    columns: {
      step: 'step of the action, counted from 0',
      agent: 'the acting user',
      action: 'refresh, like, dislike, repost, quote, comment, report, mute, unfollow, follow, post or nothing',
      target: 'the post acted on, or the account followed or unfollowed (-1 when none)',
    },
  },
};

/** Top-level tables of an experiment directory (`socsim experiment`, `socsim validate`). */
export const EXPERIMENT_FILE_DOCS: Readonly<Record<string, FileDoc>> = {
  'summary.arrow': {
    about: 'One row per run and group; then one float64 column per outcome of the experiment file (NaN where undefined).',
    columns: { arm: 'the arm', seed: 'the seed', group: 'the group of a grouped outcome ("" for ungrouped outcomes)' },
  },
  'effects.arrow': {
    about: 'One row per grid point, arm, outcome and group (grid columns first, when the experiment has a grid). Intervals are 95% Student-t across seeds; diff is paired by seed.',
    columns: {
      arm: 'the arm',
      group: 'the group ("" for ungrouped outcomes)',
      outcome: 'the outcome',
      versus: 'what diff compares with: `arm <reference>` or `group <referenceGroup>`',
      n: 'seeds with a finite value',
      mean: 'mean over seeds',
      ci_low: 'lower end of the 95% interval of the mean',
      ci_high: 'upper end',
      diff: 'mean of the per-seed differences from the reference',
      diff_ci_low: 'lower end of the paired 95% interval of diff',
      diff_ci_high: 'upper end',
      unpaired_ci_low: 'lower end of the unpaired (Welch) 95% interval of the same difference',
      unpaired_ci_high: 'upper end',
    },
  },
  'series.arrow': {
    about: 'One row per grid point, arm, metric and step (the initial-state row included): the metric across seeds.',
    columns: { arm: 'the arm', metric: 'the metrics.arrow column', step: 'the step, as in metrics.arrow (the state after that many steps)', n: 'seeds', mean: 'mean over seeds', ci_low: 'lower end of the 95% interval', ci_high: 'upper end' },
  },
};

/** Tables of a calibration directory (`socsim calibrate`). */
export const CALIBRATION_FILE_DOCS: Readonly<Record<string, FileDoc>> = {
  'calibration.arrow': {
    about: 'One row per run of the search; then one float64 column per fitted parameter (its dotted name).',
    columns: {
      eval: 'evaluation number (a parameter point)',
      generation: 'CMA-ES generation',
      seed: 'the run\'s seed',
      loss: 'the objective from this seed\'s runs alone',
      objective: 'the evaluation\'s loss, of the means over seeds: the NRMSE of the mean series against the target; with --moments, the moment loss (+ W x NRMSE^2 with a target too)',
    },
  },
  'moments.arrow': {
    about: 'With --moments: one row per moment at the best point (as best.json\'s moments).',
    columns: {
      moment: 'the moment\'s id',
      kind: 'effect, pattern or summary',
      n: 'seeds with a finite value',
      value: 'simulated: mean over the seeds',
      ci_low: '95% t interval over the seeds, low end (NaN below 2 seeds)',
      ci_high: '95% t interval over the seeds, high end',
      target: 'the published value',
      target_low: 'the published 95% interval, low end (value - 1.96 se when a standard error was given)',
      target_high: 'the published 95% interval, high end',
      sigma: 'the published standard error: se, or (high - low) / 3.92',
      weight: '1 / sigma^2',
      contribution: 'weight x (value - target)^2 / K: its share of the moment loss (K moments)',
      source: 'paper, and where in it',
    },
  },
  'target.arrow': {
    about: 'The target series read from --target (also copied into best/); then one column per matched metric.',
    columns: { step: 'the step' },
  },
};

