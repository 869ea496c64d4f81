/**
 * Bounded, checked file writes for every run file: at most MAX_WRITE_BYTES per call whatever the
 * file size, going on after short writes, and failures as FileWriteErrors naming the file, the
 * bytes and the OS error; whole files are written atomically (temporary name, fsync, rename).
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writevSync } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
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

/** The calls that write every byte of every file here, and the most bytes they get at once. */
export interface WriteIo {
  /** Writes `buffers` (or a prefix of them) at `position`; returns the bytes written, like fs.writevSync. */
  writev(fd: number, buffers: Uint8Array[], position: number): number;
  /** The same for a file written while the caller goes on (`writeAtomicallyLater`), on libuv's threads. */
  writevLater(file: FileHandle, buffers: Uint8Array[], position: number): Promise<number>;
  maxBytesPerCall: number;
}

const DEFAULT_IO: WriteIo = {
  writev: writevSync,
  writevLater: async (file, buffers, position) => (await file.writev(buffers, position)).bytesWritten,
  maxBytesPerCall: MAX_WRITE_BYTES,
};
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
  readonly path: string;
  readonly bytes?: number;
  readonly written?: number;
  readonly code: string | undefined;

  constructor(path: string, cause: unknown, bytes?: number, written?: number) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    const amount =
      bytes === undefined ? '' : written === undefined ? ` (${bytes} bytes)` : ` (${written} of ${bytes} bytes written)`;
    super(`cannot write ${path}: ${reason}${amount}`, { cause });
    this.path = path;
    this.bytes = bytes;
    this.written = written;
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
  const w = new Batches(parts, path);
  while (w.next()) {
    let written: number;
    try {
      written = io.writev(fd, w.batch, position + w.done);
    } catch (err) {
      throw new FileWriteError(path, err, w.total, w.done);
    }
    w.wrote(written);
  }
  return w.total;
}

/** writeAllAt on an open FileHandle, the writes running on libuv's threads. */
async function writeAllAtLater(file: FileHandle, parts: readonly Uint8Array[], position: number, path: string): Promise<number> {
  const w = new Batches(parts, path);
  while (w.next()) {
    let written: number;
    try {
      written = await io.writevLater(file, w.batch, position + w.done);
    } catch (err) {
      throw new FileWriteError(path, err, w.total, w.done);
    }
    w.wrote(written);
  }
  return w.total;
}

/** The writes that put `parts` in a file: batches of at most MAX_IOV buffers and io.maxBytesPerCall bytes, going on after short writes. */
class Batches {
  private readonly parts: readonly Uint8Array[];
  readonly path: string;
  readonly total: number;
  done = 0;
  readonly batch: Uint8Array[] = [];
  private bytes = 0;
  private i = 0; // first part not yet written whole
  private skip = 0; // bytes of parts[i] already written
  constructor(parts: readonly Uint8Array[], path: string) {
    this.parts = parts;
    this.path = path;
    this.total = byteLengthOf(parts);
  }

  /** Fills `batch` with the next bytes to write; false when all are written. */
  next(): boolean {
    if (this.done >= this.total) return false;
    const limit = io.maxBytesPerCall;
    this.batch.length = 0;
    this.bytes = 0;
    for (let j = this.i, from = this.skip; j < this.parts.length && this.batch.length < MAX_IOV && this.bytes < limit; j++, from = 0) {
      const p = this.parts[j]!;
      const n = Math.min(p.byteLength - from, limit - this.bytes);
      if (n <= 0) continue;
      this.batch.push(from === 0 && n === p.byteLength ? p : p.subarray(from, from + n));
      this.bytes += n;
    }
    return true;
  }

  /** Counts a write call's result (a short write leaves the rest for the next batch). */
  wrote(written: number): void {
    if (!(written > 0 && written <= this.bytes)) {
      throw new FileWriteError(this.path, new Error(`write returned ${written} for ${this.bytes} bytes`), this.total, this.done);
    }
    this.done += written;
    this.skip += written;
    while (this.i < this.parts.length && this.skip >= this.parts[this.i]!.byteLength) this.skip -= this.parts[this.i++]!.byteLength;
  }
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

/**
 * writeAtomically (not kept open) with the writes and the fsync on libuv's threads: the calling
 * thread goes on meanwhile, taking only the generated parts' slices, each when the last is written.
 * Same bytes as writeAtomically; on failure the temporary file is removed and the promise rejects
 * with a FileWriteError naming `path`.
 */
export async function writeAtomicallyLater(path: string, parts: readonly Part[]): Promise<void> {
  const tmp = `${path}.tmp`;
  let file: FileHandle | undefined;
  let written = 0;
  try {
    file = await open(tmp, 'w');
    const run: Uint8Array[] = [];
    const flush = async () => {
      if (run.length > 0) written += await writeAllAtLater(file!, run, written, path);
      run.length = 0;
    };
    for (const p of parts) {
      if (p instanceof Uint8Array) {
        run.push(p);
        continue;
      }
      await flush();
      // A slice's buffer is refilled for the next one: each is written before the next is made.
      let n = 0;
      for (const slice of p.slices()) n += await writeAllAtLater(file, [slice], written + n, path);
      if (n !== p.byteLength) throw new FileWriteError(path, new Error(`a generated part gave ${n} of its ${p.byteLength} bytes`), byteLengthOf(parts), written + n);
      written += n;
    }
    await flush();
    await file.sync();
    await file.close();
    file = undefined;
    await rename(tmp, path);
  } catch (err) {
    await file?.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err instanceof FileWriteError ? err : new FileWriteError(path, err, byteLengthOf(parts), written);
  }
  fsyncDirectory(path);
}
