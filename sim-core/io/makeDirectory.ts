/**
 * Creates a directory and its missing parents one level at a time, failing fast with a message
 * that names the directory. Node's recursive mkdir loops forever on some targets (under /proc it
 * spins at full CPU and ignores SIGTERM), so output folders never go through it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../errors.ts';

/** Makes `dir` (absolute or relative) exist as a directory; `label` names it in messages. */
export function makeDirectory(dir: string, label = dir): void {
  const target = path.resolve(dir);
  const missing: string[] = [];
  let at = target;
  for (;;) {
    const st = fs.statSync(at, { throwIfNoEntry: false });
    if (st) {
      if (!st.isDirectory()) throw new InputError(`cannot create ${label}: ${at} is a file, not a folder; choose another path`);
      break;
    }
    missing.push(at);
    const up = path.dirname(at);
    if (up === at) break;
    at = up;
  }
  for (const d of missing.reverse()) {
    try {
      fs.mkdirSync(d);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' && fs.statSync(d).isDirectory()) continue;
      const why = code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'EROFS' ? 'read-only file system' : code === 'ENOSPC' ? 'no space left on the device' : code === 'ENOENT' ? `${path.dirname(d)} does not accept new folders` : (code ?? (err as Error).message);
      throw new InputError(`cannot create ${label}: ${why} (${code ?? 'error'} at ${d}); choose another path`);
    }
  }
}

/**
 * Throws an InputError when `dir` could not be created or written: its nearest existing folder is
 * a file, read-only, or not writable by this user. For a check before long work (a run's set-up),
 * so that it does not fail only when it first writes.
 */
export function checkCanCreate(dir: string, label = dir): void {
  let at = path.resolve(dir);
  for (;;) {
    const st = fs.statSync(at, { throwIfNoEntry: false });
    if (st) {
      if (!st.isDirectory()) throw new InputError(`cannot create ${label}: ${at} is a file, not a folder; choose another path`);
      break;
    }
    const up = path.dirname(at);
    if (up === at) break;
    at = up;
  }
  try {
    fs.accessSync(at, fs.constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EROFS' ? 'read-only file system' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (code ?? (err as Error).message);
    throw new InputError(`cannot write ${label}: ${why} (${code ?? 'error'} at ${at}); choose another path`);
  }
}
