/**
 * The `intervene` phase: first in every social step, it applies the scenario's interventions
 * (interventions.ts) that fall on this step and logs each one in interventions.arrow: step, index
 * in the list, name, kind, and how many posts and accounts it touched. Post-level assignment
 * touches posts as they are created, so it gets one row per step in which it assigned posts.
 */
import type { ArrowFileAppender, ColumnData } from '../sim-core/io/arrowFile.ts';
import { InputError } from '../sim-core/errors.ts';
import type { Phase, World } from '../sim-core/phase.ts';
import { hash, keyOf, streamOf } from '../sim-core/rng.ts';
import { NPARAMS, P, type BehaviourOverride, type BehaviourParam } from './behaviour.ts';
import { FLAG, KIND, POST_KINDS, VERACITY } from './posts.ts';
import { addPost } from './newPost.ts';
import { groupNames, INTERVENTION_KINDS, SETTABLE_PLATFORM, stepOf, tagNames, type AgentSelector, type Intervention, type PostSelector } from './interventions.ts';
import { announceHostWrites, socialConfig, type SocialState } from './state.ts';

const LOG_SCHEMA = (names: readonly string[]): ColumnData[] => [
  { name: 'step', type: 'i32', values: new Int32Array(0) },
  { name: 'index', type: 'i32', values: new Int32Array(0) },
  { name: 'name', type: 'u8', values: new Uint8Array(0), dictionary: names },
  { name: 'kind', type: 'u8', values: new Uint8Array(0), dictionary: INTERVENTION_KINDS },
  { name: 'posts', type: 'i32', values: new Int32Array(0) },
  { name: 'agents', type: 'i32', values: new Int32Array(0) },
];

/** Applies the overrides to archetype row k of the behaviour table (after something rewrote it). */
export function reapplyOverrides(s: SocialState, k: number): void {
  for (const o of s.behaviourOverrides) if (o.archetypes === null || o.archetypes.includes(k)) applyOverride(s, o, k);
}

function applyOverride(s: SocialState, o: BehaviourOverride, k: number): void {
  const i = k * NPARAMS + o.param;
  s.behaviour.values[i] = o.value !== undefined ? o.value : s.behaviour.values[i] * o.scale!;
}

function setPath(obj: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let at = obj;
  for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
  at[keys[keys.length - 1]] = value;
}

/** Agents with the k largest follower counts (ties: lower id), as a mask. */
function topFollowers(s: SocialState, k: number): Uint8Array {
  const n = s.followers.length;
  const order = Int32Array.from({ length: n }, (_, i) => i).sort((x, y) => s.followers[y] - s.followers[x] || x - y);
  const mask = new Uint8Array(n);
  for (let i = 0; i < Math.min(k, n); i++) mask[order[i]] = 1;
  return mask;
}

function agentMatcher(s: SocialState, world: World, sel: AgentSelector, key: number): (v: number) => boolean {
  const top = sel.topFollowers ? topFollowers(s, sel.topFollowers) : undefined;
  const ids = sel.agents ? new Set(sel.agents) : undefined;
  const arch = sel.archetypes ? new Set(sel.archetypes) : undefined;
  const A = world.agents.columns.archetype;
  const O = world.agents.columns.opinion;
  return (v) =>
    (!ids || ids.has(v)) &&
    (!arch || arch.has(A[v])) &&
    (!top || top[v] === 1) &&
    (!sel.opinion || (O[v] >= sel.opinion[0] && O[v] <= sel.opinion[1])) &&
    (sel.fraction === undefined || hash(key, v) / 4294967296 < sel.fraction);
}

function postMatcher(s: SocialState, world: World, sel: PostSelector, key: number): (r: number) => boolean {
  const c = s.posts.cols;
  const top = sel.topFollowers ? topFollowers(s, sel.topFollowers) : undefined;
  const authors = sel.authors ? new Set(sel.authors) : undefined;
  const arch = sel.archetypes ? new Set(sel.archetypes) : undefined;
  const A = world.agents.columns.archetype;
  const tag = sel.tag !== undefined ? s.posts.tags.indexOf(sel.tag) : -1;
  const ver = sel.veracity !== undefined ? VERACITY.indexOf(sel.veracity) : -1;
  const kinds = sel.kinds ? sel.kinds.reduce((m, k) => m | (1 << POST_KINDS.indexOf(k)), 0) : -1;
  return (r) =>
    (tag < 0 || c.tag[r] === tag) &&
    (ver < 0 || c.veracity[r] === ver) &&
    (sel.topic === undefined || c.cluster[r] === sel.topic) &&
    (kinds < 0 || (kinds & (1 << c.kind[r])) !== 0) &&
    (!sel.stance || (c.stance[r] >= sel.stance[0] && c.stance[r] <= sel.stance[1])) &&
    (!authors || authors.has(c.author[r])) &&
    (!arch || arch.has(A[c.author[r]])) &&
    (!top || top[c.author[r]] === 1) &&
    (sel.fraction === undefined || hash(key, s.posts.base + r) / 4294967296 < sel.fraction);
}

/** Every live post row (in the window) matching `match` gets `f`; returns how many. */
function eachPost(s: SocialState, match: (r: number) => boolean, f: (r: number) => void): number {
  let n = 0;
  for (let r = s.posts.first; r < s.posts.count; r++) {
    if (match(r)) {
      f(r);
      n++;
    }
  }
  return n;
}

/** Checks what the schema cannot: ids, archetypes and topics within the world, platform values. */
function checkAgainstWorld(s: SocialState, world: World, list: readonly Intervention[]): void {
  const n = world.agents.length;
  const K = s.behaviour.archetypes;
  const bad = (i: number, field: string, msg: string) => new InputError(`parameter interventions.${i}.${field}: ${msg}`);
  list.forEach((iv, i) => {
    const sel = iv.kind === 'suspend' ? iv.agents : iv.kind === 'inject' ? iv.authors : 'posts' in iv ? iv.posts : undefined;
    const where = iv.kind === 'suspend' ? 'agents' : iv.kind === 'inject' ? 'authors' : 'posts';
    const ids = sel && ('agents' in sel ? sel.agents : 'authors' in sel ? sel.authors : undefined);
    if (ids?.some((v) => v >= n)) throw bad(i, where, `agent id ${ids.find((v) => v >= n)} is not below the number of agents (${n})`);
    if (sel?.archetypes?.some((k) => k >= K)) throw bad(i, `${where}.archetypes`, `archetype ${sel.archetypes.find((k) => k >= K)} is not below the number of archetypes (${K})`);
    if (sel && 'topic' in sel && sel.topic !== undefined && sel.topic >= s.topics) throw bad(i, `${where}.topic`, `topic ${sel.topic} is not below the number of topic clusters (${s.topics})`);
    if (iv.kind === 'inject' && typeof iv.topic === 'number' && iv.topic >= s.topics) throw bad(i, 'topic', `topic ${iv.topic} is not below the number of topic clusters (${s.topics})`);
    if (iv.kind === 'setParam') {
      if (iv.archetypes?.some((k) => k >= K)) throw bad(i, 'archetypes', `archetype ${iv.archetypes.find((k) => k >= K)} is not below the number of archetypes (${K})`);
      if (iv.param.startsWith('platform.')) {
        const cfg = structuredClone(s.cfg) as unknown as Record<string, unknown>;
        setPath(cfg, iv.param.slice('platform.'.length), iv.value);
        const r = socialConfig.safeParse(cfg);
        if (!r.success) throw bad(i, 'value', `${iv.param} = ${JSON.stringify(iv.value)}: ${r.error.issues[0].message}`);
      }
    }
  });
}

export function intervenePhase(s: SocialState, list: readonly Intervention[]): Phase {
  s.posts.groups = groupNames(list);
  s.posts.tags = tagNames(list);
  const names = list.map((iv, i) => iv.name ?? `${iv.kind}-${i}`);
  const at: number[] = [];
  let log: ArrowFileAppender | undefined;
  // Carried across steps (checkpointed with `s`): which assign row is open and its step.
  const st = { social: s, assignIndex: -1, assignStep: -1 };
  const row = (step: number, i: number, posts: number, agents: number) => {
    log?.append(
      [
        { name: 'step', type: 'i32', values: Int32Array.of(step) },
        { name: 'index', type: 'i32', values: Int32Array.of(i) },
        { name: 'name', type: 'u8', values: Uint8Array.of(i), dictionary: names },
        { name: 'kind', type: 'u8', values: Uint8Array.of(INTERVENTION_KINDS.indexOf(list[i].kind)), dictionary: INTERVENTION_KINDS },
        { name: 'posts', type: 'i32', values: Int32Array.of(posts) },
        { name: 'agents', type: 'i32', values: Int32Array.of(agents) },
      ],
      1,
    );
  };
  /** Logs the posts the open assignment gave a group during its last step. */
  const closeAssignStep = () => {
    if (s.assign && st.assignStep >= 0 && s.assign.assigned > 0) row(st.assignStep, st.assignIndex, s.assign.assigned, 0);
    if (s.assign) s.assign.assigned = 0;
  };

  const apply = (world: World, iv: Intervention, i: number, step: number): [number, number] => {
    const key = keyOf(world.seed, streamOf(`intervention.${i}`), 0);
    const c = s.posts.cols;
    switch (iv.kind) {
      case 'label':
        if (iv.reshare !== undefined) s.cfg.labels.reshare = iv.reshare;
        if (iv.like !== undefined) s.cfg.labels.like = iv.like;
        return [eachPost(s, postMatcher(s, world, iv.posts, key), (r) => (c.flags[r] |= FLAG.factCheck)), 0];
      case 'remove':
        return [eachPost(s, postMatcher(s, world, iv.posts, key), (r) => (c.flags[r] |= FLAG.removed)), 0];
      case 'downrank':
        return [eachPost(s, postMatcher(s, world, iv.posts, key), (r) => (c.rank[r] *= iv.factor)), 0];
      case 'suspend': {
        const match = agentMatcher(s, world, iv.agents, key);
        let agents = 0;
        for (let v = 0; v < world.agents.length; v++) {
          if (s.suspended[v] === 0 && match(v)) {
            s.suspended[v] = 1;
            agents++;
          }
        }
        // The activate kernel may hold a device copy (sim-core/gpu/executor.ts).
        world.exec.hostWrote?.(s.suspended);
        const posts = eachPost(s, (r) => s.suspended[c.author[r]] === 1 || s.suspended[c.root_author[r]] === 1, (r) => (c.flags[r] |= FLAG.removed));
        return [posts, agents];
      }
      case 'inject': {
        const sampleKey = iv.sample !== undefined ? keyOf(world.seed, streamOf(`sample.${iv.sample}`), 0) : key;
        const match = agentMatcher(s, world, iv.authors, sampleKey);
        const cand: number[] = [];
        for (let v = 0; v < world.agents.length; v++) if (s.suspended[v] === 0 && match(v)) cand.push(v);
        // A random sample of `count` of them: the smallest keyed hashes (ties: lower id).
        const chosen = cand
          .map((v) => [hash(sampleKey, v, 1), v] as const)
          .sort((x, y) => x[0] - y[0] || x[1] - y[1])
          .slice(0, iv.count)
          .map(([, v]) => v)
          .sort((x, y) => x - y);
        const D = s.posts.dim;
        const tag = s.posts.tags.indexOf(iv.tag);
        const veracity = VERACITY.indexOf(iv.veracity);
        chosen.forEach((u, j) => {
          const t = iv.topic === 'random' ? hash(key, j, 2) % s.topics : iv.topic;
          const id = addPost(s, { author: u, step, kind: KIND.original, parent: -1, stance: iv.stance, topic: s.prototypes, topicOffset: t * D, flags: 0, veracity, novelty: iv.novelty, tag });
          s.stories.register({ id, tag, veracity, author: u, step, novelty: iv.novelty, stance: iv.stance }, world.agents.length);
        });
        return [chosen.length, chosen.length];
      }
      case 'setRanker':
        s.cfg.ranker = iv.ranker;
        return [0, 0];
      case 'setParam': {
        if (iv.param.startsWith('platform.')) {
          setPath(s.cfg as unknown as Record<string, unknown>, iv.param.slice('platform.'.length), iv.value);
          return [0, 0];
        }
        const o: BehaviourOverride = { param: P[iv.param.slice('behaviour.'.length) as BehaviourParam], archetypes: iv.archetypes ?? null, value: iv.value as number | undefined, scale: iv.scale };
        s.behaviourOverrides.push(o);
        let agents = 0;
        for (let k = 0; k < s.behaviour.archetypes; k++) if (o.archetypes === null || o.archetypes.includes(k)) applyOverride(s, o, k);
        const A = world.agents.columns.archetype;
        for (let v = 0; v < world.agents.length; v++) if (o.archetypes === null || o.archetypes.includes(A[v])) agents++;
        return [0, agents];
      }
      case 'assign': {
        closeAssignStep();
        const groups = Object.entries(iv.groups);
        let cum = 0;
        const until = iv.untilStep ?? (iv.untilHour !== undefined ? stepOf({ hour: iv.untilHour }, world.stepSeconds) : Infinity);
        s.assign = {
          key,
          kinds: iv.kinds.reduce((m, k) => m | (1 << POST_KINDS.indexOf(k)), 0),
          codes: groups.map(([g]) => s.posts.groups.indexOf(g)),
          cumulative: groups.map(([, g]) => (cum += g.share)),
          votes: groups.map(([, g]) => g.vote),
          until,
          assigned: 0,
        };
        st.assignIndex = i;
        return [0, 0];
      }
    }
  };

  return {
    name: 'intervene',
    state: st,
    reads: ['archetype', 'opinion'],
    writes: [],
    init(world) {
      checkAgainstWorld(s, world, list);
      for (const iv of list) at.push(stepOf(iv, world.stepSeconds));
      if (world.out) log = world.out.appender('interventions.arrow', LOG_SCHEMA(names));
    },
    async run(world, ctx) {
      closeAssignStep();
      // Selectors read agent columns in plain JavaScript: bring device copies back first.
      if (at.includes(ctx.step)) await world.exec.sync?.();
      for (let i = 0; i < list.length; i++) {
        if (at[i] !== ctx.step) continue;
        const [posts, agents] = apply(world, list[i], i, ctx.step);
        if (list[i].kind !== 'assign') row(ctx.step, i, posts, agents);
      }
      // Labels, removals, rank factors and injected posts: the post columns the device may hold.
      if (at.includes(ctx.step)) announceHostWrites(world, s);
      st.assignStep = s.assign && ctx.step < s.assign.until ? ctx.step : -1;
    },
    finish(world) {
      closeAssignStep();
      if (world.out && list.some((iv) => iv.kind === 'inject')) {
        const cols = s.stories.columns(s.posts.tags, world.stepSeconds / 3600);
        world.out.writeFile('stories.arrow', cols, s.stories.size);
      }
    },
  };
}
