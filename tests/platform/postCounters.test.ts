/**
 * A real run's post counters agree with what happened to the posts (apply adds them on the threads,
 * platform/decideActions.ts, with atomic adds): each post's reposts, quotes and comments are its
 * children of that kind in posts.arrow, its reports are the report actions aimed at it in
 * events.arrow, and it is flagged `reported` exactly when those reach the threshold.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tableFromIPC, type Table } from 'apache-arrow';
import { expect, it } from 'vitest';
import { FLAG } from '../../platform/posts.ts';
import { socsim, tempDir } from '../runner/cliHelpers.ts';

const THRESHOLD = 2;

it('reposts, quotes, comments and reports count what happened; reported from the threshold on', () => {
  const dir = path.join(tempDir('socsim-counters-'), 'run');
  // 30,000 agents: ~1,500-2,000 active users a step, so the decisions split into chunks (2,048 users each) at the peak hours.
  const r = socsim(['run', 'social-feed', '--agents', '30000', '--steps', '20', '--seed', '5', '--threads', '2', '--events', '--quiet', '--out', dir, '--set', `platform.reportThreshold=${THRESHOLD}`, '--set', 'platform.startHour=10']);
  expect(r.code, r.stderr).toBe(0);
  const read = (f: string): Table => tableFromIPC(fs.readFileSync(path.join(dir, f)));
  const p = read('posts.arrow');
  const col = (t: Table, c: string) => t.getChild(c)!.toArray() as ArrayLike<number>;
  const n = p.numRows;
  const id = col(p, 'id');
  const row = new Map<number, number>();
  for (let i = 0; i < n; i++) row.set(id[i], i);
  const kind = Array.from({ length: n }, (_, i) => String(p.getChild('kind')!.get(i)));
  const parent = col(p, 'parent');
  const children: Record<string, Int32Array> = { repost: new Int32Array(n), quote: new Int32Array(n), comment: new Int32Array(n) };
  for (let i = 0; i < n; i++) if (parent[i] >= 0) children[kind[i]][row.get(parent[i])!]++;
  for (const [k, c] of [['repost', 'reposts'], ['quote', 'quotes'], ['comment', 'comments']] as const) {
    expect(Array.from(col(p, c)), c).toEqual(Array.from(children[k]));
    expect(children[k].reduce((x, y) => x + y, 0), c).toBeGreaterThan(500);
  }
  const e = read('events.arrow');
  const reports = new Int32Array(n);
  const target = col(e, 'target');
  for (let i = 0; i < e.numRows; i++) if (String(e.getChild('action')!.get(i)) === 'report') reports[row.get(target[i])!]++;
  expect(Array.from(col(p, 'reports'))).toEqual(Array.from(reports));
  const flags = col(p, 'flags');
  let reported = 0;
  for (let i = 0; i < n; i++) {
    expect((flags[i] & FLAG.reported) !== 0, `post ${id[i]}: ${reports[i]} reports`).toBe(reports[i] >= THRESHOLD);
    if (reports[i] >= THRESHOLD) reported++;
  }
  expect(reported).toBeGreaterThan(10);
});
