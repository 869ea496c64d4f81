/**
 * What an LLM run spends, and the limit on it. The archetype layer (decide.ts) attaches its round
 * shape (how often it asks, how many calls a round makes, a prompt-token estimate per call) and
 * reports every call the server answered; the run loop asks `stopBefore(step)` at each step
 * boundary and stops, as an interrupted run does (resumable), when the round that step would
 * start could take the spent total past `--llm-max-cost`.
 *
 * Spent tokens are the server's own counts (its `usage`), or the tokenizer's (tokens.ts) when a
 * server reports none; calls served from a cache cost nothing. A round's cost before it is asked
 * is bounded by its calls x (prompt tokens per call + --llm-max-tokens): the prompt tokens are
 * counted on the previous round's prompts (on the plan's estimate for the first round); replies
 * that are invalid and asked again add calls the bound does not foresee.
 */
import { InputError } from '../sim-core/errors.ts';
import type { Message } from './providers.ts';

/** What the archetype layer exposes for plans and budgets (decide.ts builds it). */
export interface ArchetypeSource {
  archetypes: number;
  every: number;
  budget: number;
  samples: number;
  maxTokens: number;
  retries: number;
  /** The prompt of archetype k in the round at `step`, filled with typical figures. */
  typicalPrompt(k: number, members: number, step: number): Message[];
}

/** USD per million tokens. */
export interface Prices {
  in: number;
  out: number;
}

export interface CostOptions {
  priceIn?: number;
  priceOut?: number;
  maxCost?: number;
}

/** What the archetype layer tells the meter about its rounds. */
export interface RoundShape {
  every: number;
  /** Calls of one round (first attempts): archetypes asked x samples. */
  calls: number;
  maxTokens: number;
  /** Prompt tokens per call estimated before any round (plan.ts). */
  promptPerCall: number;
}

export interface Spent {
  prompt_tokens: number;
  completion_tokens: number;
  calls: number;
  cost_usd?: number;
}

/** Prices from the options: both or neither; an InputError naming the missing flag otherwise. */
export function pricesOf(o: CostOptions): Prices | undefined {
  if (o.priceIn === undefined && o.priceOut === undefined) {
    if (o.maxCost !== undefined) throw new InputError('--llm-max-cost needs the prices: add --llm-price-in USD and --llm-price-out USD (per million prompt and completion tokens)');
    return undefined;
  }
  if (o.priceIn === undefined || o.priceOut === undefined) throw new InputError(`${o.priceIn === undefined ? '--llm-price-in' : '--llm-price-out'} is missing: give both --llm-price-in and --llm-price-out (USD per million prompt and completion tokens)`);
  return { in: o.priceIn, out: o.priceOut };
}

export const usd = (x: number) => `$${x < 0.01 && x > 0 ? x.toPrecision(2) : x.toFixed(2)}`;

export class CostMeter {
  readonly prices: Prices | undefined;
  readonly maxCost: number | undefined;
  /**
   * Carried from step to step (a checkpoint saves it, as the archetype phase's state): spent
   * prompt tokens, completion tokens and calls, then the last round's counted prompt tokens and
   * calls (0 before the first round).
   */
  readonly state = new Float64Array(5);
  private shape: RoundShape | undefined;
  /** The archetype layer of the run, once it is built (for a plan). */
  source: ArchetypeSource | undefined;

  constructor(o: CostOptions) {
    this.prices = pricesOf(o);
    this.maxCost = o.maxCost;
  }

  /** Whether calls must be counted with the tokenizer (a price or a limit is set). */
  get counting(): boolean {
    return this.prices !== undefined;
  }

  /** The round shape the limit checks against, once the archetypes' members are known. */
  attach(shape: RoundShape): void {
    this.shape = shape;
  }

  /** Calls the server answered (not served from a cache), with the tokens it billed. */
  spend(calls: number, promptTokens: number, completionTokens: number): void {
    this.state[0] += promptTokens;
    this.state[1] += completionTokens;
    this.state[2] += calls;
  }

  /** The counted prompt tokens of a round's first attempts, for the next round's bound. */
  roundAsked(promptTokens: number, calls: number): void {
    this.state[3] = promptTokens;
    this.state[4] = calls;
  }

  cost(prompt: number, completion: number): number {
    return this.prices ? (prompt * this.prices.in + completion * this.prices.out) / 1e6 : 0;
  }

  spent(): Spent {
    const [p, c, calls] = this.state;
    return { prompt_tokens: p, completion_tokens: c, calls, ...(this.prices && { cost_usd: Math.round(this.cost(p, c) * 1e6) / 1e6 }) };
  }

  /** The most a round could cost before it is asked (first attempts, replies at max tokens). */
  roundBound(): number {
    const r = this.shape;
    if (!r) return 0;
    const perCall = this.state[4] > 0 ? this.state[3] / this.state[4] : r.promptPerCall;
    return this.cost(perCall * r.calls, r.maxTokens * r.calls);
  }

  /**
   * Why the run must stop before `step` (0-based, as phases count), or undefined: the step starts
   * a round and its bound would take the spent total past the limit.
   */
  stopBefore(step: number): string | undefined {
    const r = this.shape;
    if (this.maxCost === undefined || !r || step % r.every !== 0) return undefined;
    const spent = this.cost(this.state[0], this.state[1]);
    const bound = this.roundBound();
    if (spent + bound <= this.maxCost) return undefined;
    return `stopped after ${step} steps: the next LLM round (${r.calls} calls, up to ${usd(bound)}) could take the ${usd(spent)} spent past --llm-max-cost ${usd(this.maxCost)}`;
  }
}
