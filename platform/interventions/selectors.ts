/**
 * Selectors: which accounts (`agents`, inject's `authors`) and which posts (`posts`) an
 * intervention acts on. A selector is the conjunction of its fields; an empty one matches
 * everything. Posts are those in memory (inside the recommendation window). A `fraction` draws
 * from the counter RNG under the intervention's key, so arms sharing a seed and an intervention
 * draw the same posts and accounts.
 */
import { z } from 'zod';
import { hash } from '../../sim-core/rng.ts';
import type { World } from '../../sim-core/phase.ts';
import { POST_KINDS, VERACITY } from '../posts.ts';
import type { SocialState } from '../state.ts';

const range = z.tuple([z.number().min(-1).max(1), z.number().min(-1).max(1)]).refine(([lo, hi]) => lo <= hi, 'the range [lo, hi] needs lo <= hi');
export const ids = z.array(z.number().int().min(0)).min(1);

/** Which accounts: all listed conditions hold. */
export const agentSelector = z.strictObject({
  agents: ids.optional().describe('Agent ids.'),
  archetypes: ids.optional().describe('Archetype rows (the population\'s age band x leaning x activity tier index).'),
  topFollowers: z.number().int().min(1).optional().describe('Among the k accounts with the most followers at that time (ties: lower id).'),
  fraction: z.number().gt(0).max(1).optional().describe('A random fraction of accounts.'),
  opinion: range.optional().describe('Opinion in [lo, hi].'),
});
export type AgentSelector = z.output<typeof agentSelector>;

/** Which posts (in memory, i.e. inside the recommendation window): all listed conditions hold. */
export const postSelector = z.strictObject({
  tag: z.string().min(1).optional().describe('Posts of an injected story (the inject intervention\'s tag), its reposts and quotes included.'),
  veracity: z.enum(VERACITY).optional().describe('Posts rated this way (inject sets a rating; organic posts are unrated).'),
  topic: z.number().int().min(0).max(254).optional().describe('Topic cluster.'),
  kinds: z.array(z.enum(POST_KINDS)).min(1).optional().describe('Posts of these kinds.'),
  stance: range.optional().describe('Post stance in [lo, hi].'),
  authors: ids.optional().describe('Author ids.'),
  archetypes: ids.optional().describe('Authors\' archetypes.'),
  topFollowers: z.number().int().min(1).optional().describe('Authors among the k accounts with the most followers.'),
  fraction: z.number().gt(0).max(1).optional().describe('A random fraction of posts.'),
});
export type PostSelector = z.output<typeof postSelector>;

/** What a selector field of an intervention selects. */
export type SelectorType = 'agents' | 'posts';

/** Agents with the k largest follower counts (ties: lower id), as a mask. */
function topFollowers(s: SocialState, k: number): Uint8Array {
  const n = s.follows.followers.length;
  const order = Int32Array.from({ length: n }, (_, i) => i).sort((x, y) => s.follows.followers[y] - s.follows.followers[x] || x - y);
  const mask = new Uint8Array(n);
  for (let i = 0; i < Math.min(k, n); i++) mask[order[i]] = 1;
  return mask;
}

/** A test of agent ids against `sel`, as the state stands now; `key` keys its `fraction`. */
export function agentMatcher(s: SocialState, world: World, sel: AgentSelector, key: number): (v: number) => boolean {
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

/** A test of post rows against `sel`, as the state stands now; `key` keys its `fraction` (by post id). */
export function postMatcher(s: SocialState, world: World, sel: PostSelector, key: number): (r: number) => boolean {
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

/** Every live post row (in the window) matching `match` gets `f`, in row order; returns how many. */
export function eachPost(s: SocialState, match: (r: number) => boolean, f: (r: number) => void): number {
  let n = 0;
  for (let r = s.posts.first; r < s.posts.count; r++) {
    if (match(r)) {
      f(r);
      n++;
    }
  }
  return n;
}

/**
 * What the schema cannot check of a selector: ids, archetypes and topics within the world.
 * Returns [field under the selector ('' for the selector itself), message] for the first problem.
 */
export function selectorProblem(sel: AgentSelector | PostSelector, agents: number, archetypes: number, topics: number): [string, string] | undefined {
  const ids = 'agents' in sel ? sel.agents : 'authors' in sel ? sel.authors : undefined;
  const big = ids?.find((v) => v >= agents);
  if (big !== undefined) return ['', `agent id ${big} is not below the number of agents (${agents})`];
  const arch = sel.archetypes?.find((k) => k >= archetypes);
  if (arch !== undefined) return ['archetypes', `archetype ${arch} is not below the number of archetypes (${archetypes})`];
  if ('topic' in sel && sel.topic !== undefined && sel.topic >= topics) return ['topic', `topic ${sel.topic} is not below the number of topic clusters (${topics})`];
  return undefined;
}
