/**
 * Bytes of a text edge list, plain or gzip-compressed, handed to a parser in chunks that end at a
 * line break (a UTF-8 BOM is dropped; a last line without '\n' gets one). Read in chunks of a
 * fixed size, so files of many GiB work; a line longer than a chunk grows the buffer. Every byte
 * read from disk (compressed bytes for gzip) also goes into a hash, so the file's digest costs no
 * second read.
 */
import type { Hash } from 'node:crypto';
import { closeSync, createReadStream, readSync } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { InputError } from '../sim-core/errors.ts';
import { oneLine, unreadable } from './edgeErrors.ts';

export interface ByteSource {
  read(buf: Buffer, offset: number, length: number): number | Promise<number>;
  close(): void;
}

export function fileSource(path: string, fd: number, hash: Hash): ByteSource {
  let pos = 0;
  return {
    read(buf, offset, length) {
      let n: number;
      try {
        n = readSync(fd, buf, offset, length, pos);
      } catch (err) {
        throw unreadable(path, err);
      }
      pos += n;
      hash.update(buf.subarray(offset, offset + n));
      return n;
    },
    close() {
      closeSync(fd);
    },
  };
}

export function gzipSource(path: string, hash: Hash): ByteSource {
  const raw = createReadStream(path);
  const gz = createGunzip();
  raw.on('error', (err) => gz.destroy(err));
  // Every raw chunk passes here before gunzip sees it, so the digest is complete when gunzip ends.
  raw.on('data', (chunk) => hash.update(chunk as Buffer));
  raw.pipe(gz);
  const it = gz[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let pending: Buffer | null = null;
  let pendingOff = 0;
  return {
    async read(buf, offset, length) {
      let written = 0;
      while (written < length) {
        if (pending === null || pendingOff >= pending.length) {
          let r: IteratorResult<Buffer>;
          try {
            r = await it.next();
          } catch (err) {
            throw new InputError(
              `cannot read edge list ${path}: gzip data is damaged (${oneLine((err as Error).message)}); re-download or re-compress the file`,
            );
          }
          if (r.done) break;
          pending = r.value;
          pendingOff = 0;
          continue;
        }
        const k = Math.min(length - written, pending.length - pendingOff);
        pending.copy(buf, offset + written, pendingOff, pendingOff + k);
        pendingOff += k;
        written += k;
      }
      return written;
    },
    close() {
      raw.destroy();
      gz.destroy();
    },
  };
}

/**
 * Reads the whole source (and closes it), calling `parse(u8, buf, end)` for each run of complete
 * lines buf[0, end) (u8 views the same bytes; buf[end-1] is '\n').
 */
export async function readLines(
  source: ByteSource,
  chunkBytes: number,
  parse: (u8: Uint8Array, buf: Buffer, end: number) => void,
): Promise<void> {
  let buf = Buffer.allocUnsafe(chunkBytes + 1);
  let u8 = new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
  let carry = 0;
  let first = true;
  try {
    for (;;) {
      const r = source.read(buf, carry, buf.length - 1 - carry);
      let n = typeof r === 'number' ? r : await r;
      if (first && carry === 0 && n >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) {
        buf.copyWithin(0, 3, n);
        n -= 3;
      }
      first = false;
      if (n === 0) {
        if (carry > 0) {
          buf[carry] = 10;
          parse(u8, buf, carry + 1);
        }
        return;
      }
      const end = carry + n;
      const nl = buf.lastIndexOf(10, end - 1);
      if (nl < 0) {
        carry = end;
        if (carry === buf.length - 1) {
          // A single line longer than the buffer: double the buffer.
          const bigger = Buffer.allocUnsafe(buf.length * 2);
          buf.copy(bigger, 0, 0, carry);
          buf = bigger;
          u8 = new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
        }
        continue;
      }
      parse(u8, buf, nl + 1);
      carry = end - nl - 1;
      buf.copyWithin(0, nl + 1, end);
    }
  } finally {
    source.close();
  }
}
