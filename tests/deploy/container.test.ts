/**
 * deploy/Containerfile, checked without building it (no container engine or base image here):
 * it starts from the official Node image at the version CI tests, copies only files that exist and
 * everything the build and the package need, runs package.json's scripts by their names, installs
 * the packed tarball with the lockfile's production dependencies, and has `socsim` as entrypoint.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../runner/cliHelpers.ts';
import { ciNodeVersion, copyParts, readContainerfile, type Stage } from './deployFiles.ts';

const FILE = path.join(ROOT, 'deploy/Containerfile');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  scripts: Record<string, string>;
  files: string[];
  bin: Record<string, string>;
  engines: { node: string };
};
const stages = readContainerfile(FILE);
const [build, runtime] = stages;
const ops = (s: Stage, op: string) => s.instructions.filter((i) => i.op === op);
const runs = (s: Stage) => ops(s, 'RUN').map((i) => i.args);
/** Sources copied from the build context (not from another stage), without trailing slashes. */
const contextSources = (s: Stage) =>
  ops(s, 'COPY')
    .map((i) => copyParts(i.args))
    .filter((c) => !('from' in c.flags))
    .flatMap((c) => c.sources.map((src) => src.replace(/\/$/, '')));
const tsconfigBuild = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[]; extends?: string };

describe('deploy/Containerfile', () => {
  it('has a build stage and a runtime stage, both on the official Node image at the version CI tests', () => {
    expect(stages).toHaveLength(2);
    expect(build.name).toBe('build');
    const want = `node:${ciNodeVersion()}-bookworm-slim`;
    for (const s of stages) expect(s.from).toBe(want);
    // A version package.json's engines field admits (>=22.18).
    const [major, minor] = ciNodeVersion().split('.').map(Number);
    expect(pkg.engines.node).toBe('>=22.18');
    expect(major > 22 || (major === 22 && minor >= 18)).toBe(true);
  });

  it('copies from the build context only files that exist', () => {
    const missing = stages.flatMap(contextSources).filter((src) => !fs.existsSync(path.join(ROOT, src)));
    expect(missing).toEqual([]);
  });

  it('copies into the build stage everything the build compiles and the package ships', () => {
    const copied = new Set(contextSources(build));
    // tsc's inputs, the build script and the dashboard it builds, the lockfile for npm ci.
    const needed = [...tsconfigBuild.include, 'tsconfig.build.json', tsconfigBuild.extends!.replace(/^\.\//, ''), 'scripts', 'viz', 'package.json', 'package-lock.json'];
    // What npm pack puts in the tarball, except dist/, which the build writes.
    needed.push(...pkg.files.map((f) => f.replace(/\/$/, '')).filter((f) => f !== 'dist'));
    expect(needed.filter((f) => !copied.has(f))).toEqual([]);
  });

  it("runs package.json's scripts by name, packs the tarball, and installs it with npm ci --omit=dev", () => {
    const scripts = stages.flatMap(runs).flatMap((r) => [...r.matchAll(/npm run (\S+)/g)].map((m) => m[1]));
    expect(scripts).toContain('build');
    expect(scripts.filter((s) => !(s in pkg.scripts))).toEqual([]);
    expect(runs(build).join('\n')).toMatch(/npm ci .*--ignore-scripts/);
    expect(runs(build).join('\n')).toMatch(/npm pack --ignore-scripts --pack-destination \/pkg/);
    const rt = runs(runtime).join('\n');
    // The tarball npm pack names after the package, unpacked into /app, then the production
    // dependencies at the lockfile's versions (npm ci), without `prepare`, which needs the compiler.
    expect(rt).toContain(`tar -xzf /tmp/pkg/${pkg.name}-*.tgz --strip-components=1 -C /app`);
    expect(rt).toMatch(/npm ci --omit=dev .*--ignore-scripts/);
    const fromBuild = ops(runtime, 'COPY').map((i) => copyParts(i.args)).filter((c) => c.flags.from === 'build');
    expect(fromBuild.flatMap((c) => c.sources)).toEqual(['/pkg/', '/src/package-lock.json']);
    expect(ops(runtime, 'WORKDIR').map((i) => i.args)).toEqual(['/app']);
  });

  it('has socsim as its entrypoint, run as a numeric unprivileged user, with the example experiments in /app', () => {
    expect(ops(runtime, 'ENTRYPOINT').map((i) => JSON.parse(i.args))).toEqual([['socsim']]);
    const bin = pkg.bin.socsim.replace(/^\.\//, '');
    expect(runs(runtime).join('\n')).toContain(`ln -s /app/${bin} /usr/local/bin/socsim`);
    const [user] = ops(runtime, 'USER').map((i) => i.args);
    expect(user).toMatch(/^[1-9]\d*:[1-9]\d*$/);
    expect(contextSources(runtime)).toEqual(['experiments']);
  });
});
