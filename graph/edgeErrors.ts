/**
 * What every edge-list reader is told (the file, the limits, how to read ids) and the one-line
 * InputErrors they throw. Each message names the file, the 1-based line (text) or row (Arrow) and
 * the fix.
 */
import { InputError } from '../sim-core/errors.ts';

/** How node ids in a file are read: integers (the default) or names. */
export type IdsMode = 'int' | 'name';

export interface ReadConfig {
  path: string;
  ids: IdsMode;
  /** Agent count when file ids are used as-is (0..agents-1); 0 when ids are renumbered. */
  agents: number;
  directed: boolean;
  maxEdges: number;
  /** Bytes read per chunk from text files. */
  chunkBytes: number;
}

/** Largest integer id (2^53-1): ids are held exactly as doubles. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;
export const I32_MAX = 0x7fffffff;
/** Most edges one edge list can hold (Int32 indices). */
export const HARD_MAX_EDGES = 0x7fffffff;

// Token kinds.
export const K_INT = 0;
export const K_NAME = 1;
export const K_NEG = 2;
export const K_FRAC = 3;
export const K_BIG = 4;

export function oneLine(s: string): string {
  return s.replace(/\s*[\r\n]+\s*/g, ' ').trim().replace(/\.$/, '');
}

export function unreadable(path: string, err: unknown): InputError {
  const msg = err instanceof Error ? err.message : String(err);
  return new InputError(`cannot read edge list ${path}: ${oneLine(msg)}; check the path and permissions`);
}

export function quoteSnippet(s: string): string {
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}...` : s);
}

export function tooManyEdges(cfg: ReadConfig, where: string): InputError {
  if (cfg.maxEdges >= HARD_MAX_EDGES) {
    return new InputError(`${cfg.path} ${where}: more than ${HARD_MAX_EDGES} edges, the most one edge list can hold; split or sample the graph`);
  }
  return new InputError(`${cfg.path} ${where}: more than ${cfg.maxEdges} edges (maxEdges ${cfg.maxEdges}); raise maxEdges or load a smaller graph`);
}

export function noEdges(cfg: ReadConfig, what: string): InputError {
  return new InputError(`edge list ${cfg.path} has no edges (${what}); add one edge per line as two node ids, e.g. "0 1"`);
}

export function outOfRange(cfg: ReadConfig, where: string, id: number | string): InputError {
  return new InputError(
    `${cfg.path} ${where}: node id ${id} is out of range 0..${cfg.agents - 1} for --agents ${cfg.agents}; drop --agents to number nodes from the file`,
  );
}

/** A field that is not a number at all (e.g. `alice`) where ids are read as integers. */
export function notInteger(cfg: ReadConfig, where: string, token: string, column?: string): InputError {
  const what = `node id ${quoteSnippet(token)}${column === undefined ? '' : ` in column ${JSON.stringify(column)}`} is not an integer`;
  if (cfg.agents > 0) {
    return new InputError(
      `${cfg.path} ${where}: ${what}, but --agents ${cfg.agents} needs ids 0..${cfg.agents - 1}; drop --agents to number nodes from the file`,
    );
  }
  const fix = where.startsWith('row') ? 'fix or drop the row' : 'fix or remove the line';
  return new InputError(`${cfg.path} ${where}: ${what} (ids are read as integers); use --ids name if ids are names, or ${fix}`);
}

export function badNumber(cfg: ReadConfig, where: string, kind: number, token: string): InputError {
  if (kind === K_BIG) {
    return new InputError(
      `${cfg.path} ${where}: node id ${token} is above 2^53-1 (${MAX_ID}); renumber the ids, or load them as names with --ids name`,
    );
  }
  const what = kind === K_NEG ? 'is negative' : 'is not an integer';
  const fix = where.startsWith('row') ? 'fix or drop the row' : 'fix or remove the line';
  return new InputError(
    `${cfg.path} ${where}: node id ${token} ${what}; integer ids must be plain digits (use --ids name to read every id as a name); ${fix}`,
  );
}
