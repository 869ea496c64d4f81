/**
 * Shared set-up of the classic-model scenarios: a synthetic population on a Barabasi-Albert graph
 * (m = 5) by default, or on a real edge list given with `--graph FILE`, read undirected (each line
 * a mutual tie) unless `--directed` says otherwise.
 */
import { z } from 'zod';
import { buildSociety, graphSpec, type GraphSpec } from '../population/buildSociety.ts';
import type { Phase } from '../sim-core/phase.ts';
import { checkSeedCountFits, type SeedSize } from '../models/seeds.ts';
import { defineScenario, type SetupContext } from '../runner/run/defineScenario.ts';

export function classicScenario<S extends z.ZodRawShape>(o: {
  name: string;
  description: string;
  params: S;
  steps?: number;
  /** Checks across parameters (e.g. not both seedCount and seedFraction); issues name the field. */
  check?(p: z.output<z.ZodObject<S>>, ctx: z.RefinementCtx): void;
  phases(p: z.output<z.ZodObject<S>>): Phase[];
}) {
  const params = z
    .strictObject({ graph: graphSpec.default({ kind: 'barabasi-albert', m: 5 }), ...o.params })
    .superRefine((p, ctx) => o.check?.(p as z.output<z.ZodObject<S>>, ctx));
  return defineScenario({
    name: o.name,
    description: o.description,
    params,
    defaults: { agents: 100_000, steps: o.steps ?? 30, snapshotEvery: 10 },
    acceptsGraph: true,
    async setup(ctx: SetupContext<z.output<typeof params>>) {
      const p = ctx.params as { graph: GraphSpec } & z.output<z.ZodObject<S>>;
      const society = await buildSociety(ctx.exec, {
        agents: ctx.agents,
        seed: ctx.seed,
        graph: p.graph,
        graphFile: ctx.graphFile,
        agentsFixed: ctx.agentsGiven,
        graphRead: { ids: ctx.graphRead?.ids, directed: ctx.graphRead?.directed ?? false },
        phaseBytesPerAgent: 16,
        log: ctx.log,
      });
      // Before anything is written: more seeds than accounts is a mistake, never clamped.
      checkSeedCountFits(p as SeedSize, society.agents.length);
      return { agents: society.agents, graph: society.graph, phases: o.phases(p), graphSource: society.graphSource };
    },
  });
}
