#!/usr/bin/env node
/**
 * Prints a SHA-256 per output file of every bundled scenario (social-feed once per ranker, with
 * every intervention kind, with the prosocial options, and with Community Notes by each scoring) and every bundled experiment, run small, so that a refactor can
 * show its outputs are byte-identical to the commit before it:
 *
 *   node scripts/outputDigest.mjs --backend cpu > after.txt   (in each tree; then diff)
 *
 * Options: --backend cpu|webgpu, --bin PATH (the socsim bin to run; default this tree's),
 * --work DIR (where runs go; default a fresh temp folder), --threads N (default 2).
 * manifest.json and lock files are skipped: they hold times, hosts and versions.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    backend: { type: 'string', default: 'cpu' },
    bin: { type: 'string', default: path.join(here, '..', 'bin', 'socsim.mjs') },
    work: { type: 'string' },
    threads: { type: 'string', default: '2' },
  },
});
const work = values.work ?? mkdtempSync(path.join(tmpdir(), 'socsim-digest-'));
mkdirSync(work, { recursive: true });
const bundled = path.join(here, '..');

function socsim(args) {
  const r = spawnSync(process.execPath, [values.bin, ...args], { encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(`socsim ${args.join(' ')} exited ${r.status}\n${r.stderr}\n`);
    process.exit(1);
  }
}

function digests(dir, prefix) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...digests(p, `${prefix}/${name}`));
    else if (name !== 'manifest.json' && !name.startsWith('.socsim.lock') && !name.endsWith('.log')) {
      out.push(`${createHash('sha256').update(readFileSync(p)).digest('hex')}  ${prefix}/${name}`);
    }
  }
  return out;
}

const common = ['--backend', values.backend, '--threads', values.threads, '--quiet', '--force'];
const runs = [];
for (const s of ['deffuant', 'degroot', 'hegselmann-krause', 'independent-cascade', 'linear-threshold', 'opinion-cascade', 'sir', 'voter']) {
  runs.push([s, [s, '--agents', '3000', '--steps', '12']]);
}
for (const ranker of ['chronological', 'random', 'reddit-hot', 'x-interest', 'bridging']) {
  runs.push([`social-feed-${ranker}`, ['social-feed', '--agents', '4000', '--steps', '12', '--set', `platform.ranker=${ranker}`, '--events']]);
}
// Every intervention kind in one run, each acting within its 12 steps.
const interventions = [
  { kind: 'inject', hour: 1, count: 20, stance: 0.5, veracity: 'false', novelty: 1.2, tag: 'rumour' },
  { kind: 'label', hour: 3, posts: { tag: 'rumour' }, reshare: 0.5 },
  { kind: 'downrank', hour: 4, posts: { veracity: 'false' }, factor: 0.5 },
  { kind: 'remove', hour: 6, posts: { tag: 'rumour' } },
  { kind: 'suspend', hour: 5, agents: { fraction: 0.01 } },
  { kind: 'setRanker', hour: 7, ranker: 'chronological' },
  { kind: 'setParam', hour: 8, param: 'behaviour.post', scale: 2 },
  { kind: 'setParam', hour: 9, param: 'platform.tauHours', value: 3 },
  { kind: 'assign', hour: 0, groups: { up: { share: 0.2, vote: 1 }, control: { share: 0.8, vote: 0 } } },
];
const params = path.join(work, 'interventions.json');
writeFileSync(params, JSON.stringify({ interventions }));
runs.push(['social-feed-interventions', ['social-feed', '--agents', '4000', '--steps', '12', '--params', params, '--events']]);
// The prosocial options (hidden counts, out-partisan boost, downranked dominant voices), all on.
const prosocial = ['counts=hidden', 'outPartisan=3', 'dominant.factor=0.5'].flatMap((s) => ['--set', `platform.${s}`]);
runs.push(['social-feed-prosocial', ['social-feed', '--agents', '4000', '--steps', '12', ...prosocial, '--events']]);
for (const scoring of ['bridging', 'majority']) {
  const notes = ['enabled=true', `scoring=${scoring}`, 'contributors=0.2', 'rate=0.5', 'queue=10'].flatMap((s) => ['--set', `platform.notes.${s}`]);
  runs.push([`social-feed-notes-${scoring}`, ['social-feed', '--agents', '4000', '--steps', '12', ...notes]]);
}

const lines = [];
for (const [name, args] of runs) {
  socsim(['run', ...args, '--out', path.join(work, name), ...common]);
  lines.push(...digests(path.join(work, name), name));
  process.stderr.write(`${name} done\n`);
}
for (const file of readdirSync(path.join(bundled, 'experiments')).sort()) {
  const name = `experiment-${path.basename(file, '.ts')}`;
  socsim(['experiment', 'run', path.join(bundled, 'experiments', file), '--out', path.join(work, name), '--agents', '2000', '--steps', '30', '--seeds', '2', '--jobs', '2', ...common]);
  lines.push(...digests(path.join(work, name), name));
  process.stderr.write(`${name} done\n`);
}
process.stdout.write(`${lines.join('\n')}\n`);
