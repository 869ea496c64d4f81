/**
 * socsim as a researcher gets it: the packed tarball installed into a folder outside the checkout
 * (from the npm cache only, no network), `socsim init` of a study there, then the study's own
 * experiment and scenario, `query` and `serve`, each through `npx socsim` in the study folder.
 * `npm test` builds dist/ first (pretest), so the tarball holds the code under test.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { tableFromIPC } from '@uwdata/flechette';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tempDir } from '../runner/cliHelpers.ts';

const outside = tempDir('socsim-package-');
const study = path.join(outside, 'home', 'my-study');
/** The Node running the tests first on PATH, so that npm, npx and the bin scripts they start use it. */
const env = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };

function sh(cmd: string, args: string[], cwd: string, timeout = 300_000): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout });
  if (r.error) throw r.error;
  return r;
}

function ok(r: SpawnSyncReturns<string>): string {
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

let tarball = '';

/**
 * A package.json that depends on the tarball, and a lockfile that pins socsim's dependencies to
 * the versions of the checkout's lockfile with their registry addresses: npm then installs from
 * the cache that `npm ci` of the checkout filled, offline (without a lockfile it would ask the
 * registry for every dependency's metadata, which `npm ci` does not cache).
 */
function writeProject(dir: string, name: string): void {
  const root = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string; dev?: boolean; resolved?: string }> };
  const spec = `file:${tarball}`;
  const packages: Record<string, object> = {
    '': { name, dependencies: { socsim: spec } },
    'node_modules/socsim': { version: root.version, resolved: spec, license: root.license, dependencies: root.dependencies, optionalDependencies: root.optionalDependencies, bin: root.bin, engines: root.engines },
  };
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (key === '' || entry.dev) continue;
    const pkg = key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    packages[key] = { resolved: `https://registry.npmjs.org/${pkg}/-/${pkg.split('/').pop()}-${entry.version}.tgz`, ...entry };
  }
  const pkgFile = path.join(dir, 'package.json');
  const current = fs.existsSync(pkgFile) ? JSON.parse(fs.readFileSync(pkgFile, 'utf8')) : { name, private: true, dependencies: { socsim: spec } };
  expect(current.dependencies).toEqual({ socsim: spec });
  fs.writeFileSync(pkgFile, JSON.stringify(current, null, 2) + '\n');
  fs.writeFileSync(path.join(dir, 'package-lock.json'), JSON.stringify({ name, lockfileVersion: 3, requires: true, packages }, null, 2) + '\n');
}

/** A scenario with a kernel of its own: counts, chunk by chunk, the accounts that heard the rumour. */
const TALLY = `import { classicScenario, independentCascade, kernel, kernelList, z, type Phase, type World, type StepContext } from 'socsim';

export const kernels = kernelList(import.meta.url, {
  heard: kernel({ reads: { state: 'u8' }, writes: {}, params: [] }, ({ state }, start: number, end: number) => {
    let c = 0;
    for (let i = start; i < end; i++) if (state[i] !== 0) c++;
    return [c];
  }),
});

async function tally(world: World, ctx: StepContext): Promise<void> {
  const [heard] = await world.exec.reduce(kernels.heard, { state: world.agents.columns.state as Uint8Array }, world.agents.length);
  ctx.metric('heard', heard);
}

const count: Phase = { name: 'tally', reads: ['state'], writes: [], metrics: { heard: 'i32' }, run: tally, measure: tally };

export default classicScenario({
  name: 'tally',
  description: 'A rumour, and a count of who heard it by a kernel of the study',
  params: { p: z.number().min(0).max(1).default(0.05) },
  phases: (p) => [independentCascade({ p: p.p, seeds: 'hubs', seedCount: 10 }), count],
});
`;

/** A study's own ranker: a plugin module whose default export is defineRanker({...}). */
const ENGAGEMENT = `import { defineRanker } from 'socsim';

export default defineRanker({
  name: 'engagement',
  doc: 'Likes and reposts per hour of age, times the interest match.',
  score: (post, user) => ((1 + post.likes + 2 * post.reposts) / (1 + post.ageHours)) * (1 + user.interest),
});
`;

/** A study's own intervention kind: a plugin module whose default export is defineIntervention({...}). */
const BOOST = `import { defineIntervention, postSelector, z } from 'socsim';

export default defineIntervention({
  name: 'boost',
  doc: "Matching posts' ranking scores multiplied by factor from then on.",
  fields: { posts: postSelector, factor: z.number().min(1) },
  selectors: { posts: 'posts' },
  apply(iv, ctx) {
    const rank = ctx.social.posts.cols.rank;
    return { posts: ctx.eachPost(ctx.matchPosts(iv.posts), (r) => (rank[r] *= iv.factor)), agents: 0 };
  },
});
`;

/** An experiment whose arms compare the study's ranker with x-interest, and boost a story under it. */
const RANKERS = `import { defineExperiment, metric } from 'socsim';

const story = { kind: 'inject', step: 0, count: 10, stance: 0.6, tag: 'story' };
export default defineExperiment({
  name: 'rankers',
  description: 'The engagement ranker of the study against x-interest',
  scenario: 'social-feed',
  plugins: ['../rankers/engagement.ts', '../interventions/boost.ts'],
  arms: {
    x: {},
    engagement: { platform: { ranker: 'engagement' } },
    boosted: { platform: { ranker: 'engagement' }, interventions: [story, { kind: 'boost', step: 1, posts: { tag: 'story' }, factor: 3 }] },
  },
  seeds: 1,
  defaults: { agents: 2000, steps: 3 },
  outcomes: { posts: metric('posts_original').final() },
});
`;

beforeAll(() => {
  expect(path.relative(ROOT, outside).startsWith('..')).toBe(true);
  // dist/ is built by pretest; packing must not rebuild it under the other tests' feet.
  const packed = JSON.parse(ok(sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', outside], ROOT))) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = path.join(outside, packed[0].filename);
  const files = packed[0].files.map((f) => f.path);
  expect(files).toContain('dist/index.d.ts');
  expect(files).toContain('dist/dashboard/index.html');
  expect(files).toContain('LICENSE');
  expect(files.filter((f) => f.startsWith('tests/') || f.startsWith('runs/') || (f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.startsWith('templates/')))).toEqual([]);

  const home = path.join(outside, 'home');
  fs.mkdirSync(home);
  writeProject(home, 'home');
  ok(sh('npm', ['install', '--offline', '--no-audit', '--no-fund'], home));
}, 600_000);

describe('the packed package, outside the checkout', () => {
  it('starts, and scaffolds a study that depends on the tarball it was installed from', () => {
    const home = path.join(outside, 'home');
    expect(ok(sh('npx', ['socsim', '--version'], home)).trim()).toBe(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version);
    const out = ok(sh('npx', ['socsim', 'init', 'my-study'], home));
    expect(out).toMatch(/created my-study\//);
    const pkg = JSON.parse(fs.readFileSync(path.join(study, 'package.json'), 'utf8'));
    expect(pkg.type).toBe('module');
    expect(pkg.dependencies.socsim).toBe(`file:${tarball}`);
    for (const f of ['README.md', '.gitignore', 'experiments/seeding.ts', 'scenarios/rumour.ts']) expect(fs.existsSync(path.join(study, f)), f).toBe(true);
    expect(fs.readFileSync(path.join(study, '.gitignore'), 'utf8')).toMatch(/^runs\/$/m);
    // init refuses to write over a folder that has files
    const again = sh('npx', ['socsim', 'init', 'my-study'], home);
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/^socsim: my-study is not empty/);
    writeProject(study, 'my-study');
    ok(sh('npm', ['install', '--offline', '--no-audit', '--no-fund'], study));
  });

  it('runs the study\'s experiment on its own scenario and writes the effects', () => {
    const out = ok(sh('npx', ['socsim', 'experiment', 'experiments/seeding.ts', '--agents', '3000', '--seeds', '2', '--jobs', '2', '--quiet'], study));
    expect(out).toMatch(/4 runs: 4 ran, 0 already complete, 0 failed/);
    const effects = tableFromIPC(fs.readFileSync(path.join(study, 'runs', 'seeding', 'effects.arrow'))).toArray();
    const reached = effects.find((e) => e.arm === 'hubs' && e.outcome === 'reached')!;
    expect(reached.n).toBe(2);
    // Seeded at the ten best-connected accounts, the rumour reaches more than from ten random ones.
    expect(reached.diff).toBeGreaterThan(0);
    expect(effects.some((e) => e.outcome === 'reached_share' && e.group === 'left')).toBe(true);
  });

  it('runs the study\'s scenario and queries its tables', () => {
    ok(sh('npx', ['socsim', 'run', 'scenarios/rumour.ts', '--agents', '3000', '--quiet'], study));
    const manifest = JSON.parse(fs.readFileSync(path.join(study, 'runs', 'rumour', 'manifest.json'), 'utf8'));
    expect(manifest.status).toBe('completed');
    expect(manifest.steps_completed).toBe(20);
    const metrics = tableFromIPC(fs.readFileSync(path.join(study, 'runs', 'rumour', 'metrics.arrow')));
    const reached = Math.max(...metrics.getChild('ic_active')!.toArray());
    expect(reached).toBeGreaterThan(10);
    const q = ok(sh('npx', ['socsim', 'query', 'runs/rumour', 'select count(*) as n, max(ic_active) as reached from metrics', '--csv'], study));
    expect(q.trim().split('\n')).toEqual(['n,reached', `${metrics.numRows},${reached}`]);
  });

  it('a study\'s own kernel runs in the worker threads (loaded there from its .ts file), with the same bytes as on one thread', () => {
    fs.writeFileSync(path.join(study, 'scenarios', 'tally.ts'), TALLY);
    const dirs = [1, 2].map((threads) => {
      const out = path.join('runs', `tally-${threads}`);
      // Two chunks of rows or more, so that every worker is sent the kernel and imports its module.
      ok(sh('npx', ['socsim', 'run', 'scenarios/tally.ts', '--agents', '140000', '--steps', '4', '--threads', String(threads), '--out', out, '--quiet'], study));
      return path.join(study, out);
    });
    const [one, two] = dirs.map((d) => fs.readFileSync(path.join(d, 'metrics.arrow')));
    expect(two.equals(one)).toBe(true);
    const m = tableFromIPC(one);
    expect(m.getChild('heard')!.toArray()).toEqual(m.getChild('ic_active')!.toArray());
  });

  it('a study\'s own ranker and intervention kind (plugin files) shape a run and an experiment, on 1 and 2 threads alike', () => {
    fs.mkdirSync(path.join(study, 'rankers'), { recursive: true });
    fs.writeFileSync(path.join(study, 'rankers', 'engagement.ts'), ENGAGEMENT);
    fs.mkdirSync(path.join(study, 'interventions'), { recursive: true });
    fs.writeFileSync(path.join(study, 'interventions', 'boost.ts'), BOOST);
    const dirs = [1, 2].map((threads) => {
      const out = path.join('runs', `engagement-${threads}`);
      ok(sh('npx', ['socsim', 'run', 'social-feed', '--plugin', 'rankers/engagement.ts', '--set', 'platform.ranker=engagement', '--set', 'platform.startHour=12', '--agents', '40000', '--steps', '2', '--threads', String(threads), '--out', out, '--quiet'], study));
      return path.join(study, out);
    });
    const manifest = JSON.parse(fs.readFileSync(path.join(dirs[0], 'manifest.json'), 'utf8'));
    expect(manifest.parameters.platform.ranker).toBe('engagement');
    for (const f of ['posts.arrow', 'metrics.arrow']) expect(fs.readFileSync(path.join(dirs[1], f)).equals(fs.readFileSync(path.join(dirs[0], f))), f).toBe(true);
    fs.writeFileSync(path.join(study, 'experiments', 'rankers.ts'), RANKERS);
    const out = ok(sh('npx', ['socsim', 'experiment', 'experiments/rankers.ts', '--quiet'], study));
    expect(out).toMatch(/3 runs: 3 ran, 0 already complete, 0 failed/);
    const log = tableFromIPC(fs.readFileSync(path.join(study, 'runs', 'rankers', 'runs', 'boosted-s1', 'interventions.arrow')));
    expect(Array.from(log.getChild('kind')!.toArray() as ArrayLike<unknown>)).toEqual(['inject', 'boost']);
  });

  it('serves the dashboard of the experiment', async () => {
    // In a process group of its own: npx does not pass SIGTERM on to the server it starts, which
    // outlived the test until the group was killed.
    const child = spawn('npx', ['socsim', 'serve', 'runs/seeding', '--port', '0'], { cwd: study, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stdout.on('data', (d: Buffer) => {
          text += d.toString();
          const m = /dashboard: (http:\/\/\S+?)\/? /.exec(text);
          if (m) resolve(m[1]);
        });
        child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${text}`)));
      });
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<html/i);
      const plan = await fetch(`${url}/run/experiment.json`);
      expect(plan.status).toBe(200);
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
    }
  });

  it('a study file with an error gets one line naming the file and line, exit 2', () => {
    fs.writeFileSync(path.join(study, 'experiments', 'broken.ts'), "import { defineExperiment } from 'socsim';\n\nexport default defineExperiment({ name: 'broken', description: 'x', scenario: 'sir', arms: { a: {} }, outcomes: {} });\n");
    const r = sh('npx', ['socsim', 'experiment', 'experiments/broken.ts'], study);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual(['socsim: experiments/broken.ts:3: experiment: outcomes: declare at least one outcome']);
    fs.writeFileSync(path.join(study, 'scenarios', 'typo.ts'), "import { z } from 'socsim';\nconst p: number = ;\n");
    const s = sh('npx', ['socsim', 'run', 'scenarios/typo.ts'], study);
    expect(s.status).toBe(2);
    expect(s.stderr).toMatch(/^socsim: scenarios\/typo\.ts:2: SyntaxError: /);
    expect(s.stderr.trim().split('\n')).toHaveLength(1);
  });
});
