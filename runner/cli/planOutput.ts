/** What `socsim run|experiment --plan` prints: the LLM plan, or why there is none. */
import { formatPlan, type LlmPlan } from '../../llm-archetypes/plan.ts';

/** The plan's lines; `what` says what it covers ("this run", "12 runs"). */
export function planText(plan: LlmPlan | undefined, what: string): string {
  if (!plan) return `plan for ${what}: no LLM calls (--llm heuristic, or a scenario without LLM archetypes)\n`;
  return `plan for ${what} (no model was called):\n${formatPlan(plan).map((l) => `  ${l}`).join('\n')}\n`;
}
