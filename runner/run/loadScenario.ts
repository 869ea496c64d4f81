/** Resolves a scenario argument (a file path or the name of a file in scenarios/) and imports it. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError } from '../../sim-core/errors.ts';
import type { Scenario } from './defineScenario.ts';
import { importUserModule } from '../importModule.ts';
import { MODULE_EXT } from '../packageInfo.ts';
import { loadPlugins } from './plugins.ts';

export const SCENARIO_DIR = fileURLToPath(new URL('../../scenarios/', import.meta.url));

/** Names of the bundled scenarios (modules in scenarios/ that export a scenario). */
export function bundledScenarios(): string[] {
  return fs
    .readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith(MODULE_EXT) && !f.endsWith('.d.ts') && f !== `classic${MODULE_EXT}`)
    .map((f) => f.slice(0, -MODULE_EXT.length))
    .sort();
}

export function resolveScenario(arg: string): string {
  const candidates = [arg, path.join(SCENARIO_DIR, `${arg}${MODULE_EXT}`)];
  for (const c of candidates) {
    if (fs.existsSync(c) && fs.statSync(c).isFile()) return path.resolve(c);
  }
  throw new InputError(`unknown scenario "${arg}": not a file and not one of ${bundledScenarios().join(', ')}`);
}

export async function loadScenario(arg: string): Promise<{ scenario: Scenario; file: string }> {
  const file = resolveScenario(arg);
  const mod = (await importUserModule(file, arg)) as { default?: Scenario };
  const s = mod.default;
  if (!s || typeof s !== 'object' || typeof s.setup !== 'function' || typeof s.name !== 'string') {
    throw new InputError(`${file} does not export a scenario; export default defineScenario({...})`);
  }
  if (s.plugins) await loadPlugins(s.plugins, path.dirname(file));
  return { scenario: s, file };
}
