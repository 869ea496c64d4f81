/**
 * Bad input from the user (flags, scenario parameters, files). The CLI prints `message` as one line
 * and exits with code 2, without a stack trace. The message names the problem and the fix.
 */
export class InputError extends Error {
  override name = 'InputError';
}

/**
 * Whether `err` is an InputError, also one made by another copy of socsim (a study's own install
 * loaded by a CLI installed elsewhere), which `instanceof` would miss.
 */
export function isInputError(err: unknown): err is InputError {
  return err instanceof Error && err.name === 'InputError';
}

/** Throws an InputError with `message` unless `condition` holds. */
export function ensureInput(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InputError(message);
}

const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * `text` with each control character (C0, DEL and C1) written as `\xHH`. For messages that quote a
 * file's content or the user's SQL: a quoted byte then cannot recolour, move the cursor or retitle
 * the terminal the message is printed on, nor break the message's one line.
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
