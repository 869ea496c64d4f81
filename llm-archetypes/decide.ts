/**
 * The archetypes phase (AgentTorch's method, plus a cache, exact replay and failure accounting):
 * every `every` steps, for each non-empty archetype (a deterministic sample of them when the call
 * budget is smaller), build an observation summary of what its online members saw and did, ask
 * the LLM M times, average the valid replies and write them into the behaviour table, which every
 * member then samples from. Invalid replies are retried; when every attempt fails the archetype
 * keeps its last good parameters and the failure is counted.
 *
 * It is two phases. `archetypes-ask` runs right after `act`: it summarises what online members
 * saw (their feeds) and did (this step's actions) with their opinions at the start of the step, and
 * sends the calls. `archetypes` runs after `update`: it waits for the replies and writes them to
 * the behaviour table. The calls are in flight while `apply` and `update` run, and the decision
 * taken from step t's observations governs step t + 1 onward (the same as a decision taken before
 * `recommend` one step later; docs/llm-archetypes.md).
 */
import type { ArrowFileAppender, ColumnData } from '../sim-core/io/arrowFile.ts';
import type { Phase } from '../sim-core/phase.ts';
import { hash } from '../sim-core/rng.ts';
import { NPARAMS, P, reapplyOverrides, type BehaviourParam } from '../platform/behaviour.ts';
import { feedArgs, USER_CHUNK, type SocialState } from '../platform/state.ts';
import { ACTIONS } from '../platform/events.ts';
import { kernels as obsKernels, NACTIONS, OBS_WIDTH, STANCE_BINS } from './kernels.ts';
import { archetypeMessages, typicalValues } from './prompt.ts';
import type { CostMeter } from './cost.ts';
import { roundShape } from './plan.ts';
import type { ArchetypeSource } from './cost.ts';
import { countTokens, promptTokens as countPrompt } from './tokens.ts';
import { parseReply, REPLY_PARAMS, type FailureKind, type ParsedReply, type ReplyParam } from './reply.ts';
import type { LlmClient, Message } from './providers.ts';
import { kernels as core } from '../sim-core/kernels.ts';
import { InputError } from '../sim-core/errors.ts';

export interface ArchetypeOptions {
  client: LlmClient;
  /** Decide every this many steps (the first decision at the end of step 0). */
  every: number;
  /** Most calls per decision round (archetypes x samples); the rest keep their parameters. */
  budget: number;
  samples: number;
  temperature: number;
  maxTokens: number;
  concurrency: number;
  /** Extra attempts for replies that are not valid JSON or break the schema. */
  retries: number;
  personas: string[];
  /** Scenario news for the prompt (e.g. a fact-check label); called each round. */
  news?: (step: number) => string[];
  template?: string;
  /** Counts what the run spends and holds it to --llm-max-cost (cost.ts). */
  cost?: CostMeter;
}

interface TaskResult {
  key: string;
  parsed: ParsedReply;
  calls: number;
  tokens: number;
  latency: number;
  hits: number;
  promptTokens: number;
  completionTokens: number;
  /** Calls the server answered (not cache hits) and the tokens it billed for them. */
  billed: [calls: number, prompt: number, completion: number];
}

// Codes of archetypes.arrow's failure column: new kinds go at the end, so recorded codes keep their meaning.
const FAILURE_KINDS: FailureKind[] = ['', 'http_429', 'http_5xx', 'http_4xx', 'timeout', 'connection', 'bad_body', 'bad_json', 'schema', 'out_of_range', 'http_auth'];

/** Runs tasks with at most `n` in flight; results in task order. */
async function limited<T>(n: number, tasks: Array<() => Promise<T>>): Promise<T[]> {
  const out = new Array<T>(tasks.length);
  let next = 0;
  let failed: unknown;
  const worker = async () => {
    while (next < tasks.length && failed === undefined) {
      const i = next++;
      try {
        out[i] = await tasks[i]();
      } catch (e) {
        failed = e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, tasks.length) }, worker));
  if (failed !== undefined) throw failed;
  return out;
}

const pct = (x: number) => `${Math.round(100 * x)}%`;
const fmt = (x: number) => (Math.round(x * 1000) / 1000).toString();

export function archetypesPhases(s: SocialState, o: ArchetypeOptions): [Phase, Phase] {
  const K = s.behaviour.archetypes;
  let members: number[] = [];
  let out: ArrowFileAppender | undefined;
  const paramCols = REPLY_PARAMS.map((p) => `p_${p}`);
  const schema = (rows: number, v?: Record<string, ArrayLike<number> | string[]>): ColumnData[] => {
    const num = (name: string, type: 'i32' | 'f32' | 'f64' | 'u16' | 'u8'): ColumnData => ({ name, type, values: (v?.[name] as never) ?? new (type === 'f64' ? Float64Array : type === 'f32' ? Float32Array : type === 'u16' ? Uint16Array : type === 'u8' ? Uint8Array : Int32Array)(rows) });
    return [
      num('step', 'i32'),
      num('archetype', 'u16'),
      num('members', 'i32'),
      { name: 'prompt_hash', type: 'utf8', values: (v?.prompt_hash as string[]) ?? [] },
      num('samples', 'i32'),
      num('valid', 'i32'),
      ...paramCols.map((c) => num(c, 'f32')),
      { name: 'reason', type: 'utf8', values: (v?.reason as string[]) ?? [] },
      { name: 'example_post', type: 'utf8', values: (v?.example_post as string[]) ?? [] },
      { name: 'provider', type: 'utf8', values: (v?.provider as string[]) ?? [] },
      { name: 'model', type: 'utf8', values: (v?.model as string[]) ?? [] },
      num('latency_ms', 'f64'),
      num('prompt_tokens', 'i32'),
      num('completion_tokens', 'i32'),
      num('cache_hit', 'u8'),
      { name: 'failure', type: 'u8', values: (v?.failure as never) ?? new Uint8Array(rows), dictionary: FAILURE_KINDS.map((f) => f || 'none') },
    ];
  };
  let pending: { chosen: number[]; results: Promise<TaskResult[]> } | undefined;
  let firstRound = true;
  const currentOf = (k: number) => REPLY_PARAMS.map((p) => `${p}=${fmt(s.behaviour.values[k * NPARAMS + P[p as BehaviourParam]])}`).join(', ');
  const newsOf = (step: number) => (o.news?.(step) ?? []).join(' ') || 'nothing notable.';
  const source: ArchetypeSource = {
    archetypes: K,
    every: o.every,
    budget: o.budget,
    samples: o.samples,
    maxTokens: o.maxTokens,
    retries: o.retries,
    typicalPrompt: (k, m, step) => archetypeMessages(typicalValues(o.personas[k] ?? `archetype ${k}`, m, currentOf(k), newsOf(step), step), o.template),
  };
  if (o.cost) o.cost.source = source;
  const counting = o.cost?.counting ?? false;
  const ask: Phase = {
    name: 'archetypes-ask',
    reads: ['archetype', 'opinion'],
    writes: [],
    tables: { reads: ['feeds', 'events', 'posts', 'behaviour'], writes: [] },
    async init(world) {
      members = await world.exec.reduce(core.countCodes, { codes: world.agents.columns.archetype, k: K }, world.agents.length);
      if (world.out) out = world.out.appender('archetypes.arrow', schema(0));
      if (counting) o.cost!.attach(await roundShape(source, members));
    },
    async run(world, ctx) {
      if (ctx.step % o.every !== 0) return;
      const obs = await world.exec.reduce(
        obsKernels.observe,
        {
          ...feedArgs(s),
          archetype: world.agents.columns.archetype,
          opinion: world.agents.columns.opinion,
          stance: s.posts.cols.stance,
          evAction: s.events.action,
          evCount: s.events.count,
          maxEvents: s.events.max,
          archetypes: K,
        },
        s.feeds.active.length,
        { chunkRows: USER_CHUNK },
      );
      // Which archetypes to ask: all non-empty ones, or a keyed sample within the budget.
      let chosen = members.map((m, k) => (m > 0 ? k : -1)).filter((k) => k >= 0);
      const cap = Math.max(1, Math.floor(o.budget / o.samples));
      if (chosen.length > cap) {
        const key = ctx.key('archetypes.sample');
        chosen = chosen
          .map((k) => [hash(key, k), k] as const)
          .sort((x, y) => x[0] - y[0] || x[1] - y[1])
          .slice(0, cap)
          .map(([, k]) => k)
          .sort((x, y) => x - y);
      }
      // The like counts may be held on a device (posts.ts COUNTED_COLUMNS).
      await s.posts.forHost([{ array: s.posts.cols.likes, length: s.posts.count }]);
      const trending = describeTrending(s);
      const news = newsOf(ctx.step);
      const prompts = chosen.map((k) => {
        const w = k * OBS_WIDTH;
        const online = obs[w] ?? 0;
        const items = obs[w + 2] ?? 0;
        const bins = Array.from({ length: STANCE_BINS }, (_, b) => obs[w + 4 + b] ?? 0);
        const acts = Array.from({ length: NACTIONS }, (_, a) => [ACTIONS[a], obs[w + 4 + STANCE_BINS + a] ?? 0] as const).filter(([n, c]) => c > 0 && n !== 'refresh');
        const values = {
          persona: o.personas[k] ?? `archetype ${k}`,
          members: members[k],
          online,
          opinion: online > 0 ? fmt((obs[w + 1] ?? 0) / online) : 'unknown',
          items,
          in_network: items > 0 ? pct((obs[w + 3] ?? 0) / items) : '0%',
          stance_mix: items > 0 ? ['strongly against', 'against', 'neutral', 'for', 'strongly for'].map((l, b) => `${l} ${pct(bins[b] / items)}`).join(', ') : 'nothing',
          trending,
          actions: acts.length ? acts.map(([n, c]) => `${c} ${n}`).join(', ') : 'nothing',
          events: news,
          current: currentOf(k),
        };
        return archetypeMessages(values, o.template) as Message[];
      });
      // The counted prompt tokens of this round's first attempts bound the next round's cost.
      if (counting) o.cost!.roundAsked(prompts.reduce((t, m) => t + countPrompt(m), 0) * o.samples, prompts.length * o.samples);
      // One task per (archetype, sample); each retries invalid replies with a new attempt index.
      const tasks = chosen.flatMap((_, i) =>
        Array.from({ length: o.samples }, (__, m) => async (): Promise<TaskResult> => {
          let calls = 0;
          let tokens = 0;
          let latency = 0;
          let hits = 0;
          let promptTokens = 0;
          let completionTokens = 0;
          const billed: TaskResult['billed'] = [0, 0, 0];
          for (let attempt = 0; ; attempt++) {
            const r = await o.client.call({ messages: prompts[i], temperature: o.temperature, maxTokens: o.maxTokens, sample: m, attempt });
            calls++;
            tokens += r.promptTokens + r.completionTokens;
            promptTokens += r.promptTokens;
            completionTokens += r.completionTokens;
            latency += r.latencyMs;
            if (r.cacheHit) hits++;
            else if (counting && r.text !== undefined) {
              // What the server billed; the tokenizer's count when it reports no usage.
              billed[0]++;
              billed[1] += r.promptTokens || countPrompt(prompts[i]);
              billed[2] += r.completionTokens || countTokens(r.text ?? '');
            }
            const parsed: ParsedReply = r.text !== undefined ? parseReply(r.text) : { failure: r.failure, reason: '', example: '' };
            const ok = parsed.params !== undefined;
            if (ok || attempt >= o.retries || (r.text === undefined && r.failure !== '')) {
              return { key: r.key, parsed, calls, tokens, latency, hits, promptTokens, completionTokens, billed };
            }
          }
        }),
      );
      const results = limited(o.concurrency, tasks);
      // Failures surface when the round is collected; keep an early rejection from going unhandled.
      results.catch(() => {});
      pending = { chosen, results };
    },
  };
  const collect: Phase = {
    name: 'archetypes',
    // What the run has spent, carried through checkpoints so a resumed run holds the same limit.
    state: o.cost && { cost: o.cost.state },
    reads: [],
    writes: [],
    tables: { reads: ['behaviour'], writes: ['behaviour'] },
    metrics: { llm_calls: 'i32', llm_tokens: 'i32', llm_failures: 'i32', llm_out_of_range: 'i32', llm_cache_hits: 'i32', llm_archetypes_updated: 'i32' },
    async run(_world, ctx) {
      if (!pending) {
        for (const m of ['llm_calls', 'llm_tokens', 'llm_failures', 'llm_out_of_range', 'llm_cache_hits', 'llm_archetypes_updated']) ctx.metric(m, 0);
        return;
      }
      const { chosen } = pending;
      const results = await pending.results;
      pending = undefined;
      // A server that refuses every call of the first round for the key will refuse the rest:
      // stop, rather than run on with heuristic behaviour under an LLM's name.
      if (firstRound && results.length > 0 && results.every((r) => r.parsed.failure === 'http_auth')) {
        throw new InputError(`the LLM server refused all ${results.length} calls of the first archetype round with HTTP 401/403 (not authorised); check the API key (SOCSIM_LLM_API_KEY or OPENAI_API_KEY) and that it may use model ${o.client.model}`);
      }
      firstRound = false;
      const B = s.behaviour.values;
      let calls = 0;
      let tokens = 0;
      let failures = 0;
      let clamped = 0;
      let hits = 0;
      let updated = 0;
      const rows: Record<string, number[] | string[]> = Object.fromEntries(
        ['step', 'archetype', 'members', 'samples', 'valid', ...paramCols, 'latency_ms', 'prompt_tokens', 'completion_tokens', 'cache_hit', 'failure', 'prompt_hash', 'reason', 'example_post', 'provider', 'model'].map((c) => [c, []]),
      );
      chosen.forEach((k, i) => {
        const rs = results.slice(i * o.samples, (i + 1) * o.samples);
        const valid = rs.filter((r) => r.parsed.params);
        const avg = {} as Record<ReplyParam, number>;
        for (const p of REPLY_PARAMS) avg[p] = valid.length ? valid.reduce((t, r) => t + r.parsed.params![p], 0) / valid.length : B[k * NPARAMS + P[p as BehaviourParam]];
        if (valid.length) {
          for (const p of REPLY_PARAMS) B[k * NPARAMS + P[p as BehaviourParam]] = avg[p];
          // Interventions' setParam changes hold from their hour on, whatever the archetype decides.
          reapplyOverrides(s.behaviour, k);
          updated++;
        }
        const failure = rs.map((r) => r.parsed.failure).find((f) => f !== '') ?? '';
        for (const r of rs) {
          o.cost?.spend(...r.billed);
          calls += r.calls;
          tokens += r.tokens;
          hits += r.hits;
          if (!r.parsed.params) failures++;
          else if (r.parsed.failure === 'out_of_range') clamped++;
        }
        const push = (c: string, v: number | string) => (rows[c] as Array<number | string>).push(v);
        push('step', ctx.step);
        push('archetype', k);
        push('members', members[k]);
        push('samples', rs.length);
        push('valid', valid.length);
        REPLY_PARAMS.forEach((p, j) => push(paramCols[j], B[k * NPARAMS + P[p as BehaviourParam]]));
        push('latency_ms', rs.reduce((t, r) => t + r.latency, 0));
        push('prompt_tokens', rs.reduce((t, r) => t + r.promptTokens, 0));
        push('completion_tokens', rs.reduce((t, r) => t + r.completionTokens, 0));
        push('cache_hit', rs.every((r) => r.hits === r.calls) ? 1 : 0);
        push('failure', FAILURE_KINDS.indexOf(failure));
        push('prompt_hash', rs[0]?.key ?? '');
        push('reason', valid[0]?.parsed.reason ?? '');
        push('example_post', valid[0]?.parsed.example ?? '');
        // The provider that served this run: `replay` in a replay, whose rows are otherwise the
        // recorded run's, column for column.
        push('provider', o.client.provider);
        push('model', o.client.model);
      });
      if (out && chosen.length) {
        const n = chosen.length;
        const typed: Record<string, ArrayLike<number> | string[]> = {};
        for (const c of ['step', 'members', 'samples', 'valid', 'prompt_tokens', 'completion_tokens']) typed[c] = Int32Array.from(rows[c] as number[]);
        typed.archetype = Uint16Array.from(rows.archetype as number[]);
        for (const c of paramCols) typed[c] = Float32Array.from(rows[c] as number[]);
        typed.latency_ms = Float64Array.from(rows.latency_ms as number[]);
        typed.cache_hit = Uint8Array.from(rows.cache_hit as number[]);
        typed.failure = Uint8Array.from(rows.failure as number[]);
        for (const c of ['prompt_hash', 'reason', 'example_post', 'provider', 'model']) typed[c] = rows[c] as string[];
        out.append(schema(n, typed), n);
      }
      ctx.metric('llm_calls', calls);
      ctx.metric('llm_tokens', tokens);
      ctx.metric('llm_failures', failures);
      ctx.metric('llm_out_of_range', clamped);
      ctx.metric('llm_cache_hits', hits);
      ctx.metric('llm_archetypes_updated', updated);
    },
  };
  return [ask, collect];
}

/** The three most engaged posts in the window (likes + 2 x reposts), as the prompt shows them. */
function describeTrending(s: SocialState): string {
  const c = s.posts.cols;
  const top: number[] = [];
  const score = (r: number) => c.likes[r] + 2 * c.reposts[r];
  for (let r = s.posts.rowsBefore(s.posts.minStep); r < s.posts.count; r++) {
    if (top.length < 3 || score(r) > score(top[2])) {
      top.push(r);
      top.sort((a, b) => score(b) - score(a) || a - b);
      if (top.length > 3) top.pop();
    }
  }
  if (!top.length) return 'nothing yet.';
  return top.map((r) => `a post with stance ${fmt(c.stance[r])} (${c.likes[r]} likes, ${c.reposts[r]} reposts)`).join('; ');
}
