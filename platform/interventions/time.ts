/**
 * When an intervention applies, shared by every kind: `hour` (simulated hours since the start;
 * the first step that begins at or after it) or `step`, exactly one of them; and its `name` in
 * interventions.arrow.
 */
import { z } from 'zod';
import { InputError } from '../../sim-core/errors.ts';

/** The fields every intervention has besides `kind`. */
export const timeFields = {
  hour: z.number().min(0).optional().describe('Simulated hours since the start of the run.'),
  step: z.number().int().min(0).optional().describe('The step it applies at, counted from 0 (instead of hour).'),
  name: z.string().min(1).optional().describe('Name in interventions.arrow (default: kind-index).'),
};

/** What every parsed intervention is, whatever its kind. */
export interface InterventionBase {
  kind: string;
  hour?: number;
  step?: number;
  name?: string;
}

/** The step at which an intervention applies: `step`, or the first step starting at or after `hour`. */
export function stepOf(t: { hour?: number; step?: number }, stepSeconds: number): number {
  if (t.step !== undefined) return t.step;
  return Math.max(0, Math.ceil(((t.hour ?? 0) * 3600) / stepSeconds - 1e-9));
}

/**
 * Throws an InputError for the first intervention that would never apply because it comes after
 * the run's last step (`steps` steps of `stepSeconds`): it would be a silent no-op.
 */
export function checkInterventionTimes(list: readonly InterventionBase[], steps: number, stepSeconds: number): void {
  list.forEach((iv, i) => {
    const at = stepOf(iv, stepSeconds);
    if (at < steps) return;
    const when = iv.step !== undefined ? `step ${iv.step}` : `hour ${iv.hour}`;
    throw new InputError(`interventions[${i}] (${iv.kind} at ${when}) comes after the run's last step (${steps} steps of ${stepSeconds / 3600} h, the last at step ${steps - 1}), so it would never apply; move it earlier or run longer (--steps, --hours)`);
  });
}
