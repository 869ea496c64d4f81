/** The ranker registry: the bundled list, the names the parameters accept, and a plugin's place in it. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BUNDLED_RANKERS, RANKER_NAMES, addPluginRanker, checkRankerNames, rankerName, rankerNames, rankerOf, unknownRanker } from '../../recsys/rankerRegistry.ts';
import { kernels as K } from '../../recsys/kernels.ts';
import { socialConfig } from '../../platform/state.ts';
import scenario from '../../scenarios/social-feed.ts';

describe('ranker registry', () => {
  it('lists the bundled rankers once each, their codes their places in the list', () => {
    expect(RANKER_NAMES).toEqual(['chronological', 'random', 'reddit-hot', 'x-interest', 'bridging']);
    expect(new Set(RANKER_NAMES).size).toBe(BUNDLED_RANKERS.length);
    RANKER_NAMES.forEach((name, code) => expect(rankerOf(name)).toEqual({ code, ranker: BUNDLED_RANKERS[code], plugin: undefined }));
    expect(socialConfig.parse({}).ranker).toBe('x-interest');
  });

  it('platform.ranker, setRanker and setParam platform.ranker take registered names only, in one line', () => {
    expect(rankerName.parse(undefined)).toBe('x-interest');
    const bad = rankerName.safeParse('hot');
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0].message).toBe(unknownRanker('hot'));
    expect(unknownRanker('hot')).toMatch(/^unknown ranker "hot": the rankers are chronological, random, reddit-hot, x-interest, bridging; a study adds its own with a plugin file \(export default defineRanker/);
    const p = scenario.params.safeParse({ platform: { ranker: 'nope' } });
    expect(p.error?.issues.map((i) => i.path.join('.'))).toEqual(['platform.ranker']);
    const ivs = [{ kind: 'setRanker', hour: 1, ranker: 'chronological' }, { kind: 'setRanker', hour: 2, ranker: 'hot' }, { kind: 'setParam', hour: 3, param: 'platform.ranker', value: 'hotter' }];
    const s = scenario.params.safeParse({ interventions: ivs });
    expect(s.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([`interventions.1.ranker: ${unknownRanker('hot')}`, `interventions.2.value: ${unknownRanker('hotter')}`]);
    const list = z.array(z.any()).superRefine((l, ctx) => checkRankerNames(l, ctx, ['x']));
    expect(list.safeParse([{ kind: 'label' }]).success).toBe(true);
  });

  it('a plugin ranker adds its name (once per module) and takes its candidates from a bundled one', () => {
    const feed = { ...K.recommend, module: 'file:///study/a.ts' };
    addPluginRanker({ name: 'test-plugin', doc: 'x', candidates: BUNDLED_RANKERS[2], feed, file: 'a.ts' });
    addPluginRanker({ name: 'test-plugin', doc: 'x', candidates: BUNDLED_RANKERS[2], feed, file: './a.ts' });
    expect(rankerNames()).toEqual([...RANKER_NAMES, 'test-plugin']);
    expect(rankerOf('test-plugin').code).toBe(2);
    expect(rankerOf('test-plugin').plugin?.feed).toBe(feed);
    expect(rankerName.parse('test-plugin')).toBe('test-plugin');
    expect(() => addPluginRanker({ name: 'test-plugin', doc: 'x', candidates: BUNDLED_RANKERS[0], feed: { ...feed, module: 'file:///study/b.ts' }, file: 'b.ts' })).toThrow(/ranker name "test-plugin" is already taken by a\.ts/);
    expect(() => addPluginRanker({ name: 'random', doc: 'x', candidates: BUNDLED_RANKERS[0], feed, file: 'c.ts' })).toThrow(/already taken by a bundled ranker/);
  });
});
