/**
 * Mappable buffers for reading device buffers back (residency.ts, executor.ts), kept between
 * read-backs by size class (a power of two): on lavapipe a new 40 MB buffer per read-back takes
 * about 2.5 times as long as a kept one, and the social step reads back every step (its users'
 * rows, the sums).
 */
export class ReadBuffers {
  private readonly device: GPUDevice;
  /** Buffers free for read-backs, by size. */
  private readonly free = new Map<number, GPUBuffer[]>();

  constructor(device: GPUDevice) {
    this.device = device;
  }

  /** A mappable buffer of at least `bytes` to copy into and read from: a kept one of its size class when one is free, else a new one. */
  take(bytes: number): GPUBuffer {
    const size = Math.max(256, 2 ** Math.ceil(Math.log2(bytes)));
    return this.free.get(size)?.pop() ?? this.device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  /** Gives back an unmapped buffer of take() for the next read-back of its size. */
  give(buffer: GPUBuffer): void {
    let free = this.free.get(buffer.size);
    if (!free) this.free.set(buffer.size, (free = []));
    free.push(buffer);
  }

  /** Bytes of the buffers kept. */
  get bytes(): number {
    let n = 0;
    for (const [size, free] of this.free) n += size * free.length;
    return n;
  }

  /**
   * `bytes` bytes of `src` from byte `offset` (a multiple of 4), read back into `into` (a new array
   * by default), straight from the mapped range.
   */
  async read(src: GPUBuffer, bytes: number, offset = 0, into: Uint8Array<ArrayBufferLike> = new Uint8Array(bytes)): Promise<Uint8Array<ArrayBufferLike>> {
    // Whole words, within the buffer (its size and offset are multiples of 4).
    const size = Math.min(Math.max(16, Math.ceil(bytes / 4) * 4), src.size - offset);
    const read = this.take(size);
    const enc = this.device.createCommandEncoder();
    enc.copyBufferToBuffer(src, offset, read, 0, size);
    this.device.queue.submit([enc.finish()]);
    try {
      await read.mapAsync(GPUMapMode.READ, 0, size);
      into.set(new Uint8Array(read.getMappedRange(0, size), 0, bytes));
      read.unmap();
      this.give(read);
    } catch (err) {
      read.destroy();
      throw err;
    }
    return into;
  }
}
