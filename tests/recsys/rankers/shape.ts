/** What every bundled ranker's test checks of its declaration: a name, a documented source, its WGSL pieces. */
import { expect } from 'vitest';
import type { Recommender } from '../../../recsys/recommender.ts';
import { BUNDLED_RANKERS } from '../../../recsys/rankerRegistry.ts';

export function expectDeclared(r: Recommender, wgsl: { base: boolean; listKey: boolean }): void {
  expect(BUNDLED_RANKERS).toContain(r);
  expect(r.name).toMatch(/^[a-z0-9][a-z0-9-]*$/);
  // One paragraph that says what it orders by.
  expect(r.doc.length).toBeGreaterThan(60);
  expect(r.doc).not.toMatch(/\n\n/);
  expect(r.wgsl?.base !== undefined).toBe(wgsl.base);
  expect(r.wgsl?.listKey !== undefined).toBe(wgsl.listKey);
}
