/**
 * Agent snapshots (agents/step-NNNNNN.arrow): the state after N steps. A snapshot whose columns a
 * device holds is written when their copies arrive, while the next step runs (exec.capture); at
 * most one is pending, and `settle` is awaited before anything that lists or needs the snapshots
 * (the next snapshot, a checkpoint, the end of the run).
 */
import path from 'node:path';
import type { Executor } from '../../sim-core/exec.ts';
import { writeArrowFile } from '../../sim-core/io/arrowFile.ts';
import type { World } from '../../sim-core/phase.ts';
import { sharedArray } from '../../sim-core/table.ts';
import { snapshotColumns, snapshotName, type Manifest } from './runDirectory.ts';

export class RunSnapshots {
  private readonly dir: string;
  private readonly agents: World['agents'];
  private readonly manifest: Manifest;
  private readonly ids: Int32Array;
  private pending: Promise<void> | undefined;
  private error: Error | undefined;
  constructor(dir: string, agents: World['agents'], manifest: Manifest) {
    this.dir = dir;
    this.agents = agents;
    this.manifest = manifest;
    this.ids = sharedArray('i32', agents.length);
    for (let i = 0; i < this.ids.length; i++) this.ids[i] = i;
  }

  /** Writes the snapshot of `step` now, from the host's columns (or copies of them). */
  write(step: number, cols = snapshotColumns(this.agents, this.ids)): void {
    const name = snapshotName(step);
    writeArrowFile(path.join(this.dir, name), cols, this.agents.length, { step: String(step) });
    this.manifest.files.agents.push(name);
  }

  /** Writes the snapshot of `step` once the device's copies of its columns arrive. */
  writeLater(step: number, exec: Executor & { capture: NonNullable<Executor['capture']> }): void {
    const cols = snapshotColumns(this.agents, this.ids);
    const arrays = cols.flatMap((c) => (ArrayBuffer.isView(c.values) ? [c.values] : []));
    this.pending = exec
      .capture(arrays)
      .then((copies) => this.write(step, cols.map((c) => (ArrayBuffer.isView(c.values) ? { ...c, values: copies[arrays.indexOf(c.values)] } : c))))
      .catch((err: Error) => {
        this.error = err;
      });
  }

  /** Waits for the pending snapshot; throws its write's error. */
  async settle(): Promise<void> {
    await this.pending;
    this.pending = undefined;
    if (this.error) throw this.error;
  }
}
