/**
 * Helpers of the intervention kinds' tests: real social-feed runs (6,000 agents, 8 hours) through
 * the CLI, and their files read back.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tableFromIPC, type Table } from 'apache-arrow';
import { expect } from 'vitest';
import { socsim, tempDir } from '../../runner/cliHelpers.ts';

export const BASE = ['run', 'social-feed', '--agents', '6000', '--steps', '8', '--seed', '7', '--events', '--quiet', '--set', 'platform.startHour=9'];
/** A false story of 12 posts by accounts among the 100 most followed, at step 0. */
export const INJECT = { kind: 'inject', step: 0, count: 12, stance: 0.6, veracity: 'false', novelty: 1.2, tag: 'rumour', authors: { topFollowers: 100 } };
export const RESHARES = new Set(['like', 'repost', 'quote']);

/** A temporary folder for this test file's runs. */
export const runsDir = (prefix: string) => tempDir(`socsim-iv-${prefix}-`);

/** Runs BASE (plus `extra`) with these interventions into `tmp/name`; expects a clean exit. */
export function run(tmp: string, name: string, interventions: unknown[], extra: string[] = []): string {
  const dir = path.join(tmp, name);
  const r = socsim([...BASE, ...extra, '--out', dir, '--set', `interventions=${JSON.stringify(interventions)}`]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return dir;
}

/** Runs BASE with one bad intervention: expects exit 2 and one line of stderr matching `pattern`. */
export function refused(tmp: string, interventions: unknown[], pattern: RegExp): void {
  const r = socsim([...BASE, '--out', path.join(tmp, 'bad'), '--force', '--set', `interventions=${JSON.stringify(interventions)}`]);
  expect(r.code).toBe(2);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(pattern);
}

export const read = (dir: string, file: string): Table => tableFromIPC(fs.readFileSync(path.join(dir, file)));
export const col = (t: Table, name: string) => Array.from(t.getChild(name)!.toArray() as ArrayLike<unknown>);
export function rows(t: Table): Record<string, unknown>[] {
  return t.toArray().map((r) => r.toJSON() as Record<string, unknown>);
}

/** Events (agent, action, target) at or after `step`. */
export function eventsFrom(dir: string, step: number) {
  return rows(read(dir, 'events.arrow')).filter((e) => (e.step as number) >= step);
}

/** Ids of the posts carrying the tag. */
export function taggedIds(dir: string, tag: string): Set<number> {
  const posts = read(dir, 'posts.arrow');
  return new Set((col(posts, 'id') as number[]).filter((_, i) => col(posts, 'tag')[i] === tag));
}
