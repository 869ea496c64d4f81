/**
 * Bad input from the user (flags, scenario parameters, files). The CLI prints `message` as one line
 * and exits with code 2, without a stack trace. The message names the problem and the fix.
 */
export class InputError extends Error {
  override name = 'InputError';
}

/** Throws an InputError with `message` unless `condition` holds. */
export function ensureInput(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InputError(message);
}
