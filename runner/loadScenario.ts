/** Resolves a scenario argument (a file path or the name of a file in scenarios/) and imports it. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { InputError } from '../sim-core/errors.ts';
import type { Scenario } from './defineScenario.ts';

export const SCENARIO_DIR = fileURLToPath(new URL('../scenarios/', import.meta.url));

/** Names of the bundled scenarios (files in scenarios/ that export a scenario). */
export function bundledScenarios(): string[] {
  return fs
    .readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith('.ts') && f !== 'classic.ts')
    .map((f) => f.slice(0, -3))
    .sort();
}

export function resolveScenario(arg: string): string {
  const candidates = [arg, path.join(SCENARIO_DIR, `${arg}.ts`), path.join(SCENARIO_DIR, arg)];
  for (const c of candidates) {
    if (fs.existsSync(c) && fs.statSync(c).isFile()) return path.resolve(c);
  }
  throw new InputError(`unknown scenario "${arg}": not a file and not one of ${bundledScenarios().join(', ')}`);
}

export async function loadScenario(arg: string): Promise<{ scenario: Scenario; file: string }> {
  const file = resolveScenario(arg);
  const mod = (await import(pathToFileURL(file).href)) as { default?: Scenario };
  const s = mod.default;
  if (!s || typeof s !== 'object' || typeof s.setup !== 'function' || typeof s.name !== 'string') {
    throw new InputError(`${file} does not export a scenario; export default defineScenario({...})`);
  }
  return { scenario: s, file };
}
