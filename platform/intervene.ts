/**
 * The `intervene` phase: first in every social step, it applies the scenario's interventions that
 * fall on this step, each through its kind (interventions/registry.ts), and logs each one in
 * interventions.arrow: step, index in the list, name, kind, and how many posts and accounts it
 * touched (a kind may write its rows itself, e.g. assign's one row per step it assigned posts in).
 */
import type { ArrowFileAppender, ColumnData } from '../sim-core/io/arrowFile.ts';
import { InputError } from '../sim-core/errors.ts';
import type { Phase, World } from '../sim-core/phase.ts';
import { keyOf, streamOf } from '../sim-core/rng.ts';
import type { AnyInterventionKind, ApplyContext, RunContext, Touched } from './interventions/kind.ts';
import { groupNames, interventionKinds, kindOf, tagNames } from './interventions/registry.ts';
import { agentMatcher, eachPost, postMatcher, selectorProblem, type AgentSelector, type PostSelector } from './interventions/selectors.ts';
import { stepOf, type InterventionBase } from './interventions/time.ts';
import { announceHostWrites, type SocialState } from './state.ts';

const LOG_SCHEMA = (names: readonly string[], kinds: readonly string[]): ColumnData[] => [
  { name: 'step', type: 'i32', values: new Int32Array(0) },
  { name: 'index', type: 'i32', values: new Int32Array(0) },
  { name: 'name', type: 'u8', values: new Uint8Array(0), dictionary: names },
  { name: 'kind', type: 'u8', values: new Uint8Array(0), dictionary: kinds },
  { name: 'posts', type: 'i32', values: new Int32Array(0) },
  { name: 'agents', type: 'i32', values: new Int32Array(0) },
];

/** Checks what the schema cannot: selectors within the world (ids, archetypes, topics), then each kind's own checks. */
function checkAgainstWorld(s: SocialState, world: World, list: readonly InterventionBase[]): void {
  list.forEach((iv, i) => {
    const fail = (field: string, msg: string): never => {
      throw new InputError(`parameter interventions.${i}.${field}: ${msg}`);
    };
    const k = kindOf(iv.kind);
    for (const field of Object.keys(k.selectors ?? {})) {
      const sel = (iv as unknown as Record<string, AgentSelector | PostSelector | undefined>)[field];
      const problem = sel && selectorProblem(sel, world.agents.length, s.behaviour.archetypes, s.topics);
      if (problem) fail(problem[0] ? `${field}.${problem[0]}` : field, problem[1]);
    }
    k.checkWorld?.(iv as never, { social: s, world, fail });
  });
}

export function intervenePhase(s: SocialState, list: readonly InterventionBase[]): Phase {
  s.posts.groups = groupNames(list);
  s.posts.tags = tagNames(list);
  const kindNames = interventionKinds().map((k) => k.name);
  const kindOfItem = list.map((iv) => kindOf(iv.kind));
  // The kinds in this run's list, in registry order: their hooks run every step.
  const present = interventionKinds().filter((k) => kindOfItem.includes(k));
  const names = list.map((iv, i) => iv.name ?? `${iv.kind}-${i}`);
  const at: number[] = [];
  let log: ArrowFileAppender | undefined;
  // Carried across steps (checkpointed with `s`): each present kind's own state.
  const st = { social: s, kinds: Object.fromEntries(present.filter((k) => k.state).map((k) => [k.name, k.state!()])) as Record<string, object> };
  const row = (step: number, i: number, t: Touched) => {
    log?.append(
      [
        { name: 'step', type: 'i32', values: Int32Array.of(step) },
        { name: 'index', type: 'i32', values: Int32Array.of(i) },
        { name: 'name', type: 'u8', values: Uint8Array.of(i), dictionary: names },
        { name: 'kind', type: 'u8', values: Uint8Array.of(kindNames.indexOf(list[i].kind)), dictionary: kindNames },
        { name: 'posts', type: 'i32', values: Int32Array.of(t.posts) },
        { name: 'agents', type: 'i32', values: Int32Array.of(t.agents) },
      ],
      1,
    );
  };
  const runContext = (world: World, k: AnyInterventionKind): RunContext<object> => ({ social: s, world, state: st.kinds[k.name], log: row });
  const applyContext = (world: World, k: AnyInterventionKind, i: number, step: number): ApplyContext<object> => {
    const key = keyOf(world.seed, streamOf(`intervention.${i}`), 0);
    return {
      ...runContext(world, k),
      step,
      index: i,
      key,
      matchPosts: (sel, k2 = key) => postMatcher(s, world, sel, k2),
      matchAgents: (sel, k2 = key) => agentMatcher(s, world, sel, k2),
      eachPost: (match, f) => eachPost(s, match, f),
    };
  };

  return {
    name: 'intervene',
    state: st,
    reads: ['archetype', 'opinion'],
    writes: [],
    // What the bundled kinds touch; a study's own kinds get the whole state (their apply's docs).
    tables: { reads: ['posts', 'behaviour', 'moderation', 'stories'], writes: ['posts', 'behaviour', 'moderation', 'stories', 'cascades'] },
    init(world) {
      checkAgainstWorld(s, world, list);
      for (const iv of list) at.push(stepOf(iv, world.stepSeconds));
      if (world.out) log = world.out.appender('interventions.arrow', LOG_SCHEMA(names, kindNames));
    },
    async run(world, ctx) {
      for (const k of present) k.beginStep?.({ ...runContext(world, k), step: ctx.step });
      // Selectors read agent and post columns in plain JavaScript: every device copy comes back first
      // (forHost without ranges).
      if (at.includes(ctx.step)) await s.posts.forHost();
      for (let i = 0; i < list.length; i++) {
        if (at[i] !== ctx.step) continue;
        const touched = kindOfItem[i].apply(list[i] as never, applyContext(world, kindOfItem[i], i, ctx.step));
        if (touched) row(ctx.step, i, touched);
      }
      // Labels, removals, rank factors and injected posts: the post columns the device may hold.
      if (at.includes(ctx.step)) announceHostWrites(s);
      for (const k of present) k.endStep?.({ ...runContext(world, k), step: ctx.step });
    },
    finish(world) {
      for (const k of present) k.finish?.(runContext(world, k));
    },
  };
}
