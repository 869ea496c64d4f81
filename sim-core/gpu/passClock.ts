/**
 * A GPU pass timed on the device's clock: the pass writes its start and end timestamps into a
 * two-entry query set (dispatch.ts recordPass), `record` queues their resolve and copy behind it,
 * and `elapsedMs` reads them once the queue has finished. For an executor's timeKernels, which
 * waits for each kernel anyway; needs a device opened with 'timestamp-query' (device.ts). Dawn
 * rounds the timestamps (65.5 us on an H100 and on lavapipe).
 */
export class PassClock {
  readonly querySet: GPUQuerySet;
  private readonly resolved: GPUBuffer;
  private readonly readable: GPUBuffer;

  constructor(device: GPUDevice) {
    this.querySet = device.createQuerySet({ type: 'timestamp', count: 2 });
    this.resolved = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    this.readable = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  /** Queues, after the timed pass in `enc`, what makes its timestamps readable. */
  record(enc: GPUCommandEncoder): void {
    enc.resolveQuerySet(this.querySet, 0, 2, this.resolved, 0);
    enc.copyBufferToBuffer(this.resolved, 0, this.readable, 0, 16);
  }

  /** Milliseconds between the last recorded pass's start and end; call once the queue is done. */
  async elapsedMs(): Promise<number> {
    await this.readable.mapAsync(GPUMapMode.READ);
    const [start, end] = new BigUint64Array(this.readable.getMappedRange().slice(0));
    this.readable.unmap();
    return Number(end - start) / 1e6;
  }
}
