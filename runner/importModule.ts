/**
 * Imports a user's scenario or experiment file (TypeScript through Node's type stripping, or
 * JavaScript) and turns whatever goes wrong into one InputError line that names the file and the
 * line, and says what to do: a syntax error, TypeScript that Node cannot strip, a missing import,
 * or an error thrown while the module runs (e.g. by defineExperiment's checks).
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { InputError } from '../sim-core/errors.ts';
import { PACKAGE_ROOT } from './packageInfo.ts';

/** `file` as the user should read it: relative to the working directory when it is below it. */
function shown(file: string): string {
  const r = path.relative(process.cwd(), file);
  return r && !r.startsWith('..') && !path.isAbsolute(r) ? r : file;
}

function pathOf(loc: string): string {
  return loc.startsWith('file://') ? fileURLToPath(loc) : loc;
}

/**
 * Where the error points in the user's code: the `path:line` header of a syntax error, else the
 * first stack frame outside Node and outside socsim itself.
 */
export function errorLocation(err: Error): string | undefined {
  const stack = err.stack ?? '';
  const head = /^((?:file:\/\/|\/|[A-Za-z]:\\)[^\n]*?):(\d+)\n/.exec(stack);
  if (head) return `${shown(pathOf(head[1]))}:${head[2]}`;
  for (const m of stack.matchAll(/\(?((?:file:\/\/|\/)[^\s():]+):(\d+):\d+\)?$/gm)) {
    const file = pathOf(m[1]);
    if (file.startsWith(PACKAGE_ROOT + path.sep) && !isUserFileInsideSocsim(file)) continue;
    return `${shown(file)}:${m[2]}`;
  }
  return undefined;
}

/** Scenario and experiment files shipped inside socsim are user-level code as far as errors go. */
function isUserFileInsideSocsim(file: string): boolean {
  const rel = path.relative(PACKAGE_ROOT, file).split(path.sep);
  const top = rel[0] === 'dist' ? rel[1] : rel[0];
  return top === 'experiments' || top === 'scenarios';
}

/** What to do about an error Node raised while loading `file`. */
function advice(err: NodeJS.ErrnoException, file: string): string {
  switch (err.code) {
    case 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX':
      return '; Node runs .ts files by stripping their types, which cannot remove enums, namespaces or constructor parameter properties: use a union of string literals or a const object, and plain fields';
    case 'ERR_UNKNOWN_FILE_EXTENSION':
      return file.endsWith('.ts') || file.endsWith('.mts')
        ? `; loading .ts files needs Node >= 22.18, which strips types by itself (this is Node ${process.versions.node}); install Node 24 LTS`
        : '';
    case 'ERR_MODULE_NOT_FOUND':
      return /Cannot find package 'socsim'/.test(err.message)
        ? '; socsim is not installed where this file can import it: in the study folder, run npm install (or npm install socsim)'
        : '; check the import path (relative imports need their extension, e.g. ./other.ts)';
    default:
      return '';
  }
}

/** Imports `file` (absolute); `arg` is how the user named it. Errors become one InputError line. */
export async function importUserModule(file: string, arg: string): Promise<unknown> {
  try {
    return await import(pathToFileURL(file).href);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (!(err instanceof Error)) throw new InputError(`${arg} could not be loaded: ${String(err)}`);
    const where = errorLocation(err) ?? arg;
    const message = err.message.split('\n')[0];
    const name = err.name;
    const prefix = name === 'InputError' || name === 'Error' ? '' : `${name}: `;
    throw new InputError(`${where}: ${prefix}${message}${advice(err, file)}`);
  }
}
