/**
 * One writer per directory. A run (`run`, `--resume`, `--force`, an experiment's child runs) holds
 * an exclusive lock on its run directory for its whole life; `socsim experiment` holds one on the
 * experiment directory, and its shards (`--shard i/N`, which share a directory by design) a shared
 * one, so shards run together but never beside a whole experiment or a merge.
 *
 * The lock is a POSIX record lock (fcntl), taken through SQLite's locking on an empty database
 * file, `.socsim.lock`: the operating system holds it for the process and drops it when the
 * process ends, however it ends (kill -9 included), so a lock is never stale, and it works on
 * shared file systems that support POSIX locks (NFS with lockd, as Slurm clusters use). Node has no
 * other way to an OS-level lock without a native addon. The exclusive holder's pid, host, start time
 * and command are written beside it (`.socsim.lock.json`) for the message a second writer gets, and
 * left there by a process that dies, so the next writer can say whose run it takes over.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { InputError } from '../../sim-core/errors.ts';
import { makeDirectory } from '../../sim-core/io/makeDirectory.ts';

export const LOCK_FILE = '.socsim.lock';
export const HOLDER_FILE = '.socsim.lock.json';
/** The lock's files (and the holder record's temporary name): not part of what a directory holds. */
export const LOCK_ENTRY = /^\.socsim\.lock(-journal|\.json(\.tmp)?)?$/;

export type LockMode = 'exclusive' | 'shared';

export interface LockHolder {
  pid: number;
  host: string;
  started_at: string;
  /** What the holder runs, e.g. "socsim run sir". */
  command: string;
}

export interface DirLock {
  readonly dir: string;
  /** The exclusive holder before this one, when it died holding the directory (its record was left). */
  readonly tookOverFrom?: LockHolder;
  release(): void;
}

let sqliteModule: typeof import('node:sqlite') | undefined;

/**
 * The connections that hold locks. A DatabaseSync that is garbage-collected closes, and its lock
 * goes with it: a caller that drops its DirLock must not lose the lock, so they are kept here
 * until released.
 */
const held = new Set<DatabaseSync>();

/** node:sqlite, without the ExperimentalWarning that Node 22 prints on its first load. */
function sqlite(): typeof import('node:sqlite') {
  if (sqliteModule) return sqliteModule;
  const emit = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (/SQLite is an experimental feature/.test(text)) return;
    return (emit as (...a: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    sqliteModule = process.getBuiltinModule('node:sqlite') as typeof import('node:sqlite');
  } finally {
    process.emitWarning = emit;
  }
  return sqliteModule;
}

/** Opens the lock database and takes the lock; undefined when another process holds it. */
function take(file: string, mode: LockMode, waitMs: number): DatabaseSync | undefined {
  const { DatabaseSync } = sqlite();
  const db = new DatabaseSync(file, { timeout: waitMs });
  try {
    // No journal file beside it (in memory; OFF is not honoured here); the lock, once taken, is kept until the connection closes.
    db.exec('PRAGMA journal_mode=MEMORY; PRAGMA locking_mode=EXCLUSIVE');
    if (mode === 'exclusive') db.exec('BEGIN EXCLUSIVE');
    else db.prepare('SELECT count(*) FROM sqlite_master').get();
    return db;
  } catch (err) {
    db.close();
    if ((err as { errcode?: number }).errcode === 5 || /database is locked/.test((err as Error).message)) return undefined;
    throw err;
  }
}

export function readHolder(dir: string): LockHolder | undefined {
  try {
    const h = JSON.parse(fs.readFileSync(path.join(dir, HOLDER_FILE), 'utf8')) as LockHolder;
    return typeof h.pid === 'number' && typeof h.host === 'string' ? h : undefined;
  } catch {
    return undefined;
  }
}

export function describeHolder(h: LockHolder | undefined): string {
  if (!h) return 'another socsim process (the shards of an experiment, or a writer that has not yet recorded itself)';
  return `process ${h.pid} on ${h.host === os.hostname() ? 'this host' : h.host} (${h.command}, since ${h.started_at})`;
}

/**
 * Takes the directory's lock (creating the directory when it is missing), or throws an InputError
 * naming the holder. `what` is the command for the holder record; `label` names the directory.
 */
export function lockDirectory(dir: string, o: { mode?: LockMode; label?: string; what: string }): DirLock {
  const mode = o.mode ?? 'exclusive';
  const label = o.label ?? dir;
  makeDirectory(dir, label);
  const file = path.join(dir, LOCK_FILE);
  // A short wait: a reader probing the lock (directoryBusy) holds it for an instant.
  let db: DatabaseSync | undefined;
  try {
    db = take(file, mode, 250);
  } catch (err) {
    throw new InputError(`cannot lock ${label} (${(err as Error).message}); socsim needs a file system with POSIX locks for its output folders`);
  }
  if (!db) throw new InputError(`${label} is being written by ${describeHolder(readHolder(dir))}; wait for it to finish or stop it (two processes never write one directory)`);
  const previous = readHolder(dir);
  const mine: LockHolder = { pid: process.pid, host: os.hostname(), started_at: new Date().toISOString(), command: o.what };
  if (mode === 'exclusive') {
    const tmp = path.join(dir, `${HOLDER_FILE}.tmp`);
    fs.writeFileSync(tmp, JSON.stringify(mine) + '\n');
    fs.renameSync(tmp, path.join(dir, HOLDER_FILE));
  }
  held.add(db);
  let open = true;
  return {
    dir,
    tookOverFrom: mode === 'exclusive' && previous && !(previous.pid === mine.pid && previous.host === mine.host) ? previous : undefined,
    release() {
      if (!open) return;
      open = false;
      if (mode === 'exclusive' && readHolder(dir)?.pid === process.pid) fs.rmSync(path.join(dir, HOLDER_FILE), { force: true });
      held.delete(db);
      db.close();
    },
  };
}

/**
 * Whether a process holds the directory's lock now: true or false, or undefined when the directory
 * has no lock file (a run written before locks, or none at all).
 */
export function directoryBusy(dir: string): boolean | undefined {
  if (!fs.existsSync(path.join(dir, LOCK_FILE))) return undefined;
  const file = path.join(dir, LOCK_FILE);
  // Exclusive, so that shards' shared holds count too.
  const db = take(file, 'exclusive', 0);
  if (!db) return true;
  db.close();
  return false;
}
