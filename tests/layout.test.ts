/**
 * The layering of README.md's Layout section: each source folder imports only folders below it,
 * `viz/` imports nothing of the simulator, and the archetype layer imports no CLI code.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Lowest first; a folder may import itself and any folder before it. */
const LAYERS = ['sim-core', 'graph', 'population', 'models', 'platform', 'recsys', 'llm-archetypes', 'runner', 'scenarios', 'experiments'];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (/\.(ts|mts|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

/** Relative imports (static and dynamic) of a file, resolved to repository paths. */
function importsOf(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of src.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    out.push(path.relative(ROOT, path.resolve(path.dirname(file), m[1])));
  }
  return out;
}

const top = (rel: string) => rel.split(path.sep)[0];

describe('layout', () => {
  it('every folder imports only itself and the folders below it', () => {
    const bad: string[] = [];
    for (const folder of LAYERS) {
      const rank = LAYERS.indexOf(folder);
      for (const file of sources(path.join(ROOT, folder))) {
        for (const target of importsOf(file)) {
          const t = top(target);
          if (t === 'package.json' || t === 'bin') continue;
          const r = LAYERS.indexOf(t);
          if (r < 0 || r > rank) bad.push(`${path.relative(ROOT, file)} -> ${target}`);
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it('the dashboard app imports nothing from the simulator', () => {
    const bad = sources(path.join(ROOT, 'viz', 'src')).flatMap((f) => importsOf(f).filter((t) => top(t) !== 'viz').map((t) => `${path.relative(ROOT, f)} -> ${t}`));
    expect(bad).toEqual([]);
  });

  it('the archetype layer imports no CLI code', () => {
    const bad = sources(path.join(ROOT, 'llm-archetypes')).flatMap((f) => importsOf(f).filter((t) => top(t) === 'runner').map((t) => `${path.relative(ROOT, f)} -> ${t}`));
    expect(bad).toEqual([]);
  });
});
