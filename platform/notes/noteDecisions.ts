/**
 * What each account does about notes, as pure functions of plain numbers so that a kernel on any
 * thread can call them: whether it is a contributor, whether it writes a note on a post it is
 * shown, whether it rates a note and how. Every draw is counter-based (sim-core/rng.ts): keyed by
 * the caller's `key` (one stream per decision and step, e.g. keyOf(seed, streamOf('notes.write'),
 * step)), the agent, and the post or note, so the answer does not depend on evaluation order or
 * thread count. The model and its parameters are notesConfig.ts's.
 */
import { uniform } from '../../sim-core/rng.ts';
import { VERACITY } from '../posts.ts';
import type { NotesConfig } from './notesConfig.ts';

const TRUE = VERACITY.indexOf('true');
const FALSE = VERACITY.indexOf('false');

/** notesConfig's behaviour parameters as flat numbers (what a kernel takes). */
export interface NoteParams {
  write: number;
  falseMultiplier: number;
  partisan: number;
  rate: number;
  base: number;
  veracity: number;
  stance: number;
  somewhat: number;
}

export function noteParams(cfg: NotesConfig): NoteParams {
  const h = cfg.helpfulness;
  return { write: cfg.write, falseMultiplier: cfg.falseMultiplier, partisan: cfg.partisan, rate: cfg.rate, base: h.base, veracity: h.veracity, stance: h.stance, somewhat: h.somewhat };
}

/** Whether `agent` is a contributor: a draw under `key` (fixed for the run) below `share`. */
export function isContributor(key: number, agent: number, share: number): boolean {
  return uniform(key, agent) < share;
}

/**
 * Probability that a contributor with `opinion` writes a note on a post of `stance` and `veracity`
 * (a posts.ts VERACITY code): write x falseMultiplier (false posts) x exp(partisan (|opinion -
 * stance| - 1)), at most 1.
 */
export function writeProbability(p: NoteParams, opinion: number, stance: number, veracity: number): number {
  const w = p.write * (veracity === FALSE ? p.falseMultiplier : 1) * Math.exp(p.partisan * (Math.abs(opinion - stance) - 1));
  return w < 1 ? w : 1;
}

/** Whether `agent` (contributor: 1, else 0) writes a note on `post` it is shown. */
export function writesNote(key: number, agent: number, post: number, contributor: number, opinion: number, stance: number, veracity: number, p: NoteParams): boolean {
  if (contributor === 0) return false;
  return uniform(key, agent, post) < writeProbability(p, opinion, stance, veracity);
}

/**
 * The rating `agent` gives `note` (on a post of `stance` and `veracity`) when shown it: -1 for
 * none (not a contributor, or it does not rate), else 1 (Yes), 0.5 (Somewhat) or 0 (No) from the
 * ordered logit of notesConfig's helpfulness. The caller leaves out the note's own writer. Draws
 * 2 note and 2 note + 1 of (key, agent): whether it rates, and how.
 */
export function rateNote(key: number, agent: number, note: number, contributor: number, opinion: number, stance: number, veracity: number, p: NoteParams): number {
  if (contributor === 0 || uniform(key, agent, 2 * note) >= p.rate) return -1;
  const v = veracity === FALSE ? 1 : veracity === TRUE ? -1 : 0;
  const z = p.base + p.veracity * v + p.stance * (Math.abs(opinion - stance) - 1);
  const u = uniform(key, agent, 2 * note + 1);
  if (u < 1 / (1 + Math.exp(p.somewhat - z))) return 1;
  if (u < 1 / (1 + Math.exp(-p.somewhat - z))) return 0.5;
  return 0;
}
