/** When an intervention applies, whatever its kind. */
import { describe, expect, it } from 'vitest';
import { stepOf } from '../../../platform/interventions/time.ts';

describe('intervention time', () => {
  it('hour is the first step starting at or after it', () => {
    expect(stepOf({ hour: 0 }, 3600)).toBe(0);
    expect(stepOf({ hour: 1 }, 3600)).toBe(1);
    expect(stepOf({ hour: 1.5 }, 3600)).toBe(2);
    expect(stepOf({ hour: 1 }, 180)).toBe(20);
    expect(stepOf({ step: 7 }, 3600)).toBe(7);
  });
});
