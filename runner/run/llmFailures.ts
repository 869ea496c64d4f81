/**
 * How many of a run's archetype decisions failed (archetypes.arrow: one row per archetype and
 * round, `samples` asked and `valid` answers): a run whose LLM mostly failed ran on its
 * archetypes' last good (or heuristic) parameters, which its user must hear about.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readArrowFile } from '../../sim-core/io/arrowRead.ts';

/** Default of `--llm-max-failures`: above this share of failed decisions a run exits 1. */
export const DEFAULT_MAX_FAILURE_SHARE = 0.5;

export function archetypeFailures(runDir: string): { failed: number; decisions: number } | undefined {
  const file = path.join(runDir, 'archetypes.arrow');
  if (!fs.existsSync(file)) return undefined;
  const t = readArrowFile(file);
  const samples = t.getChild('samples')?.toArray() as Int32Array | undefined;
  const valid = t.getChild('valid')?.toArray() as Int32Array | undefined;
  if (!samples || !valid) return undefined;
  let decisions = 0;
  let ok = 0;
  for (let i = 0; i < samples.length; i++) {
    decisions += samples[i];
    ok += valid[i];
  }
  return { failed: decisions - ok, decisions };
}

/** One line when more than `maxShare` of the decisions failed; undefined otherwise. */
export function failureWarning(runDir: string, maxShare: number): string | undefined {
  const f = archetypeFailures(runDir);
  if (!f || f.decisions === 0 || f.failed / f.decisions <= maxShare) return undefined;
  const pct = ((100 * f.failed) / f.decisions).toFixed(0);
  return `${f.failed} of ${f.decisions} archetype decisions failed (${pct}%, more than --llm-max-failures ${maxShare}); their archetypes kept their last good parameters (archetypes.arrow, column failure says why); fix the server, or pass --llm-max-failures 1 to accept such a run`;
}
