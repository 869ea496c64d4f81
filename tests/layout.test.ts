/**
 * The layering of docs/architecture.md: each source folder imports only itself and the folders
 * below it, runner/'s subsystems likewise, `viz/src` imports nothing of the simulator, and no
 * module imports itself through a chain of others (type-only imports included: a cycle of types
 * is still two concepts that cannot be read apart).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Lowest first; a folder may import itself and any folder before it. `.` is the package's index.ts. */
const LAYERS = ['sim-core', 'graph', 'population', 'models', 'platform', 'recsys', 'llm-archetypes', 'runner', 'scenarios', 'experiments', '.', 'viz', 'deploy', 'scripts', 'templates'];
/** runner/'s subsystems, lowest first; files directly in runner/ are listed by name. */
const RUNNER = ['packageInfo.ts', 'importModule.ts', 'run', 'experiment', 'calibrate', 'analysis', 'serve', 'bench', 'cli', 'api.ts'];
/** Folders that hold no socsim sources. */
const NOT_SOURCES = new Set(['node_modules', 'dist', 'dist.next', 'tests', 'runs', 'scratch', 'bin', '.git', '.ci', '.gpu']);

function sources(dir: string, top = false): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (NOT_SOURCES.has(name) || (top && name.startsWith('.'))) continue;
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) {
      if (!top) out.push(...sources(p));
    } else if (/\.(ts|mts|mjs)$/.test(name) && !(top && /\.config\.ts$/.test(name))) out.push(p);
  }
  return out;
}

function allSources(): string[] {
  const out = sources(ROOT, true);
  for (const name of readdirSync(ROOT)) {
    const p = path.join(ROOT, name);
    if (!NOT_SOURCES.has(name) && !name.startsWith('.') && statSync(p).isDirectory()) out.push(...sources(p));
  }
  return out;
}

/** Relative imports (static, dynamic and re-exports) of a file, resolved to repository paths. */
function importsOf(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of src.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    out.push(path.relative(ROOT, path.resolve(path.dirname(file), m[1])));
  }
  return out;
}

/** The layer of a repository path: its top folder, `.` for a file at the root. */
const top = (rel: string) => (rel.includes(path.sep) ? rel.split(path.sep)[0] : '.');
const runnerPart = (rel: string) => rel.split(path.sep)[1];

describe('layout', () => {
  it('every folder with sources has a place in the layers', () => {
    const folders = [...new Set(allSources().map((f) => top(path.relative(ROOT, f))))];
    expect(folders.filter((f) => !LAYERS.includes(f))).toEqual([]);
    const parts = [...new Set(sources(path.join(ROOT, 'runner')).map((f) => runnerPart(path.relative(ROOT, f))))];
    expect(parts.filter((p) => !RUNNER.includes(p))).toEqual([]);
  });

  it('every folder imports only itself and the folders below it', () => {
    const bad: string[] = [];
    for (const file of allSources()) {
      const from = path.relative(ROOT, file);
      const rank = LAYERS.indexOf(top(from));
      for (const target of importsOf(file)) {
        if (target === 'package.json') continue;
        const r = LAYERS.indexOf(top(target));
        if (r < 0 || r > rank) bad.push(`${from} -> ${target}`);
        else if (top(from) === 'runner' && top(target) === 'runner' && RUNNER.indexOf(runnerPart(target)) > RUNNER.indexOf(runnerPart(from))) bad.push(`${from} -> ${target}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('the dashboard app imports nothing from the simulator', () => {
    const bad = sources(path.join(ROOT, 'viz', 'src')).flatMap((f) => importsOf(f).filter((t) => !t.startsWith(`viz${path.sep}src`)).map((t) => `${path.relative(ROOT, f)} -> ${t}`));
    expect(bad).toEqual([]);
  });

  it('the model layers leave residency to their state tables: no executor sync or host* calls', () => {
    // sim-core/stateTable.ts: domain code tells its tables what it wrote, moved or will read.
    const domain = ['models', 'platform', 'recsys', 'llm-archetypes', 'scenarios', 'experiments'];
    const calls = /\.(?:sync|hostWrote|hostWroteAt|hostMoved|hostCopied|hostRearranged)\?*\.?\(/;
    const bad = allSources()
      .filter((f) => domain.includes(top(path.relative(ROOT, f))))
      .flatMap((f) => readFileSync(f, 'utf8').split('\n').map((line, i) => ({ line, at: `${path.relative(ROOT, f)}:${i + 1}` })))
      .filter(({ line }) => calls.test(line) && !/^\s*(\*|\/\/)/.test(line))
      .map(({ at, line }) => `${at}: ${line.trim()}`);
    expect(bad).toEqual([]);
  });

  it('no module reaches itself through its imports', () => {
    const files = allSources().map((f) => path.relative(ROOT, f));
    const known = new Set(files);
    const edges = new Map(files.map((f) => [f, importsOf(path.join(ROOT, f)).filter((t) => known.has(t))]));
    // Tarjan's strongly connected components: every component of more than one module is a cycle.
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const cycles: string[] = [];
    let next = 0;
    const visit = (v: string) => {
      index.set(v, next);
      low.set(v, next++);
      stack.push(v);
      onStack.add(v);
      for (const w of edges.get(v)!) {
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) === index.get(v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          scc.push(w);
        } while (w !== v);
        if (scc.length > 1 || edges.get(v)!.includes(v)) cycles.push(scc.sort().join(' <-> '));
      }
    };
    for (const f of files) if (!index.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });
});
