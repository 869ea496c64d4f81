/**
 * A study's plugins: modules whose default export declares something socsim dispatches on by its
 * `type`: a ranker (defineRanker) or an intervention kind (defineIntervention). A run loads them before it reads the scenario's
 * parameters, so that those may name what the plugins add; the run's manifest records them (a
 * resume loads them again) and an experiment passes its plugins to each of its runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { InputError } from '../../sim-core/errors.ts';
import { addRankerPlugin } from '../../recsys/defineRanker.ts';
import type { AnyInterventionKind } from '../../platform/interventions/kind.ts';
import { registerInterventionKind } from '../../platform/interventions/registry.ts';
import { importUserModule } from '../importModule.ts';

/** What each plugin type adds, given the module's default export, its URL and the file as named. */
const PLUGIN_TYPES: Record<string, (def: object, url: string, file: string) => void> = {
  ranker: addRankerPlugin,
  intervention: (def) => registerInterventionKind(def as AnyInterventionKind),
};

/**
 * Loads plugin modules (paths relative to `from`, a folder, or absolute) and adds what each
 * declares; returns their absolute paths. Loading one twice adds it once.
 */
export async function loadPlugins(files: readonly string[], from = process.cwd()): Promise<string[]> {
  const out: string[] = [];
  for (const file of files) {
    const abs = path.resolve(from, file);
    if (!fs.existsSync(abs) || !fs.statSync(abs).isFile()) throw new InputError(`plugin ${file} not found (looked for ${abs}); give the path of a .ts or .js module`);
    const mod = (await importUserModule(abs, file)) as { default?: unknown };
    const def = mod.default;
    if (def === undefined) throw new InputError(`plugin ${file} has no default export; export default defineRanker({...}) or defineIntervention({...}) from it`);
    const type = def !== null && typeof def === 'object' ? (def as { type?: unknown }).type : undefined;
    const add = typeof type === 'string' && Object.hasOwn(PLUGIN_TYPES, type) ? PLUGIN_TYPES[type] : undefined;
    if (!add) throw new InputError(`plugin ${file}: its default export is not a plugin (type ${JSON.stringify(type)}); the plugin types are ${Object.keys(PLUGIN_TYPES).join(', ')}: export default defineRanker({...}) or defineIntervention({...})`);
    add(def as object, pathToFileURL(abs).href, file);
    out.push(abs);
  }
  return out;
}
