/**
 * Where socsim's own files are, whether it runs from a checkout (TypeScript sources) or from an
 * installed package (compiled JavaScript in dist/): the package root holds package.json, bin/ and
 * dist/ in both cases, so everything that names a file of socsim's goes through here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of socsim's package.json: the nearest above this module that names socsim. */
function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file) && (JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string }).name === 'socsim') return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json of socsim above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

export const PACKAGE_ROOT = findRoot();

export const PACKAGE_VERSION = (JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The command-line entry every child process (experiment runs, shards) is started with. */
export const BIN = path.join(PACKAGE_ROOT, 'bin', 'socsim.mjs');

/** The prebuilt dashboard (`npm run build` writes it; the package ships it). */
export const DASHBOARD_DIR = path.join(PACKAGE_ROOT, 'dist', 'dashboard');

/**
 * The extension of this copy's own modules: `.ts` when the sources run (tests, a checkout under
 * Node's type stripping), `.js` when the compiled package runs. Files of socsim that are found by
 * name at run time (bundled scenarios and experiments, worker entries) have this extension.
 */
export const MODULE_EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
