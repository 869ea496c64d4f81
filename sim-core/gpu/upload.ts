/**
 * Host-to-device copies through a ring of mapped staging buffers: a part of the host array is
 * copied once, into a staging buffer's mapped memory, and the device copies it from there into the
 * destination (its own command buffer, submitted at once, so queue order puts it before the
 * kernel that needs it); the staging buffer is mapped again once that copy is done.
 *
 * queue.writeBuffer, the alternative, rejects views of a SharedArrayBuffer (every engine array),
 * so it took a copy into an ArrayBuffer, then one into Dawn's staging: on lavapipe that is about
 * 2.5 times as long as this ring once the ring is mapped (its first use maps its 128 MiB), and an
 * H100's social step uploaded at about 1 GB/s that way. Parts below SMALL still go through writeBuffer (no mapping round trip for a
 * few words).
 */
import { writeArray } from './dispatch.ts';

/** Staging buffers in the ring, and bytes each: 128 MiB of host memory, taken at the first large upload. */
const RING = 4;
const PART = 32 << 20;
const SMALL = 256 << 10;

interface Staging {
  buffer: GPUBuffer;
  /** Resolves once the buffer is mapped for writing again (its last copy done). */
  ready: Promise<void>;
}

export class Uploader {
  private readonly device: GPUDevice;
  private ring: Staging[] = [];
  private next = 0;

  constructor(device: GPUDevice) {
    this.device = device;
  }

  /** Copies `src` into `dst` at byte `offset` (a multiple of 4), its last partial word padded with zeros. */
  async write(dst: GPUBuffer, offset: number, src: Uint8Array): Promise<void> {
    if (src.byteLength < SMALL) {
      writeArray(this.device.queue, dst, offset, src);
      return;
    }
    if (this.ring.length === 0) {
      for (let i = 0; i < RING; i++) {
        const buffer = this.device.createBuffer({ size: PART, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, mappedAtCreation: true });
        this.ring.push({ buffer, ready: Promise.resolve() });
      }
    }
    for (let o = 0; o < src.byteLength; o += PART) {
      const bytes = Math.min(PART, src.byteLength - o);
      const padded = Math.ceil(bytes / 4) * 4;
      const s = this.ring[this.next];
      this.next = (this.next + 1) % RING;
      await s.ready;
      const mapped = new Uint8Array(s.buffer.getMappedRange(0, padded));
      mapped.set(src.subarray(o, o + bytes));
      mapped.fill(0, bytes, padded);
      s.buffer.unmap();
      const enc = this.device.createCommandEncoder();
      enc.copyBufferToBuffer(s.buffer, 0, dst, offset + o, padded);
      this.device.queue.submit([enc.finish()]);
      s.ready = s.buffer.mapAsync(GPUMapMode.WRITE);
      // Handled where it is awaited (a destroyed buffer's mapping rejects at close).
      s.ready.catch(() => undefined);
    }
  }

  /** Unmaps and frees the staging buffers (the device is closing). */
  destroy(): void {
    for (const s of this.ring) s.buffer.destroy();
    this.ring = [];
  }
}
