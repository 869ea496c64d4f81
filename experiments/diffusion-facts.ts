/**
 * Diffusion facts: the default platform's reshare cascades measured as the literature measures
 * retweet cascades (runner/analysis/diffusionPatterns.ts), one outcome per pattern. `socsim validate` runs
 * it and sets each outcome beside its published figure (runner/analysis/validate.ts lists them, with
 * sources); it also runs as an ordinary experiment:
 *
 *   npx socsim validate                  # the comparison table
 *   npx socsim experiment experiments/diffusion-facts.ts --out runs/diffusion-facts --jobs 2
 *
 * Roots are the original posts of the run's first half, so each is followed for at least half the
 * run (cascades grow until the run ends). Shares are fractions, structural virality is a mean path
 * length (Goel et al. 2016), the tail exponent a maximum-likelihood power-law fit.
 *
 * Two arms: `default`, the platform as it ships (x-interest ranking, half of each feed from outside
 * the accounts a user follows), and `timeline`, the platform the published figures were measured
 * on: Twitter's reverse-chronological timeline of followed accounts (until 2016), here the
 * chronological ranker over every followee's newest posts, with every feed slot in-network and no
 * out-of-network source.
 */
import { custom, defineExperiment, diffusionPatterns, readPostColumns, type DiffusionPatterns, type RunView } from 'socsim';

// Every outcome reads the same patterns: compute them once per run directory.
const cache = new Map<string, DiffusionPatterns>();
function patterns(run: RunView): DiffusionPatterns {
  let p = cache.get(run.dir);
  if (!p) {
    const stepHours = (run.manifest.step_seconds ?? 3600) / 3600;
    const steps = run.manifest.steps_completed ?? 0;
    p = diffusionPatterns(readPostColumns(run.dir), { stepHours, steps, followHours: (steps * stepHours) / 2 });
    cache.set(run.dir, p);
  }
  return p;
}
const pattern = (k: keyof DiffusionPatterns, label: string) => custom((run) => patterns(run)[k], label);

export default defineExperiment({
  name: 'diffusion-facts',
  description: 'Reshare cascades of the default platform, measured as retweet cascades are in the literature',
  scenario: 'social-feed',
  // No story: organic posts only, as in the observational studies.
  params: { story: { count: 0 } },
  arms: {
    default: {},
    timeline: { platform: { ranker: 'chronological', inNetwork: 10, maxScan: 0, perCluster: 0, trending: 0 } },
  },
  seeds: 5,
  // 15-minute steps: delays are counted in steps, and the first hour needs more than one.
  defaults: { agents: 100_000, hours: 48, stepSeconds: 900 },
  outcomes: {
    roots: pattern('roots', 'original posts of the first half of the run (the roots measured)'),
    reshares_per_root: custom((run) => patterns(run).reshares / patterns(run).roots, 'reshares (any depth) per root'),
    never_reshared: pattern('neverReshared', 'share of roots never reshared'),
    reshared_10: pattern('atLeast10', 'share of roots with >= 10 reshares'),
    reshared_100: pattern('atLeast100', 'share of roots with >= 100 reshares'),
    tail_exponent: pattern('tailExponent', 'power-law exponent of the tree-size density (trees >= 10 nodes)'),
    direct_from_root: pattern('directFromRoot', 'share of reshares made directly from the root (depth 1)'),
    depth_1: pattern('depth1', 'share of reshared roots whose deepest reshare is at depth 1'),
    depth_2: pattern('depth2', 'share of reshared roots whose deepest reshare is at depth 2'),
    depth_3_plus: pattern('depth3plus', 'share of reshared roots with a reshare at depth 3 or more'),
    virality_10_99: pattern('viralityMid', 'mean structural virality of trees with 10-99 nodes'),
    virality_100: pattern('viralityLarge', 'mean structural virality of trees with >= 100 nodes'),
    trees_100: pattern('largeTrees', 'trees with >= 100 nodes'),
    virality_per_decade: pattern('viralityPerDecade', 'structural virality gained per tenfold tree size (least squares, trees >= 10 nodes)'),
    within_1h: pattern('within1h', 'of the reshares within 24 hours of the root, the share within 1 hour'),
    within_6h: pattern('within6h', 'of the reshares within 24 hours of the root, the share within 6 hours'),
  },
});
