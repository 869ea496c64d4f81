/**
 * Response cache and exact replay. Every call is keyed by a SHA-256 of (model, messages, sampling
 * settings, sample index, attempt); the entry holds the reply text or the failure, and the
 * recorded latency and tokens, so a replay reproduces the recorded run exactly, failures included.
 * The cache is a JSON-lines file; the run directory gets its own `llm-cache.jsonl`.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { InputError } from '../sim-core/errors.ts';
import type { FailureKind } from './reply.ts';

export interface CacheEntry {
  key: string;
  model: string;
  text?: string;
  failure?: FailureKind;
  latency_ms: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Whether the recorded call itself was served from a cache. */
  cache_hit: boolean;
}

export function cacheKey(parts: { model: string; messages: unknown; temperature: number; maxTokens: number; sample: number; attempt: number }): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

export class LlmCache {
  private readonly entries = new Map<string, CacheEntry>();
  private fd: number | undefined;

  /** Loads a recorded cache; a malformed line is an InputError naming the line. */
  static load(file: string): LlmCache {
    const c = new LlmCache();
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new InputError(`cannot read LLM cache ${file}: ${(e as Error).message}; pass the llm-cache.jsonl of a recorded run`);
    }
    text.split('\n').forEach((line, i) => {
      if (!line.trim()) return;
      try {
        const e = JSON.parse(line) as CacheEntry;
        if (typeof e.key !== 'string') throw new Error('no key');
        c.entries.set(e.key, e);
      } catch (err) {
        throw new InputError(`${file} line ${i + 1}: not a cache entry (${(err as Error).message}); the file is damaged`);
      }
    });
    return c;
  }

  /**
   * Marks every entry as served from a cache: a recorded cache reused by a live run serves each of
   * its entries as a hit, and the run's own llm-cache.jsonl must say so for its replay to be exact.
   */
  markHits(): void {
    for (const [k, e] of this.entries) this.entries.set(k, { ...e, cache_hit: true });
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): CacheEntry | undefined {
    return this.entries.get(key);
  }

  /** Appends entries to `file` as they are recorded (the run directory's llm-cache.jsonl). */
  recordTo(file: string): void {
    this.fd = fs.openSync(file, 'w');
    for (const e of this.entries.values()) fs.writeSync(this.fd, JSON.stringify(e) + '\n');
  }

  put(e: CacheEntry): void {
    if (!this.entries.has(e.key) && this.fd !== undefined) fs.writeSync(this.fd, JSON.stringify(e) + '\n');
    this.entries.set(e.key, e);
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
