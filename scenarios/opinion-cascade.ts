/**
 * Opinion cascade: a synthetic population on a homophilous scale-free follow graph; opinions evolve
 * by bounded confidence (Hegselmann-Krause over followed accounts) while a story spreads as an
 * independent cascade seeded at the most-followed accounts. A `--graph FILE` is read directed
 * (`a b`: a follows b) unless `--undirected` says otherwise.
 * Opinions start as the population's leaning mix (`initial.kind=leanings`), the opinions the
 * homophilous graph was built on.
 */
import { z } from 'zod';
import { buildSociety, graphSpec } from '../population/buildSociety.ts';
import { independentCascade } from '../models/cascade.ts';
import { hegselmannKrause, opinionStats } from '../models/opinion.ts';
import { initialOpinionParam } from '../models/initialOpinions.ts';
import { checkSeedCountFits, seedSpec } from '../models/seeds.ts';
import { defineScenario } from '../runner/run/defineScenario.ts';

const seeds = seedSpec('hubs', 50);

export default defineScenario({
  name: 'opinion-cascade',
  description: 'Bounded-confidence opinions on a homophilous follow graph, with an independent cascade seeded at hubs',
  params: z
    .strictObject({
      graph: graphSpec.default({ kind: 'homophilous', meanFollowing: 20, homophily: 0.7, preferential: 0.8, reciprocity: 0.1 }),
      eps: z.number().min(0).max(2).default(0.3).describe('confidence bound of the Hegselmann-Krause update'),
      initial: initialOpinionParam('leanings'),
      p: z.number().min(0).max(1).default(0.05).describe('independent-cascade probability that a newly active account activates each inactive follower'),
      ...seeds.params,
    })
    .superRefine(seeds.check),
  defaults: { agents: 200_000, steps: 30, snapshotEvery: 10 },
  acceptsGraph: true,
  async setup(ctx) {
    const p = ctx.params;
    const society = await buildSociety(ctx.exec, {
      agents: ctx.agents,
      seed: ctx.seed,
      graph: p.graph,
      graphFile: ctx.graphFile,
      agentsFixed: ctx.agentsGiven,
      graphRead: { ids: ctx.graphRead?.ids, directed: ctx.graphRead?.directed ?? true },
      phaseBytesPerAgent: 8,
      log: ctx.log,
    });
    checkSeedCountFits(p, society.agents.length);
    return {
      agents: society.agents,
      graph: society.graph,
      graphSource: society.graphSource,
      phases: [
        hegselmannKrause({ eps: p.eps, initial: p.initial }),
        independentCascade({ p: p.p, ...seeds.options(p) }),
        opinionStats(),
      ],
    };
  },
});
