/**
 * The generators' attachment loops as kernels, so their nodes can be drawn on several threads with
 * the bytes of the one-thread loop: Barabasi-Albert (graph/generators.ts `barabasiAlbert`) and the
 * homophilous follow graph (graph/homophilous.ts, below).
 *
 * Node t's draws are keyed by (key, t, draw) and pick uniformly from the endpoint list of the
 * edges before it: position p is edge p >> 1's source (a known function of the edge index) or its
 * target (drawn by an earlier node). A thread that meets a target not yet drawn draws that earlier
 * node itself (the same draws give the same targets, so two threads that both draw it write the
 * same values). A node's targets are final once written; the last one is written with
 * Atomics.store and read with Atomics.load, so a thread that sees it sees the node's others.
 */
import { kernel, kernelList, type ArgsOf } from '../sim-core/kernel.ts';
import { lastAtMost } from '../sim-core/csrKernels.ts';
import { rowDraw, rowSeed, uniform } from '../sim-core/rng.ts';

/** Unset targets in `dst` (the host fills them before the kernel runs). */
export const UNDRAWN = -1;

/** The node that drew edge k: node m drew edges 0..m-1, node t > m edges m + (t - m - 1) m ... */
const nodeOf = (k: number, m: number) => (k < m ? m : m + 1 + Math.floor((k - m) / m));

/** Draws node t's m targets into dst (and whatever earlier nodes they need), unless done. */
function drawNode(dst: Int32Array, key: number, m: number, t: number): void {
  const first = m + (t - m - 1) * m;
  if (Atomics.load(dst, first + m - 1) !== UNDRAWN) return;
  const start = 2 * m * (t - m);
  let chosen = 0;
  let draw = 0;
  while (chosen < m) {
    const p = Math.floor(uniform(key, t, draw++) * start);
    const k = Math.floor(p / 2);
    let v: number;
    if (p % 2 === 0) v = nodeOf(k, m);
    else if (k < m) v = k;
    else {
      v = dst[k];
      if (v === UNDRAWN) {
        drawNode(dst, key, m, nodeOf(k, m));
        v = dst[k];
      }
    }
    let seen = false;
    for (let j = 0; j < chosen && !seen; j++) seen = dst[first + j] === v;
    if (seen) continue;
    if (chosen === m - 1) Atomics.store(dst, first + chosen, v);
    else dst[first + chosen] = v;
    chosen++;
  }
}

/**
 * Nodes [start, end) of a BA graph with m edges per node: src[k] = the node of edge k, dst[k] its
 * target. Edges 0..m-1 (node m to 0..m-1) are set by the host, every other dst[k] = UNDRAWN.
 */
const attachBA = kernel({ reads: {}, writes: { src: 'i32', dst: 'i32' }, params: ['m', 'key'] }, (a, start, end): void => {
  const { src, dst, m, key } = a;
  for (let t = Math.max(start, m + 1); t < end; t++) {
    drawNode(dst, key, m, t);
    const first = m + (t - m - 1) * m;
    for (let j = 0; j < m; j++) src[first + j] = t;
  }
});

// --- The homophilous generator (graph/homophilous.ts) ---

/**
 * Per thread: the accounts the user being drawn follows (and the user itself), as a small
 * open-addressing set (linear probing, -1 empty) sized to twice what the user may follow: a probe
 * stays in cache where a mark per user (40 MB at 10M users) was one more miss per try. `short` is
 * set when the last user drawn accepted fewer follows than it wanted.
 */
let followed = new Int32Array(64);
let short = false;
let stack = new Int32Array(64);

const HOMOPHILOUS = {
  reads: { starts: 'f64', want: 'i32', opinion: 'f32', topic: 'u8' },
  writes: { back: 'i32', dst: 'i32', done: 'u8' },
  params: ['first', 'key', 'kRecip', 'pref', 'recip', 'homophily'],
} as const;
export type HomophilousArgs = ArgsOf<typeof HOMOPHILOUS>;

/** The user whose block holds position p: the last t with starts[t] <= p. */
const ownerOf = (starts: Float64Array, p: number): number => lastAtMost(starts, p, 1, starts.length - 2);

/**
 * Draws user t's follows into its block, which starts at position S: each follow at the next
 * position, a follow-back (when drawn) right after it. A pick by follower count is a uniform
 * position below the current one; if that position's user has not been drawn yet (another thread
 * has it, or nobody yet), returns -(owner + 1) without finishing, and the caller draws the owner
 * first. Otherwise returns the position after t's block. The draws are graph/homophilous.ts's
 * model, keyed as that one-thread loop keys them.
 */
export function drawUser(a: HomophilousArgs, t: number, S: number): number {
  const { dst, back, opinion: Op, topic: Top, key, kRecip, pref, recip, homophily } = a;
  const want = a.want[t];
  let size = 64;
  let shift = 26;
  while (size < 2 * (want + 1)) {
    size *= 2;
    shift--;
  }
  if (followed.length < size) followed = new Int32Array(size);
  const F = followed;
  F.fill(-1, 0, size);
  const mask = size - 1;
  F[Math.imul(t, 0x9e3779b1) >>> shift] = t;
  short = false;
  const ot = Op[t];
  const tt = Top[t];
  let q = S;
  let draw = 1;
  for (let c = 0; c < want; c++) {
    let v = -1;
    for (let tries = 0; tries < 16; tries++) {
      let cand: number;
      if (q > 0 && uniform(key, t, draw++) < pref) {
        const p = Math.floor(uniform(key, t, draw++) * q);
        cand = dst[p];
        if (cand === UNDRAWN) {
          cand = undrawn(a, p);
          if (cand < 0) return cand;
        }
      } else cand = Math.floor(uniform(key, t, draw++) * t);
      let h = Math.imul(cand, 0x9e3779b1) >>> shift;
      let seen = false;
      for (let x = F[h]; x !== -1; x = F[(h = (h + 1) & mask)]) {
        if (x === cand) {
          seen = true;
          break;
        }
      }
      if (seen) continue;
      v = cand;
      const d = 0.25 * Math.abs(ot - Op[cand]) + (tt === Top[cand] ? 0 : 0.5);
      if (uniform(key, t, draw++) < 1 - homophily * d) break;
    }
    if (v < 0) {
      short = true;
      continue;
    }
    let h = Math.imul(v, 0x9e3779b1) >>> shift;
    while (F[h] !== -1) h = (h + 1) & mask;
    F[h] = v;
    dst[q++] = v;
    // A follow-back, keyed by its position (the edge count so far): its source is the target of
    // the edge before it, marked in `back` (sim-core/csr.ts BlockSources; the bits of a block
    // are clear before it is drawn, and a word may be shared with another thread's block).
    if (recip > 0 && uniform(kRecip, q) < recip) {
      Atomics.or(back, q >>> 5, 1 << (q & 31));
      dst[q++] = t;
    }
  }
  return q;
}

/** Whether the last user drawUser finished accepted fewer follows than it wanted. */
export const lastDrawShort = (): boolean => short;

/**
 * Position p read UNDRAWN: -(owner + 1) while its owner is not drawn. If it is (done is published
 * after the owner's writes), the position is re-read; still UNDRAWN means it lies past the end of
 * a user that came up short, so every user after it is being drawn at wrong positions and will be
 * drawn again (graph/homophilous.ts): any valid id will do.
 */
function undrawn(a: HomophilousArgs, p: number): number {
  const o = ownerOf(a.starts, p);
  if (Atomics.load(a.done, o) === 0) return -(o + 1);
  const v = a.dst[p];
  return v === UNDRAWN ? 0 : v;
}

/** The first user a kernel call found short, and its block's end (attachHomophilous's result). */
let firstShort = -1;
let shortEnd = 0;
function noteShort(u: number, end: number): void {
  if (firstShort < 0 || u < firstShort) {
    firstShort = u;
    shortEnd = end;
  }
}

/**
 * Draws user u with drawUser, and first any undrawn user its picks need (the same draws give the
 * same values, so a user drawn twice, here and by another thread or lane, gets the same bytes
 * twice); done[u] is set with Atomics.store once its block is written (1, or 2 if it came up short).
 */
function drawWithOwners(a: HomophilousArgs, u0: number): void {
  let sp = 0;
  stack[sp++] = u0;
  while (sp > 0) {
    const u = stack[sp - 1];
    if (Atomics.load(a.done, u) !== 0) {
      sp--;
      continue;
    }
    const q = drawUser(a, u, a.starts[u]);
    if (q < 0) {
      if (sp === stack.length) {
        const s = new Int32Array(2 * sp);
        s.set(stack);
        stack = s;
      }
      stack[sp++] = -q - 1;
      continue;
    }
    if (short) noteShort(u, q);
    Atomics.store(a.done, u, short ? 2 : 1);
    sp--;
  }
}

/**
 * Lanes: users one thread draws side by side, one try each per round, so that the random reads of
 * a round (the picked positions, then the candidates' opinion and topic) are independent and their
 * cache and TLB misses overlap; drawUser's tries each wait for the last (at 495M edges a pick is a
 * miss in a 2 GB array). A lane runs drawUser's loop unrolled into state: the same draws in the
 * same order per user, so the same edges.
 */
const LANES = 16;
const lUser = new Int32Array(LANES);
const lPos = new Float64Array(LANES);
const lLeft = new Int32Array(LANES);
const lTries = new Int32Array(LANES);
const lDraw = new Int32Array(LANES);
const lLast = new Int32Array(LANES);
const lShort = new Uint8Array(LANES);
const lShift = new Int32Array(LANES);
/** rowSeed(key, user): a lane's draws take one mixing round each (rowDraw). */
const lSeed = new Int32Array(LANES);
/** rowDraw's 32 bits as a uniform in [0, 1), as rng.ts `uniform`. */
const U32 = 1 / 2 ** 32;
const lOp = new Float64Array(LANES);
const lTop = new Int32Array(LANES);
const lPick = new Float64Array(LANES);
const lCand = new Int32Array(LANES);
const lCandOp = new Float64Array(LANES);
const lCandTop = new Int32Array(LANES);
const lSet: Int32Array[] = Array.from({ length: LANES }, () => new Int32Array(64));

/** Ends lane l's user (its block is written) and starts the next undrawn user below `to` in it. */
function refill(a: HomophilousArgs, l: number, next: number, to: number): number {
  if (lUser[l] >= 0) {
    const u = lUser[l];
    if (lShort[l]) noteShort(u, lPos[l]);
    Atomics.store(a.done, u, lShort[l] ? 2 : 1);
    lUser[l] = -1;
  }
  while (next < to) {
    const u = next++;
    if (Atomics.load(a.done, u) !== 0) continue;
    const want = a.want[u];
    if (want === 0) {
      Atomics.store(a.done, u, 1);
      continue;
    }
    let size = 64;
    let shift = 26;
    while (size < 2 * (want + 1)) {
      size *= 2;
      shift--;
    }
    if (lSet[l].length < size) lSet[l] = new Int32Array(size);
    const F = lSet[l];
    F.fill(-1, 0, size);
    F[Math.imul(u, 0x9e3779b1) >>> shift] = u;
    lUser[l] = u;
    lPos[l] = a.starts[u];
    lLeft[l] = want;
    lTries[l] = 0;
    lDraw[l] = 1;
    lLast[l] = -1;
    lShort[l] = 0;
    lShift[l] = shift;
    lSeed[l] = rowSeed(a.key, u);
    lOp[l] = a.opinion[u];
    lTop[l] = a.topic[u];
    return next;
  }
  return next;
}

/** Users [from, to) drawn in lanes (those already done are skipped). */
function drawLanes(a: HomophilousArgs, from: number, to: number): void {
  const { dst, back, opinion: Op, topic: Top, kRecip, pref, recip, homophily } = a;
  // The lanes' arrays as plain local consts: V8 then keeps them at hand instead of loading each
  // module binding at every access (1M users, 2 threads, 8 runs each: 4.95-5.66 -> 4.64-4.96 s,
  // the same edges; taken by array destructuring instead, no gain).
  const users = lUser, positions = lPos, lefts = lLeft, tries = lTries, draws = lDraw, lasts = lLast, shorts = lShort;
  const shifts = lShift, seeds = lSeed, ops = lOp, tops = lTop, picks = lPick, cands = lCand, candOps = lCandOp, candTops = lCandTop;
  const lanes = Math.min(LANES, to - from);
  let next = from;
  let live = 0;
  for (let l = 0; l < lanes; l++) {
    users[l] = -1;
    next = refill(a, l, next, to);
    if (users[l] >= 0) live++;
  }
  while (live > 0) {
    // The round's picks: a position below the lane's own (by follower count) or a uniform user.
    for (let l = 0; l < lanes; l++) {
      const t = users[l];
      if (t < 0) continue;
      const q = positions[l];
      const seed = seeds[l];
      let d = draws[l];
      if (q > 0 && rowDraw(seed, d++) * U32 < pref) picks[l] = Math.floor(rowDraw(seed, d++) * U32 * q);
      else {
        picks[l] = -1;
        cands[l] = Math.floor(rowDraw(seed, d++) * U32 * t);
      }
      draws[l] = d;
    }
    for (let l = 0; l < lanes; l++) if (users[l] >= 0 && picks[l] >= 0) cands[l] = dst[picks[l]];
    for (let l = 0; l < lanes; l++) {
      const c = cands[l];
      if (users[l] >= 0 && c >= 0) {
        candOps[l] = Op[c];
        candTops[l] = Top[c];
      }
    }
    // Each lane's try, as drawUser takes it.
    for (let l = 0; l < lanes; l++) {
      const t = users[l];
      if (t < 0) continue;
      let c = cands[l];
      let cOp = candOps[l];
      let cTop = candTops[l];
      if (c === UNDRAWN) {
        c = undrawn(a, picks[l]);
        if (c < 0) {
          drawWithOwners(a, -c - 1);
          c = undrawn(a, picks[l]);
        }
        cOp = Op[c];
        cTop = Top[c];
      }
      const F = lSet[l];
      const shift = shifts[l];
      const mask = (1 << (32 - shift)) - 1;
      let h = Math.imul(c, 0x9e3779b1) >>> shift;
      let seen = false;
      for (let x = F[h]; x !== -1; x = F[(h = (h + 1) & mask)]) {
        if (x === c) {
          seen = true;
          break;
        }
      }
      if (!seen) {
        lasts[l] = c;
        const d = 0.25 * Math.abs(ops[l] - cOp) + (tops[l] === cTop ? 0 : 0.5);
        if (!(rowDraw(seeds[l], draws[l]++) * U32 < 1 - homophily * d) && ++tries[l] < 16) continue;
      } else if (++tries[l] < 16) continue;
      // This follow is decided: the last candidate not already followed, if any.
      const v = lasts[l];
      if (v < 0) shorts[l] = 1;
      else {
        h = Math.imul(v, 0x9e3779b1) >>> shift;
        while (F[h] !== -1) h = (h + 1) & mask;
        F[h] = v;
        let q = positions[l];
        dst[q++] = v;
        if (recip > 0 && uniform(kRecip, q) < recip) {
          Atomics.or(back, q >>> 5, 1 << (q & 31));
          dst[q++] = t;
        }
        positions[l] = q;
      }
      tries[l] = 0;
      lasts[l] = -1;
      if (--lefts[l] === 0) {
        next = refill(a, l, next, to);
        if (users[l] < 0) live--;
      }
    }
  }
}

/**
 * Users first + [start, end) of the homophilous graph, each into its planned block (starts[t]:
 * the block's first position, planned as if every user accepts all the follows it wants), in
 * lanes (drawLanes). A user that needs an undrawn one draws it first; done[t] is set with
 * Atomics.store once its block is written (1, or 2 when it came up short). Returns the first short
 * user met and its block's end.
 */
const attachHomophilous = kernel(HOMOPHILOUS, (a, start, end): number[] => {
  firstShort = -1;
  shortEnd = 0;
  drawLanes(a, a.first + start, a.first + end);
  return firstShort < 0 ? [] : [firstShort, shortEnd];
});

export const kernels = kernelList(import.meta.url, { attachBA, attachHomophilous });
