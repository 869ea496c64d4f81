/**
 * `socsim experiment FILE --plan`: the LLM plan of every planned run (arms x grid x seeds), summed,
 * calling no model and writing nothing. Each run's plan is its own (`socsim run --plan`): its seed
 * and parameters decide which archetypes have members and what their prompts say. Runs already
 * complete in the experiment directory are counted apart, with what the rest would take.
 */
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../../sim-core/errors.ts';
import { llmRunOptions } from '../run/llmFlags.ts';
import { readRunManifest } from '../run/runDirectory.ts';
import { planScenario } from '../run/planRun.ts';
import { sumPlans, type LlmPlan } from '../../llm-archetypes/plan.ts';
import { loadExperiment } from './defineExperiment.ts';
import { planExperiment } from './experimentPlan.ts';
import { runComplete } from './experimentRun.ts';
import type { ExperimentFlags } from './conduct.ts';

export interface ExperimentLlmPlan {
  /** The experiment's name (its default directory is runs/<name>). */
  name: string;
  runs: number;
  /** Runs already complete in the experiment directory. */
  done: number;
  /** Over every run, and over the runs not yet complete. */
  all?: LlmPlan;
  remaining?: LlmPlan;
}

export async function planExperimentLlm(fileArg: string, opts: ExperimentFlags, llmFlags: string[]): Promise<ExperimentLlmPlan> {
  if (opts.hours !== undefined && opts.steps !== undefined) throw new InputError('give --hours or --steps, not both');
  const { experiment: e, file } = await loadExperiment(fileArg);
  const plan = await planExperiment(e, file, fileArg, { seeds: opts.seeds, arms: opts.arms, agents: opts.agents, hours: opts.hours, steps: opts.steps, stepSeconds: opts.stepSeconds, llm: llmFlags });
  const dir = path.resolve(opts.out ?? path.join('runs', e.name));
  const o = plan.json.options;
  const llm = llmRunOptions(opts as Parameters<typeof llmRunOptions>[0]);
  const plans: Array<LlmPlan | undefined> = [];
  const remaining: Array<LlmPlan | undefined> = [];
  let done = 0;
  for (const run of plan.runs) {
    const p = await planScenario(plan.scenario, { agents: o.agents, steps: o.steps, stepSeconds: o.step_seconds, seed: run.seed, params: run.params, threads: opts.threads, llm });
    plans.push(p);
    const runDir = path.join(dir, run.dir);
    if (fs.existsSync(runDir) && runComplete(readRunManifest(runDir), run, plan, runDir)) done++;
    else remaining.push(p);
  }
  const defined = (xs: Array<LlmPlan | undefined>) => xs.filter((x): x is LlmPlan => x !== undefined);
  return { name: e.name, runs: plan.runs.length, done, all: sumPlans(defined(plans)), remaining: sumPlans(defined(remaining)) };
}
