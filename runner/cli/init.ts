/**
 * `socsim init DIR`: scaffolds a study, a folder of the researcher's own with a package.json
 * (socsim as a dependency), a scenario and an experiment that import from 'socsim', a README and a
 * .gitignore for runs/. The files come from templates/study/ of this package.
 *
 * The dependency is the socsim that ran `init`: the tarball or folder it was installed from when
 * npm recorded one (before socsim is on the registry, that is how a study gets it), else the
 * registry version range; `--socsim SPEC` overrides both.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../sim-core/errors.ts';
import { PACKAGE_ROOT, PACKAGE_VERSION } from '../packageInfo.ts';
import { makeDirectory } from '../../sim-core/io/makeDirectory.ts';

const TEMPLATE_DIR = path.join(PACKAGE_ROOT, 'templates', 'study');

/** The package folder's `resolved` in the lockfile of the project it is installed in, if any. */
function installedFrom(root: string): string | undefined {
  const parts = root.split(path.sep);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return undefined;
  const project = parts.slice(0, at).join(path.sep) || path.sep;
  const key = parts.slice(at).join('/');
  for (const lock of [path.join(project, 'node_modules', '.package-lock.json'), path.join(project, 'package-lock.json')]) {
    try {
      const entry = (JSON.parse(fs.readFileSync(lock, 'utf8')) as { packages?: Record<string, { resolved?: string }> }).packages?.[key];
      if (!entry?.resolved) continue;
      if (!entry.resolved.startsWith('file:')) return undefined;
      return `file:${path.resolve(project, entry.resolved.slice('file:'.length))}`;
    } catch {
      // no lockfile here, or not JSON: try the next one
    }
  }
  return undefined;
}

/** The dependency spec a new study gets for socsim, and where it comes from (for the message). */
export function socsimSpec(root = PACKAGE_ROOT): { spec: string; from: string } {
  if (!root.split(path.sep).includes('node_modules')) return { spec: `file:${root}`, from: 'the checkout that ran init' };
  const file = installedFrom(root);
  if (file) return { spec: file, from: 'what this socsim was installed from' };
  return { spec: `^${PACKAGE_VERSION}`, from: 'the npm registry' };
}

/** A package name npm accepts, from the folder's name. */
function packageName(dir: string): string {
  const n = path.basename(dir).toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[._-]+/, '');
  return n || 'socsim-study';
}

function copyTemplate(from: string, to: string, vars: Record<string, string>, written: string[]): void {
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    // npm drops .gitignore from published packages, so the template's is stored without the dot.
    const name = entry.name === 'gitignore' ? '.gitignore' : entry.name;
    const src = path.join(from, entry.name);
    const dst = path.join(to, name);
    if (entry.isDirectory()) {
      makeDirectory(dst);
      copyTemplate(src, dst, vars, written);
    } else {
      const text = fs.readFileSync(src, 'utf8').replace(/\{\{(\w+)\}\}/g, (m, k: string) => vars[k] ?? m);
      fs.writeFileSync(dst, text, { flag: 'wx' });
      written.push(dst);
    }
  }
}

/** Writes the study into `dir` (new or empty); returns the files written and the socsim spec. */
export function initStudy(dir: string, spec?: string): { files: string[]; spec: string; from: string } {
  if (fs.existsSync(dir)) {
    if (!fs.statSync(dir).isDirectory()) throw new InputError(`${dir} is a file; give a new or empty folder for the study`);
    if (fs.readdirSync(dir).length > 0) throw new InputError(`${dir} is not empty; give a new or empty folder for the study (init writes package.json, README.md, scenarios/ and experiments/)`);
  }
  const chosen = spec ? { spec, from: '--socsim' } : socsimSpec();
  const name = packageName(path.resolve(dir));
  makeDirectory(dir);
  const files: string[] = [];
  const pkg = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    description: 'A socsim study',
    engines: { node: '>=22.18' },
    scripts: {
      rumour: 'socsim run scenarios/rumour.ts --agents 20000',
      seeding: 'socsim experiment experiments/seeding.ts --jobs 2',
      serve: 'socsim serve runs/seeding',
    },
    dependencies: { socsim: chosen.spec },
  };
  const pkgFile = path.join(dir, 'package.json');
  fs.writeFileSync(pkgFile, JSON.stringify(pkg, null, 2) + '\n', { flag: 'wx' });
  files.push(pkgFile);
  copyTemplate(TEMPLATE_DIR, dir, { name, spec: chosen.spec }, files);
  return { files, ...chosen };
}

export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description('Create a study folder: package.json (socsim as a dependency), a scenario and an experiment in TypeScript, a README and a .gitignore for runs/')
    .argument('<dir>', 'a new or empty folder')
    .option('--socsim <spec>', 'the socsim dependency to write into package.json, as npm install takes it (default: what this socsim was installed from, else ^its version)')
    .action((dir: string, opts: { socsim?: string }) => {
      const r = initStudy(dir, opts.socsim);
      const rel = path.relative(process.cwd(), path.resolve(dir)) || '.';
      process.stdout.write(
        `created ${rel}/ (${r.files.map((f) => path.relative(path.resolve(dir), f)).sort().join(', ')})\n` +
          `socsim dependency: ${r.spec} (${r.from})\n` +
          `next:\n  cd ${rel}\n  npm install\n  npx socsim experiment experiments/seeding.ts --jobs 2\n  npx socsim serve runs/seeding\n`,
      );
    });
}
