/**
 * The LLM plan of a run, before any model is called (`socsim run|experiment --plan`): rounds,
 * calls per round and in total, prompt tokens counted on each asked archetype's prompt filled with
 * typical figures (its real persona, member count, behaviour and scenario news; representative
 * feed figures), completion tokens bounded by --llm-max-tokens, and the price when one is given.
 *
 * The calls are exact for replies that validate: a round asks every non-empty archetype (a keyed
 * sample of floor(budget / samples) of them when there are more) `samples` times, every
 * `every` steps from step 0. An invalid reply is asked again, up to --llm-retries times, and those
 * calls come on top.
 */
import type { Table } from '../sim-core/table.ts';
import type { Message } from './providers.ts';
import { loadTokenizer, promptTokens, TOKENIZER } from './tokens.ts';
import { usd, type ArchetypeSource, type Prices, type RoundShape } from './cost.ts';

export interface LlmPlan {
  tokenizer: string;
  /** Runs summed (an experiment's; 1 for a run). */
  runs: number;
  steps: number;
  every: number;
  rounds: number;
  /** Non-empty archetypes, and how many a round asks. */
  archetypes: number;
  asked: number;
  samples: number;
  retries: number;
  callsPerRound: number;
  calls: number;
  promptTokensPerRound: number;
  promptTokens: number;
  /** Upper bound: every reply at --llm-max-tokens. */
  completionTokensMax: number;
  maxTokens: number;
  prices?: Prices;
  /** Upper bound, with the completion bound. */
  costUsd?: number;
}

/** Members per archetype (the archetype column counted). */
export function membersOf(agents: Table, archetypes: number): number[] {
  const members = new Array<number>(archetypes).fill(0);
  const col = agents.columns.archetype;
  for (let i = 0; i < agents.length; i++) members[col[i]]++;
  return members;
}

/**
 * The calls and counted prompt tokens of the round at `step` (a sampled round: the mean asked
 * archetype's).
 */
export async function roundShape(src: ArchetypeSource, members: readonly number[], step = 0): Promise<RoundShape & { archetypes: number; asked: number; promptTokens: number }> {
  await loadTokenizer();
  const nonEmpty = members.map((m, k) => (m > 0 ? k : -1)).filter((k) => k >= 0);
  const asked = Math.min(nonEmpty.length, Math.max(1, Math.floor(src.budget / src.samples)));
  const counted = nonEmpty.map((k) => promptTokens(src.typicalPrompt(k, members[k], step)));
  const mean = counted.length ? counted.reduce((a, b) => a + b, 0) / counted.length : 0;
  const calls = asked * src.samples;
  const promptTokensRound = Math.round(asked === nonEmpty.length ? counted.reduce((a, b) => a + b, 0) * src.samples : mean * calls);
  return { every: src.every, calls, maxTokens: src.maxTokens, promptPerCall: calls ? promptTokensRound / calls : 0, archetypes: nonEmpty.length, asked, promptTokens: promptTokensRound };
}

export async function planRun(src: ArchetypeSource, agents: Table, steps: number, prices?: Prices): Promise<LlmPlan> {
  const members = membersOf(agents, src.archetypes);
  const r = await roundShape(src, members);
  const rounds = Math.ceil(steps / src.every);
  // The first round has no trending posts yet; the later ones are alike.
  const later = rounds > 1 ? (await roundShape(src, members, src.every)).promptTokens : 0;
  const calls = rounds * r.calls;
  const plan: LlmPlan = {
    tokenizer: TOKENIZER,
    runs: 1,
    steps,
    every: src.every,
    rounds,
    archetypes: r.archetypes,
    asked: r.asked,
    samples: src.samples,
    retries: src.retries,
    callsPerRound: r.calls,
    calls,
    promptTokensPerRound: later || r.promptTokens,
    promptTokens: r.promptTokens + (rounds - 1) * later,
    completionTokensMax: calls * src.maxTokens,
    maxTokens: src.maxTokens,
  };
  if (prices) {
    plan.prices = prices;
    plan.costUsd = (plan.promptTokens * prices.in + plan.completionTokensMax * prices.out) / 1e6;
  }
  return plan;
}

/** Sums plans (an experiment's runs); the per-round figures are the first run's. */
export function sumPlans(plans: readonly LlmPlan[]): LlmPlan | undefined {
  if (!plans.length) return undefined;
  const add = (k: 'calls' | 'promptTokens' | 'completionTokensMax' | 'rounds' | 'runs') => plans.reduce((t, p) => t + p[k], 0);
  const costs = plans.map((p) => p.costUsd);
  return {
    ...plans[0],
    runs: add('runs'),
    calls: add('calls'),
    rounds: add('rounds'),
    promptTokens: add('promptTokens'),
    completionTokensMax: add('completionTokensMax'),
    ...(costs.every((c) => c !== undefined) && { costUsd: costs.reduce((t, c) => t + c!, 0) }),
  };
}

const n = (x: number) => Math.round(x).toLocaleString('en-US');

/** The plan as lines for a terminal. */
export function formatPlan(p: LlmPlan): string[] {
  const lines = [
    `LLM calls: ${n(p.callsPerRound)} per round (${p.asked} of ${p.archetypes} non-empty archetypes x ${p.samples} sample${p.samples === 1 ? '' : 's'}${p.runs > 1 ? ', in the first run' : ''}), ${n(p.rounds)} rounds (every ${p.every} steps of ${p.steps}${p.runs > 1 ? ` in each of ${p.runs} runs` : ''}): ${n(p.calls)} calls`,
    `  invalid replies are asked again, up to ${p.retries} more call${p.retries === 1 ? '' : 's'} each, on top of these`,
    `prompt tokens: ${n(p.promptTokensPerRound)} per round${p.rounds > 1 ? ' after the first' : ''}, ${n(p.promptTokens)} in all (counted with ${p.tokenizer}; for other models' tokenizers an estimate)`,
    `completion tokens: at most ${n(p.completionTokensMax)} (${n(p.calls)} calls x --llm-max-tokens ${p.maxTokens})`,
  ];
  if (p.prices && p.costUsd !== undefined) {
    const pin = (p.promptTokens * p.prices.in) / 1e6;
    lines.push(`cost: at most ${usd(p.costUsd)} (prompt ${usd(pin)} at $${p.prices.in}/M, completion at most ${usd(p.costUsd - pin)} at $${p.prices.out}/M)`);
  } else {
    lines.push('cost: give --llm-price-in and --llm-price-out (USD per million tokens) for a price');
  }
  return lines;
}
