import { describe, expect, it } from 'vitest';
import { parseNotesConfig } from '../../../platform/notes/notesConfig.ts';
import { InputError } from '../../../sim-core/errors.ts';

/** The message of what `f` throws, after checking it is a one-line InputError. */
function refusal(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    const m = (err as Error).message;
    expect(m).not.toContain('\n');
    return m;
  }
  throw new Error('not refused');
}

describe('notesConfig', () => {
  it('fills the sourced defaults', () => {
    const c = parseNotesConfig(undefined);
    expect(c.enabled).toBe(false);
    expect(c.scoring).toBe('bridging');
    expect(c.scoringHours).toBe(1);
    expect(c.shown).toEqual({ reshare: 0.539, like: 0.559 });
    expect(parseNotesConfig({ enabled: true, shown: { like: 1 } }).shown).toEqual({ reshare: 0.539, like: 1 });
  });

  it('refuses bad input in one line naming the field', () => {
    expect(refusal(() => parseNotesConfig({ contributors: 2 }))).toMatch(/^notes\.contributors: .*--set notes\.contributors=VALUE$/);
    expect(refusal(() => parseNotesConfig({ scoring: 'vote' }))).toMatch(/^notes\.scoring: /);
    expect(refusal(() => parseNotesConfig({ majorityThreshold: 0.5 }))).toMatch(/^notes\.majorityThreshold: /);
    expect(refusal(() => parseNotesConfig({ contributers: 0.1 }))).toMatch(/^unknown field notes\.contributers; fields: enabled, scoring, contributors/);
    expect(refusal(() => parseNotesConfig({ shown: { repost: 0.5 } }))).toMatch(/^unknown field notes\.shown\.repost; fields: reshare, like$/);
    expect(refusal(() => parseNotesConfig({ rate: -1 }, 'platform.notes'))).toMatch(/^platform\.notes\.rate: .*--set platform\.notes\.rate=VALUE$/);
  });
});
