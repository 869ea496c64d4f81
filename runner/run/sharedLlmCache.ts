/**
 * One LLM response cache for all the runs of an experiment (`--llm openai`): DIR/llm-cache.jsonl.
 * Each run starts from a snapshot of it (DIR/plans/<id>.llm-cache.jsonl: a file nobody writes
 * while the run reads it, and the one a resumed run finds again), and the lines the run recorded
 * in its own llm-cache.jsonl are added to the shared file when the run completes, in the order
 * runs complete, by an atomic rewrite. Arms that share a seed ask the same questions until their
 * worlds diverge (common random numbers), so later arms are answered from the cache. A
 * `--llm-cache FILE` given to the experiment seeds the shared cache.
 */
import fs from 'node:fs';
import path from 'node:path';

const SHARED = 'llm-cache.jsonl';

function lines(file: string): string[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '') : [];
}

export class SharedLlmCache {
  private readonly dir: string;
  /** The experiment's --llm* flags without --llm-cache. */
  readonly flags: string[];

  private constructor(dir: string, flags: string[]) {
    this.dir = dir;
    this.flags = flags;
  }

  /** The shared cache of an experiment whose runs ask a live server, or undefined. */
  static of(dir: string, llm: readonly string[] | undefined): SharedLlmCache | undefined {
    if (!llm) return undefined;
    const at = llm.indexOf('--llm');
    if (at < 0 || llm[at + 1] !== 'openai') return undefined;
    const c = llm.indexOf('--llm-cache');
    const cache = new SharedLlmCache(dir, c < 0 ? [...llm] : [...llm.slice(0, c), ...llm.slice(c + 2)]);
    if (c >= 0 && !fs.existsSync(cache.file)) cache.write(lines(llm[c + 1]));
    return cache;
  }

  get file(): string {
    return path.join(this.dir, SHARED);
  }

  /** Flags for a fresh run: the experiment's, and the snapshot of the shared cache it starts from. */
  argsFor(runId: string): string[] {
    const snapshot = path.join(this.dir, 'plans', `${runId}.llm-cache.jsonl`);
    if (!fs.existsSync(this.file)) return this.flags;
    fs.copyFileSync(this.file, snapshot);
    return [...this.flags, '--llm-cache', snapshot];
  }

  /** Adds the calls a completed run made (not the hits it was served from the cache). */
  absorb(runDir: string): void {
    const have = lines(this.file);
    const seen = new Set(have);
    const add = lines(path.join(runDir, SHARED)).filter((l) => !(JSON.parse(l) as { cache_hit?: boolean }).cache_hit && !seen.has(l) && (seen.add(l), true));
    if (add.length > 0) this.write([...have, ...add]);
  }

  private write(all: string[]): void {
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, all.map((l) => l + '\n').join(''));
    fs.renameSync(tmp, this.file);
  }
}
