/**
 * graph.arrow is written while the first steps run (~4 GB at 10M agents): a checkpoint waits for
 * it (a run that can be resumed has its graph.arrow), as do the end of the run and onReady; a
 * failed write stops the run at the next step. The graph's rows stay pinned meanwhile, so the
 * daily fold does not rewrite them in place.
 */
import { pinRows, type Graph } from '../../sim-core/csr.ts';
import { writeGraphLater } from './runDirectory.ts';

export class BackgroundGraphWrite {
  /** What the write came to once settled: undefined when written. */
  private settled: Promise<Error | undefined> = Promise.resolve(undefined);
  /** The write's error, as soon as it failed. */
  error: Error | undefined;
  private thrown = false;

  start(file: string, graph: Graph, log: (line: string) => void): void {
    const t = performance.now();
    const unpin = pinRows(graph.following.targets);
    this.settled = writeGraphLater(file, graph)
      .finally(unpin)
      .then(
        () => void log(`wrote graph.arrow in ${((performance.now() - t) / 1000).toFixed(1)} s`),
        (err: Error) => (this.error = err),
      );
  }

  /** Waits for the write; throws its error the first time it is asked. */
  async written(): Promise<void> {
    const err = await this.settled;
    if (err && !this.thrown) {
      this.thrown = true;
      throw err;
    }
  }

  /** Calls `fn` once the file is written (never when the write fails). */
  whenWritten(fn: () => void): void {
    void this.settled.then((err) => err || fn());
  }
}
