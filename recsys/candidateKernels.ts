/**
 * The candidate index's kernels (candidates.ts builds the index with them), with their WGSL
 * versions (candidateKernels.wgsl.ts).
 */
import { kernel, kernelList } from '../sim-core/kernel.ts';
import { hash } from '../sim-core/rng.ts';
import { FLAG, KIND } from '../platform/posts.ts';
import { BUNDLED_RANKERS } from './rankerRegistry.ts';
import { TOP_WORDS, topWidth } from './topLists.ts';
import { candidateTopsGpu, mergeTopsGpu } from './candidateKernels.wgsl.ts';

const FLAG_REMOVED = FLAG.removed;
/** Whether typed arrays are little-endian (byte 0 of a word is its low byte). */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/**
 * The candidate index's lists (candidates.ts) are built in two passes, each a kernel: the best of
 * every slice of `sliceRows` post rows (candidateTops), then, per list, the best of the slices'
 * best (mergeTops). Both order entries by an integer key, (score, tie) descending, so the lists do
 * not depend on how the rows are sliced or in which order entries are offered, and the WGSL
 * versions (candidateKernels.wgsl.ts) compare the same integers:
 * - score: the ranker's list score (recommender.ts listScore), an f64, as the two words of its bits made
 *   orderable as unsigned integers (`listKey`: the sign bit set for positive numbers, every bit
 *   flipped for negative ones; -0 counts as 0, as a float comparison does);
 * - tie: a keyed hash of the id (equal scores are common, and creation order would hand every
 *   list to whichever posts of a step came first); a bijection of the id for a given key, so
 *   distinct posts have distinct keys and the best k of any set are one set.
 *
 * Lists: laid out as topLists.ts says.
 */

const keyF64 = new Float64Array(1);
const keyU32 = new Uint32Array(keyF64.buffer);
const [LO, HI] = LITTLE_ENDIAN ? [0, 1] : [1, 0];

/**
 * Writes the list key of score x (an f64) at out[at] (high word) and out[at + 1] (low word): the
 * bits of x made orderable as unsigned integers, so that x > y exactly when (hi, lo) compares
 * greater. -0 gives 0's key.
 */
export function listKey(x: number, out: Uint32Array, at: number): void {
  keyF64[0] = x === 0 ? 0 : x;
  const hi = keyU32[HI];
  const lo = keyU32[LO];
  if (hi >>> 31 === 0) {
    out[at] = (hi | 0x80000000) >>> 0;
    out[at + 1] = lo;
  } else {
    out[at] = ~hi >>> 0;
    out[at + 1] = ~lo >>> 0;
  }
}

/**
 * candidateTops, one row per slice: slice s covers post rows firstRow + s x sliceRows onwards (up
 * to `count`) and writes its lists to part[s x topWidth x TOP_WORDS ..]: per topic cluster the best
 * `perCluster` original posts and quotes that are not removed, and the best `trending` of them
 * overall. Unfilled entries have id -1. List scores: the ranker's listScore (recommender.ts) of
 * the post's id, rank multiplier, likes and rank-multiplied base score (the record's recF, or the
 * `score` column when it is not empty, as on a device executor, where the records' recF words are
 * not written; records.ts).
 */
const candidateTops = kernel(
  {
    reads: { kind: 'u8', flags: 'u8', cluster: 'u8', rank: 'f32', likes: 'i32', recF: 'f32', score: 'f32' },
    writes: { part: 'u32' },
    params: ['base', 'count', 'stride', 'ranker', 'firstRow', 'sliceRows', 'topics', 'perCluster', 'trending', 'key'],
  },
  (a, start, end): void => {
    const { kind: Kind, flags: Flags, cluster: Cl, rank: Rank, likes: Likes, base, key, part } = a;
    const R = BUNDLED_RANKERS[a.ranker];
    // Base scores: the records', or on a device executor their own column (records.ts).
    const [B, S] = a.score.length > 0 ? [a.score, 1] : [a.recF, a.stride];
    const per = a.perCluster;
    const cap = a.trending;
    const width = topWidth(a.topics, per, cap);
    const tAt = a.topics * per;
    const ids = new Int32Array(width);
    const scores = new Float64Array(width);
    const ties = new Float64Array(width);
    for (let s = start; s < end; s++) {
      ids.fill(-1);
      const lo = a.firstRow + s * a.sliceRows;
      const hi = Math.min(a.count, lo + a.sliceRows);
      // Newest rows first: scores mostly fall with age, so most rows meet full lists and are
      // turned away at the first test, where oldest first every row entered at the top and moved
      // the whole list down.
      for (let r = hi - 1; r >= lo; r--) {
        const k = Kind[r];
        if ((k !== KIND.original && k !== KIND.quote) || (Flags[r] & FLAG_REMOVED) !== 0) continue;
        const id = base + r;
        const m = Rank[r];
        // Records hold rank-multiplied base scores; a list score from the id applies the multiplier itself.
        const score = R.listScore(B[r * S], id, m, Likes[r], key);
        // The tie (a hash) only for a score that may enter a list: below a full list's last it
        // cannot (insertTop's own first test), and most rows are (2.6M rows a step at 1M agents).
        const cl = Cl[r] * per;
        const inCluster = per > 0 && (ids[cl + per - 1] === -1 || score >= scores[cl + per - 1]);
        const inTrending = cap > 0 && (ids[tAt + cap - 1] === -1 || score >= scores[tAt + cap - 1]);
        if (!inCluster && !inTrending) continue;
        const tie = hash(key, id, 7);
        if (inCluster) insertTop(ids, scores, ties, cl, per, id, score, tie);
        if (inTrending) insertTop(ids, scores, ties, tAt, cap, id, score, tie);
      }
      for (let i = 0, w = s * width * TOP_WORDS; i < width; i++, w += TOP_WORDS) {
        const empty = ids[i] === -1;
        part[w] = ids[i];
        if (empty) part[w + 1] = part[w + 2] = 0;
        else listKey(scores[i], part, w + 1);
        part[w + 3] = empty ? 0 : ties[i];
      }
    }
  },
  candidateTopsGpu,
);

/**
 * Offers (id, score, tie) to the list ids[at .. at+cap), kept descending by (score, tie); -1 marks
 * empty slots. Returns whether it entered.
 */
function insertTop(ids: Int32Array, scores: Float64Array, ties: Float64Array, at: number, cap: number, id: number, score: number, tie: number): boolean {
  const last = at + cap - 1;
  if (ids[last] !== -1 && (score < scores[last] || (score === scores[last] && tie <= ties[last]))) return false;
  let i = last;
  while (i > at && (ids[i - 1] === -1 || scores[i - 1] < score || (scores[i - 1] === score && ties[i - 1] < tie))) {
    ids[i] = ids[i - 1];
    scores[i] = scores[i - 1];
    ties[i] = ties[i - 1];
    i--;
  }
  ids[i] = id;
  scores[i] = score;
  ties[i] = tie;
  return true;
}

/**
 * mergeTops, one row per list (the topics' cluster lists, then trending): the best entries of that
 * list over the `slices` slices of candidateTops' `part`, by key (hi, lo, tie) descending, written
 * as ids to clusterPosts[l x perCluster ..] or to trending (`trendingLen` entries), -1 in the
 * slots left empty.
 */
const mergeTops = kernel(
  {
    reads: { part: 'u32' },
    writes: { clusterPosts: 'i32', trending: 'i32' },
    params: ['slices', 'topics', 'perCluster', 'trendingLen'],
  },
  (a, start, end): void => {
    const { part, topics, perCluster: per, trendingLen } = a;
    const width = topWidth(topics, per, trendingLen);
    const most = Math.max(per, trendingLen);
    const ids = new Int32Array(most);
    const keys = new Float64Array(most * 3);
    for (let l = start; l < end; l++) {
      const cap = l < topics ? per : trendingLen;
      const at = l < topics ? l * per : topics * per;
      let len = 0;
      for (let s = 0; s < a.slices; s++) {
        for (let i = 0, w = (s * width + at) * TOP_WORDS; i < cap; i++, w += TOP_WORDS) {
          const id = part[w] | 0;
          if (id === -1) break;
          const h = part[w + 1];
          const o = part[w + 2];
          const t = part[w + 3];
          // Below a full list's last entry: so are the rest of this slice's list.
          if (len === cap && !keyAbove(h, o, t, keys, 3 * (cap - 1))) break;
          let j = len < cap ? len++ : cap - 1;
          while (j > 0 && keyAbove(h, o, t, keys, 3 * (j - 1))) {
            ids[j] = ids[j - 1];
            keys.copyWithin(3 * j, 3 * (j - 1), 3 * j);
            j--;
          }
          ids[j] = id;
          keys[3 * j] = h;
          keys[3 * j + 1] = o;
          keys[3 * j + 2] = t;
        }
      }
      const out = l < topics ? a.clusterPosts : a.trending;
      const o = l < topics ? l * per : 0;
      for (let i = 0; i < cap; i++) out[o + i] = i < len ? ids[i] : -1;
    }
  },
  mergeTopsGpu,
);

/** Whether key (h, o, t) is above the key at keys[at ..]. */
function keyAbove(h: number, o: number, t: number, keys: Float64Array, at: number): boolean {
  return h !== keys[at] ? h > keys[at] : o !== keys[at + 1] ? o > keys[at + 1] : t > keys[at + 2];
}

export const kernels = kernelList(import.meta.url, { candidateTops, mergeTops });
