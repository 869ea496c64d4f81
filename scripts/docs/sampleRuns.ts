/**
 * Small runs whose files the run-directory reference is generated from: a social-feed run with
 * every optional file (events, an injected and labelled story, a follow rebuild), one with LLM
 * archetypes against a local sample server, one run of every classic scenario, an experiment and a
 * calibration. Their schemas, not their values, go into the page, so the runs are as small as
 * will write every file.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { experiment, run } from '../../runner/api.ts';
import { startSampleLlmServer } from './sampleLlmServer.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export const CLASSIC_SCENARIOS = ['sir', 'voter', 'independent-cascade', 'linear-threshold', 'degroot', 'deffuant', 'hegselmann-krause', 'opinion-cascade'];

export interface SampleDirs {
  root: string;
  social: string;
  /** A social-feed run with LLM archetypes (a local sample server answers every call). */
  llm: string;
  /** Scenario name -> run directory. */
  classic: Record<string, string>;
  experiment: string;
  calibration: string;
  cleanup(): void;
}

const STORY = [
  { kind: 'inject', hour: 0, count: 5, stance: 0.7, veracity: 'false', novelty: 1.2, tag: 'rumour' },
  { kind: 'label', hour: 1, posts: { tag: 'rumour' } },
];

/** Writes the sample runs under a new temporary folder; `cleanup` removes it. Needs dist/ built (child runs). */
export async function sampleRuns(): Promise<SampleDirs> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-docs-'));
  try {
    const social = path.join(root, 'social');
    await run({ scenario: 'social-feed', agents: 1500, steps: 3, events: true, out: social, params: { interventions: STORY, platform: { rebuildEvery: 2, notes: { enabled: true, contributors: 0.2, rate: 1, queue: 10 } } } });
    const llm = path.join(root, 'llm');
    const server = await startSampleLlmServer();
    const key = process.env.SOCSIM_LLM_API_KEY;
    process.env.SOCSIM_LLM_API_KEY = 'docs-sample';
    try {
      await run({ scenario: 'social-feed', agents: 1000, steps: 2, out: llm, llm: { provider: 'openai', baseURL: server.baseURL, model: 'docs-sample', every: 1 } });
    } finally {
      if (key === undefined) delete process.env.SOCSIM_LLM_API_KEY;
      else process.env.SOCSIM_LLM_API_KEY = key;
      await server.close();
    }
    const classic: Record<string, string> = {};
    for (const s of CLASSIC_SCENARIOS) classic[s] = (await run({ scenario: s, agents: 300, steps: 1, out: path.join(root, s) })).dir;
    const exp = path.join(root, 'experiment');
    await experiment(path.join(ROOT, 'experiments', 'sir-beta.ts'), { out: exp, seeds: 2, agents: 300, steps: 2, jobs: 2, quiet: true });
    const calibration = path.join(root, 'calibration');
    const target = path.join(root, 'target.csv');
    fs.writeFileSync(target, 'step,infectious\n0,12\n1,20\n2,25\n');
    const moments = path.join(root, 'moments.json');
    const source = { paper: 'sample', where: 'none' };
    fs.writeFileSync(moments, JSON.stringify({ format: 'socsim-moments/1', moments: [{ id: 'recovered_3', kind: 'summary', metric: 'recovered', step: 3, value: 10, se: 2, source }] }));
    const args = ['calibrate', 'sir', '--target', target, '--moments', moments, '--fit', 'beta=0.01..0.2', '--match', 'infectious', '--seeds', '2', '--budget', '4', '--agents', '300', '--steps', '3', '--jobs', '2', '--quiet', '--out', calibration];
    execFileSync(process.execPath, [path.join(ROOT, 'bin', 'socsim.mjs'), ...args], { stdio: 'ignore' });
    return { root, social, llm, classic, experiment: exp, calibration, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
  } catch (err) {
    fs.rmSync(root, { recursive: true, force: true });
    throw err;
  }
}
