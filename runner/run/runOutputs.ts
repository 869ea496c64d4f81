/**
 * The files of a run directory that phases open through `world.out` (posts, cascades, events, ...):
 * appended step by step, resumed where a checkpoint left them, listed in the manifest at the end.
 */
import path from 'node:path';
import { ArrowFileAppender, writeArrowFile, type AppenderState, type ColumnData } from '../../sim-core/io/arrowFile.ts';
import type { RunOutputs } from '../../sim-core/phase.ts';

/** The run directory's extra files, opened by phases through `world.out`. */
export class Outputs implements RunOutputs {
  readonly dir: string;
  readonly events: boolean;
  private readonly resume?: Record<string, AppenderState>;
  private readonly open = new Map<string, ArrowFileAppender>();
  private readonly written: string[] = [];
  /** `resume`: where each appended file stood at the checkpoint being resumed. */
  constructor(dir: string, events: boolean, resume?: Record<string, AppenderState>) {
    this.dir = dir;
    this.events = events;
    this.resume = resume;
  }
  appender(name: string, schema: ColumnData[]): ArrowFileAppender {
    if (this.open.has(name)) throw new Error(`${name} is already open`);
    const file = path.join(this.dir, name);
    const at = this.resume?.[name];
    const a = at ? ArrowFileAppender.resume(file, schema, at) : ArrowFileAppender.open(file, schema);
    this.open.set(name, a);
    return a;
  }
  /** Where every open appender stands (for a checkpoint). */
  states(): Record<string, AppenderState> {
    return Object.fromEntries([...this.open].map(([name, a]) => [name, a.state()]));
  }
  writeFile(name: string, columns: ColumnData[], rows: number, metadata?: Record<string, string>): void {
    writeArrowFile(path.join(this.dir, name), columns, rows, metadata);
    this.written.push(name);
  }
  /** Closes every appender; returns the names of all files written. */
  close(): string[] {
    for (const a of this.open.values()) a.close();
    return [...this.open.keys(), ...this.written].sort();
  }
}
