/**
 * Bounded, checked file writes for every run file: at most MAX_WRITE_BYTES per call whatever the
 * file size, going on after short writes, and failures as FileWriteErrors naming the file, the
 * bytes and the OS error; whole files are written atomically (temporary name, fsync, rename).
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writevSync } from 'node:fs';
import { dirname } from 'node:path';

// ---------------------------------------------------------------------------------------------
// Writing

/**
 * Most bytes handed to one write call. A run file can hold several GB (graph.arrow at 10^7 agents
 * is ~4 GB), but no single call may reach 2 GiB: Node's synchronous fs binding passes a write's
 * byte count back as a 32-bit int, so a call that writes 2 GiB or more reports a bogus negative
 * error even though the bytes were written ("Unknown system error -335009958, write" was a
 * 3,959,957,338-byte write wrapping around; a 2.4 GB writev on Linux fails the same way). At
 * 256 MiB a call the extra syscalls cost nothing measurable.
 */
export const MAX_WRITE_BYTES = 256 * 1024 * 1024;

/** Most buffers in one writev call (Linux's IOV_MAX is 1024). */
const MAX_IOV = 512;

/** The call that writes every byte of every file here, and the most bytes it gets at once. */
export interface WriteIo {
  /** Writes `buffers` (or a prefix of them) at `position`; returns the bytes written, like fs.writevSync. */
  writev(fd: number, buffers: Uint8Array[], position: number): number;
  maxBytesPerCall: number;
}

const DEFAULT_IO: WriteIo = { writev: writevSync, maxBytesPerCall: MAX_WRITE_BYTES };
let io: WriteIo = DEFAULT_IO;

/**
 * For tests: replaces the write call and its size limit (to force short writes, small chunks or
 * errors); without an argument, restores fs.writevSync and MAX_WRITE_BYTES. The bytes a file ends
 * up with never depend on either.
 */
export function setWriteIo(replacement?: Partial<WriteIo>): void {
  io = { ...DEFAULT_IO, ...replacement };
}

/**
 * Writing a file failed. The message names the file, the bytes being written and how many of them
 * were, and the OS error (code and text, e.g. "ENOSPC: no space left on device, write"), so that a
 * run that dies after hours of set-up says what to fix; `code` is the errno name for programs.
 */
export class FileWriteError extends Error {
  readonly code: string | undefined;

  constructor(
    readonly path: string,
    cause: unknown,
    readonly bytes?: number,
    readonly written?: number,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    const amount =
      bytes === undefined ? '' : written === undefined ? ` (${bytes} bytes)` : ` (${written} of ${bytes} bytes written)`;
    super(`cannot write ${path}: ${reason}${amount}`, { cause });
    this.name = 'FileWriteError';
    this.code = (cause as NodeJS.ErrnoException | undefined)?.code;
  }
}

/**
 * Bytes produced slice by slice as they are written: a column too large to hold whole beside the
 * data it is computed from (columnPlan.ts `GeneratedValues`; writeAtomically only).
 */
export interface GeneratedPart {
  byteLength: number;
  slices(): Iterable<Uint8Array>;
}

/** What a file is written from: byte arrays, or bytes generated while writing. */
export type Part = Uint8Array | GeneratedPart;

export function byteLengthOf(parts: readonly Part[]): number {
  let n = 0;
  for (const p of parts) n += p.byteLength;
  return n;
}

/** The parts as byte arrays; a generated part here is an error (only writeAtomically writes them). */
export function plainParts(parts: readonly Part[]): Uint8Array[] {
  return parts.map((p) => {
    if (!(p instanceof Uint8Array)) throw new Error('generated column values can only be written by writeArrowFile');
    return p;
  });
}

/** writeAllAt over parts that may be generated: runs of byte arrays, then each generated part's slices. */
function writePartsAt(fd: number, parts: readonly Part[], position: number, path: string): number {
  let done = 0;
  let run: Uint8Array[] = [];
  const flush = () => {
    if (run.length > 0) done += writeAllAt(fd, run, position + done, path);
    run = [];
  };
  for (const p of parts) {
    if (p instanceof Uint8Array) {
      run.push(p);
      continue;
    }
    flush();
    let n = 0;
    for (const slice of p.slices()) n += writeAllAt(fd, [slice], position + done + n, path);
    if (n !== p.byteLength) throw new FileWriteError(path, new Error(`a generated part gave ${n} of its ${p.byteLength} bytes`), byteLengthOf(parts), done + n);
    done += n;
  }
  flush();
  return done;
}

/**
 * Writes all parts at `position` of the file `path` (open as `fd`), in calls of at most
 * `io.maxBytesPerCall` bytes and MAX_IOV buffers, going on after short writes. Returns the bytes
 * written (all of them); a failure is a FileWriteError.
 */
export function writeAllAt(fd: number, parts: readonly Uint8Array[], position: number, path: string): number {
  const total = byteLengthOf(parts);
  const limit = io.maxBytesPerCall;
  let done = 0;
  let i = 0; // first part not yet written whole
  let skip = 0; // bytes of parts[i] already written
  const batch: Uint8Array[] = [];
  while (done < total) {
    batch.length = 0;
    let bytes = 0;
    for (let j = i, from = skip; j < parts.length && batch.length < MAX_IOV && bytes < limit; j++, from = 0) {
      const p = parts[j]!;
      const n = Math.min(p.byteLength - from, limit - bytes);
      if (n <= 0) continue;
      batch.push(from === 0 && n === p.byteLength ? p : p.subarray(from, from + n));
      bytes += n;
    }
    let written: number;
    try {
      written = io.writev(fd, batch, position + done);
    } catch (err) {
      throw new FileWriteError(path, err, total, done);
    }
    if (!(written > 0 && written <= bytes)) {
      throw new FileWriteError(path, new Error(`write returned ${written} for ${bytes} bytes`), total, done);
    }
    done += written;
    skip += written;
    while (i < parts.length && skip >= parts[i]!.byteLength) skip -= parts[i++]!.byteLength;
  }
  return total;
}

function fsyncDirectory(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dirname(path), 'r');
    fsyncSync(fd);
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function checkRows(rows: number): void {
  if (!Number.isInteger(rows) || rows < 0 || rows > 0x7fffffff) throw new Error(`invalid row count ${rows}`);
}

/**
 * Writes `parts` to `path.tmp`, fsyncs and renames it to `path`; returns the open fd if `keepOpen`.
 * On failure the temporary file is removed (a failed multi-GB write must not keep the disk full:
 * the run still has to record why it stopped) and a FileWriteError naming `path` is thrown.
 */
export function writeAtomically(path: string, parts: readonly Part[], keepOpen: boolean): number | undefined {
  const tmp = `${path}.tmp`;
  let fd: number | undefined;
  let written = 0;
  try {
    fd = openSync(tmp, 'w');
    written = writePartsAt(fd, parts, 0, path);
    fsyncSync(fd);
    renameSync(tmp, path);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    rmSync(tmp, { force: true });
    throw err instanceof FileWriteError ? err : new FileWriteError(path, err, byteLengthOf(parts), written);
  }
  fsyncDirectory(path);
  if (keepOpen) return fd;
  closeSync(fd);
  return undefined;
}
