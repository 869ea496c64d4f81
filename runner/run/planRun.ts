/**
 * `socsim run --plan`: what a run's LLM archetypes would ask, before any model is called. The
 * scenario is set up as the run would set it up (the population decides which archetypes have
 * members; the personas and behaviour fill their prompts), on the CPU, with a client that refuses
 * every call; nothing is written and no step runs.
 */
import { InputError } from '../../sim-core/errors.ts';
import { openBackend } from '../../sim-core/backend.ts';
import { llmOptions, setupLlm } from '../../llm-archetypes/setup.ts';
import { planRun, type LlmPlan } from '../../llm-archetypes/plan.ts';
import type { Scenario } from './defineScenario.ts';
import { paramError } from './strictParams.ts';
import type { RunOptions } from './runOptions.ts';

/** The run's LLM plan; undefined for a run without an LLM (--llm heuristic) or without archetypes. */
export async function planScenario(scenario: Scenario, o: RunOptions): Promise<LlmPlan | undefined> {
  const parsed = scenario.params.safeParse(o.params ?? {});
  if (!parsed.success) throw paramError(scenario.name, parsed.error, scenario.params, o.params ?? {});
  const opts = llmOptions.safeParse(o.llm ?? {});
  if (!opts.success) throw new InputError(`--llm options: ${opts.error.issues[0].path.join('.')}: ${opts.error.issues[0].message}`);
  const llm = await setupLlm(opts.data, { plan: true });
  if (!llm) return undefined;
  const steps = o.steps ?? scenario.defaults.steps;
  const { exec } = await openBackend('cpu', o.threads ?? 1);
  try {
    const world = await scenario.setup({
      agents: o.agents ?? scenario.defaults.agents,
      steps,
      stepSeconds: o.stepSeconds ?? scenario.defaults.stepSeconds ?? 3600,
      seed: o.seed ?? 1,
      exec,
      params: parsed.data as Record<string, unknown>,
      graphFile: o.graphFile,
      graphRead: o.graphRead,
      agentsGiven: o.agents !== undefined,
      log: o.log ?? (() => {}),
      llm,
    });
    const src = llm.cost.source;
    return src && (await planRun(src, world.agents, steps, llm.cost.prices));
  } finally {
    await exec.close();
  }
}
