/**
 * State tables: what a step's phases share besides the agent columns and the graph, in named
 * groups (a social platform's posts, feeds, follows, ...). A phase's `state` holds its tables as
 * fields, the field's name being the table's name; the phase declares which it reads and writes
 * (Phase.tables), and checkPhases (phase.ts) checks the names and the order.
 *
 * A table also carries the residency bookkeeping of its arrays. An executor that keeps device
 * copies (sim-core/gpu/executor.ts) must learn what host code wrote, moved or copied after kernels
 * used an array, and host code must wait for what kernels wrote before it reads it. Domain code
 * says so through its tables' methods (wrote, wroteAt, moved, copied, rearranged, forHost), never
 * through the executor's optional methods; with an executor that keeps no copies they do nothing.
 *
 * The executor is bound once at set-up (`bind`) and held in a private field: a checkpoint saves
 * and restores a table's own enumerable fields only (checkpoint.ts), so the binding is neither
 * saved nor overwritten by a restore. Residency calls on a table never bound throw, so a table a
 * kernel uses cannot silently skip its bookkeeping.
 */
import type { Executor } from './exec.ts';
import type { IndexList } from './indexList.ts';
import type { TypedArray } from './table.ts';

/**
 * `carried`: holds state from one step to the next (a checkpoint saves it). `step`: rewritten every
 * step before anything reads it (per-step scratch such as the feeds shown this step), so within a
 * step a phase that writes it must come before every phase that reads it.
 */
export type Lifetime = 'carried' | 'step';

/** What host code wrote of an array: the elements at some indices, or any of a range of them. */
export type Written = 'any' | IndexList;

/** Ranges for forHost: a whole array, or its first `length` elements. */
export type HostRange = TypedArray | { array: TypedArray; length: number };

export abstract class StateTable {
  #exec: Executor | undefined;

  /** See Lifetime; a getter, so that it is not part of the checkpointed fields. */
  get lifetime(): Lifetime {
    return 'carried';
  }

  /** Binds the table to the executor whose kernels read and write its arrays (the world's). */
  bind(exec: Executor): this {
    this.#exec = exec;
    return this;
  }

  /** The bound executor, for a table's own kernel runs (exec.run, exec.reduce). */
  protected get exec(): Executor {
    if (!this.#exec) throw new Error(`${this.constructor.name} is used before it is bound to an executor (StateTable.bind)`);
    return this.#exec;
  }

  /** Whether the bound executor keeps device copies that host writes must be announced to. */
  get onDevice(): boolean {
    return this.exec.hostWrote !== undefined;
  }

  /** Host code wrote elements [from, to) of `array` (all of it by default). */
  wrote(array: TypedArray, from?: number, to?: number): void {
    this.exec.hostWrote?.(array, from, to);
  }

  /**
   * Host code wrote the elements of `array` at `at[0..n)` (repeats allowed). An executor without
   * scattered announcements takes elements [from, to) as written instead.
   */
  wroteAt(array: TypedArray, at: Int32Array, n: number, from = 0, to = array.length): void {
    const e = this.exec;
    if (!e.hostWrote || n === 0) return;
    if (e.hostWroteAt) e.hostWroteAt(array, at, n);
    else if (to > from) e.hostWrote(array, from, to);
  }

  /** wrote or wroteAt, by `written`: any of elements [from, to), or the indices listed. */
  wroteWhere(array: TypedArray, written: Written, from = 0, to = array.length): void {
    if (written !== 'any') this.wroteAt(array, written.at, written.n, from, to);
    else if (to > from) this.wrote(array, from, to);
  }

  /** Host code moved elements [from, from + count) of `array` down to `to` (Executor.hostMoved). */
  moved(array: TypedArray, from: number, to: number, count: number): void {
    this.exec.hostMoved?.(array, from, to, count);
  }

  /** Host code copied elements [0, count) of `src` into the new array `dst` (Executor.hostCopied). */
  copied(dst: TypedArray, src: TypedArray, count: number): void {
    this.exec.hostCopied?.(dst, src, count);
  }

  /** Host code made `dst` from pieces of `src` (Executor.hostRearranged). */
  rearranged(dst: TypedArray, src: TypedArray, pieces: ArrayLike<number>): void {
    this.exec.hostRearranged?.(dst, src, pieces);
  }

  /**
   * Before host code reads what kernels wrote: waits until the host copies of these ranges (of
   * every array, without `ranges`) are valid.
   */
  async forHost(ranges?: readonly HostRange[]): Promise<void> {
    await this.exec.sync?.(ranges);
  }
}

/** The tables a phase state holds: its own fields that are StateTables, by field name. */
export function tablesOf(state: object | undefined): Map<string, StateTable> {
  const out = new Map<string, StateTable>();
  if (state) for (const [name, v] of Object.entries(state)) if (v instanceof StateTable) out.set(name, v);
  return out;
}

/** Binds every table of `state` to `exec`. */
export function bindTables(state: object, exec: Executor): void {
  for (const t of tablesOf(state).values()) t.bind(exec);
}
