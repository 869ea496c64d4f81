/**
 * The default activity clock and post rates against Pew Research Center's survey of US adult
 * Twitter users (Wojcik and Hughes, "Sizing Up Twitter Users", 2019): the median user tweets twice a
 * month, the most active 10% write 80% of tweets (their median 138 a month), and 47% of the other
 * 90% use the platform daily. Expected figures per user, computed from a synthesized population's
 * columns and the act kernel's rules (no run): sessions per day are the activity level x the
 * chronotype's normalised hourly profile summed over 24 hours (Poisson sessions, so the chance of
 * being online on a day is 1 - exp(-sessions)); posts per session are min(1, post x (activity /
 * median)^postExponent).
 */
import { describe, expect, it } from 'vitest';
import { synthesizePopulation } from '../../population/synthesize.ts';
import { heuristicBehaviour, getParam } from '../../platform/behaviour.ts';
import { normalisedProfiles } from '../../platform/phases.ts';
import { medianActivity, socialConfig } from '../../platform/state.ts';

function pewFigures(postExponent: number) {
  const N = 100_000;
  const pop = synthesizePopulation(N, 7);
  const c = pop.agents.columns;
  const A = c.activity as Float32Array;
  const Chr = c.chronotype as Uint8Array;
  const Arch = c.archetype as Uint16Array;
  const prof = normalisedProfiles();
  const dayOf = [0, 1, 2, 3].map((k) => prof.subarray(k * 24, k * 24 + 24).reduce((x, y) => x + y, 0));
  const B = heuristicBehaviour({ ageBands: 6, leaningCentres: [-1, -0.5, 0, 0.5, 1], tiers: 3 });
  const med = medianActivity(A);
  const posts = new Float64Array(N);
  const daily = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    const sessions = A[i] * dayOf[Chr[i]] * getParam(B, Arch[i], 'activity');
    posts[i] = 30 * sessions * Math.min(1, getParam(B, Arch[i], 'post') * Math.pow(A[i] / med, postExponent));
    daily[i] = 1 - Math.exp(-sessions);
  }
  const order = Array.from(posts.keys()).sort((x, y) => posts[x] - posts[y]);
  const total = posts.reduce((x, y) => x + y, 0);
  const top = order.slice(Math.floor(0.9 * N));
  const rest = order.slice(0, Math.floor(0.9 * N));
  return {
    medianPosts: posts[order[N >> 1]],
    topShare: top.reduce((s, i) => s + posts[i], 0) / total,
    topMedian: posts[top[top.length >> 1]],
    othersDaily: rest.reduce((s, i) => s + daily[i], 0) / rest.length,
  };
}

describe('the default activity clock against Pew 2019', () => {
  const f = pewFigures(socialConfig.parse({}).postExponent);
  it(`is within 1.5x of each figure: ${JSON.stringify(f)}`, () => {
    expect(f.medianPosts / 2).toBeGreaterThan(1 / 1.5);
    expect(f.medianPosts / 2).toBeLessThan(1.5);
    // The top 10%'s share on its rarer side: 20% of posts from the other 90%.
    expect((1 - f.topShare) / 0.2).toBeGreaterThan(1 / 1.5);
    expect((1 - f.topShare) / 0.2).toBeLessThan(1.5);
    expect(f.topMedian / 138).toBeGreaterThan(1 / 1.5);
    expect(f.topMedian / 138).toBeLessThan(1.5);
    expect(f.othersDaily / 0.47).toBeGreaterThan(1 / 1.5);
    expect(f.othersDaily / 0.47).toBeLessThan(1.5);
  });
  it('needs posts per session to grow with activity: with postExponent 0 the top 10% write far less than 80%', () => {
    expect(pewFigures(0).topShare).toBeLessThan(0.7);
  });
});
