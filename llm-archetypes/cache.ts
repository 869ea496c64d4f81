/**
 * Response cache and exact replay. Every call is keyed by a SHA-256 of (model, messages, sampling
 * settings, sample index, attempt). Each run writes its own `llm-cache.jsonl`, one JSON line per
 * call outcome that is not a repeat hit: the key, the model and sampling settings that made the
 * call, the reply text or the failure kind, and the recorded latency, tokens and cache-hit flag.
 *
 * What may be served as a cache hit: only completions, i.e. entries with reply text. The text of
 * a reply that is not valid JSON or breaks the schema is still the server's answer to that prompt
 * (the archetype layer re-asks with a new attempt index, which is another key), so it is served
 * like any other. A transport failure (HTTP 429, 5xx or other error status, timeout, refused or
 * dropped connection, unreadable body) is not an answer: it is written to the run's log, so that
 * `--llm replay` reproduces the run's failure accounting exactly, but `LlmCache` never serves it,
 * neither later in the same run nor to a run that reuses the file with `--llm openai --llm-cache`;
 * those calls go to the server again.
 *
 * Replay (`ReplayLog`) serves a key's logged outcomes in the order the live run logged them (a
 * key can fail, then succeed on a later call), and once they are used up, the key's reply as a
 * hit, which is what the live run served.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { InputError } from '../sim-core/errors.ts';
import type { FailureKind } from './reply.ts';

export interface CacheEntry {
  key: string;
  model: string;
  /** The key's sampling settings (absent in caches written before they were recorded). */
  temperature?: number;
  max_tokens?: number;
  sample?: number;
  attempt?: number;
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

/** Whether an entry is a completion, the only kind a cache may serve. */
const isReply = (e: CacheEntry) => e.text !== undefined;

/** Reads a cache file's entries in file order; a malformed line is an InputError naming the line. */
function readEntries(file: string): { text: string; entries: CacheEntry[] } {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`cannot read LLM cache ${file}: ${(e as Error).message}; pass the llm-cache.jsonl of a recorded run`);
  }
  const entries: CacheEntry[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    try {
      const e = JSON.parse(line) as CacheEntry;
      if (typeof e.key !== 'string') throw new Error('no key');
      entries.push(e);
    } catch (err) {
      throw new InputError(`${file} line ${i + 1}: not a cache entry (${(err as Error).message}); the file is damaged`);
    }
  });
  return { text, entries };
}

/** Where a run writes its llm-cache.jsonl; both the live cache and the replay log are one. */
export interface RunLog {
  /** Starts the run directory's llm-cache.jsonl. */
  recordTo(file: string): void;
  /** Bytes of llm-cache.jsonl written so far (a checkpoint records it). */
  position(): number;
  /** For a resumed run: continues llm-cache.jsonl as it was at a checkpoint, `bytes` long. */
  resumeTo(file: string, bytes: number): void;
  /** What the log carries from step to step besides the file (a checkpoint saves it). */
  readonly state: object;
  close(): void;
}

/** The cache of a live run: serves completions, logs every outcome to the run's llm-cache.jsonl. */
export class LlmCache implements RunLog {
  readonly state = {
    /** Completions of a reused cache file, served as hits. */
    reused: new Map<string, CacheEntry>(),
    /** Completions this run has logged (received, or served from `reused`). */
    logged: new Map<string, CacheEntry>(),
  };
  private fd: number | undefined;
  private written = 0;

  /** Loads a recorded cache for reuse; its failures are dropped (they are never served). */
  static load(file: string): LlmCache {
    const c = new LlmCache();
    for (const e of readEntries(file).entries) if (isReply(e) && !c.state.reused.has(e.key)) c.state.reused.set(e.key, e);
    return c;
  }

  /** How many keys have a completion to serve. */
  get size(): number {
    let n = this.state.reused.size;
    for (const k of this.state.logged.keys()) if (!this.state.reused.has(k)) n++;
    return n;
  }

  /** A completion for `key`, or undefined: failures are never served. */
  get(key: string): CacheEntry | undefined {
    return this.state.logged.get(key) ?? this.state.reused.get(key);
  }

  /**
   * Notes that `e` (from `get`) was served as a hit. The first hit on a reused entry is logged,
   * marked as a hit, so the run's own file replays without the reused one; later hits add nothing.
   */
  served(e: CacheEntry): void {
    if (!this.state.logged.has(e.key)) this.record({ ...e, cache_hit: true });
  }

  /** Logs the outcome of a call; a completion becomes servable, a failure never does. */
  record(e: CacheEntry): void {
    if (this.fd !== undefined) {
      const line = Buffer.from(JSON.stringify(e) + '\n');
      fs.writeSync(this.fd, line);
      this.written += line.byteLength;
    }
    if (isReply(e) && !this.state.logged.has(e.key)) this.state.logged.set(e.key, e);
  }

  recordTo(file: string): void {
    this.fd = fs.openSync(file, 'w');
    this.written = 0;
  }

  position(): number {
    return this.written;
  }

  resumeTo(file: string, bytes: number): void {
    fs.truncateSync(file, bytes);
    this.fd = fs.openSync(file, 'a');
    this.written = bytes;
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}

/** The model and sampling settings a replay takes from its log (each: the distinct values seen). */
export interface RecordedSettings {
  models: string[];
  temperatures: number[];
  maxTokens: number[];
  /** Samples per archetype (highest sample index + 1), when the entries record it. */
  samples?: number;
}

/** A recorded run's llm-cache.jsonl, served in order by `--llm replay`. */
export class ReplayLog implements RunLog {
  readonly file: string;
  private readonly text: string;
  readonly entries: CacheEntry[];
  private readonly byKey = new Map<string, CacheEntry[]>();
  /** How many of each key's outcomes the run has been served. */
  readonly state = { used: new Map<string, number>() };

  private constructor(file: string, text: string, entries: CacheEntry[]) {
    this.file = file;
    this.text = text;
    this.entries = entries;
    for (const e of entries) {
      const list = this.byKey.get(e.key);
      if (list) list.push(e);
      else this.byKey.set(e.key, [e]);
    }
  }

  static load(file: string): ReplayLog {
    const { text, entries } = readEntries(file);
    return new ReplayLog(file, text, entries);
  }

  /** The distinct models and settings of the entries (of `model` only, when given). */
  settings(model?: string): RecordedSettings {
    const of = model === undefined ? this.entries : this.entries.filter((e) => e.model === model);
    const distinct = <T extends string | number>(xs: Array<T | undefined>) => [...new Set(xs.filter((x): x is T => x !== undefined))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const samples = distinct(of.map((e) => e.sample));
    return {
      models: distinct(of.map((e) => e.model)),
      temperatures: distinct(of.map((e) => e.temperature)),
      maxTokens: distinct(of.map((e) => e.max_tokens)),
      samples: samples.length ? Math.max(...samples) + 1 : undefined,
    };
  }

  /**
   * What the live run got for its next call with `key`: the key's logged outcomes in order, then
   * its completion as a hit; undefined when the run never made such a call.
   */
  next(key: string): CacheEntry | undefined {
    const list = this.byKey.get(key);
    if (!list) return undefined;
    const n = this.state.used.get(key) ?? 0;
    this.state.used.set(key, n + 1);
    if (n < list.length) return list[n];
    const reply = list.find(isReply);
    return reply && { ...reply, cache_hit: true };
  }

  /** A replay's own llm-cache.jsonl is the replayed file, byte for byte. */
  recordTo(file: string): void {
    fs.writeFileSync(file, this.text);
  }

  position(): number {
    return Buffer.byteLength(this.text);
  }

  resumeTo(file: string): void {
    this.recordTo(file);
  }

  close(): void {}
}
