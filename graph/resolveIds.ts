/**
 * Id resolution: node ids as read from a file -> dense ids 0..n-1.
 * - Integer ids: ranked in increasing numeric order (`remapNumeric`); ids that already are 0..n-1
 *   keep their values. The original id of each dense id is returned for `externalIds`.
 * - Names: numbered in order of first appearance (`NameTable`, keyed by bytes so that a string is
 *   decoded once per distinct name).
 */

export function hashBytes(u8: Uint8Array, s: number, e: number): number {
  let h = 0x811c9dc5 | 0;
  for (let i = s; i < e; i++) h = Math.imul(h ^ u8[i], 0x01000193);
  // FNV's low bits mix poorly and the table is indexed by them: finish with murmur3's fmix32.
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * Open-addressing table of names. A slot is 8 ints: hash, id (-1 empty), byte length, offset of
 * bytes 16.. in `tail`, then the first 16 bytes packed in four words, so most names are found and
 * verified with one memory access. Callers that can should `touch` the slots of a batch of hashes
 * first: the independent loads overlap, which matters once the table outgrows the caches.
 */
export class NameTable {
  names: string[] = [];
  n = 0;
  slots = new Int32Array(8 << 12).fill(-1);
  mask = (1 << 12) - 1;
  private tail = new Uint8Array(1 << 12);
  private used = 0;

  /** Loads the slots for `count` hashes (returns a value only so the loads are not dropped). */
  touch(hashes: Int32Array, count: number): number {
    const slots = this.slots;
    const mask = this.mask;
    let acc = 0;
    for (let j = 0; j < count; j++) acc ^= slots[(hashes[j] & mask) << 3];
    return acc;
  }

  /** Id of the name in bytes u8[s, e) (buf: the same bytes as a Buffer); h = hashBytes(u8, s, e). */
  intern(u8: Uint8Array, buf: Buffer, s: number, e: number, h: number): number {
    const len = e - s;
    let w0 = 0;
    let w1 = 0;
    let w2 = 0;
    let w3 = 0;
    const head = len < 16 ? len : 16;
    for (let k = 0; k < head; k++) {
      const v = u8[s + k] << ((k & 3) << 3);
      const q = k >> 2;
      if (q === 0) w0 |= v;
      else if (q === 1) w1 |= v;
      else if (q === 2) w2 |= v;
      else w3 |= v;
    }
    const slots = this.slots;
    const mask = this.mask;
    let idx = h & mask;
    for (;;) {
      const p = idx << 3;
      const id = slots[p + 1];
      if (id < 0) break;
      if (
        slots[p] === h &&
        slots[p + 2] === len &&
        slots[p + 4] === w0 &&
        slots[p + 5] === w1 &&
        slots[p + 6] === w2 &&
        slots[p + 7] === w3
      ) {
        if (len <= 16) return id;
        const o = slots[p + 3] - 16;
        const tail = this.tail;
        let k = 16;
        while (k < len && tail[o + k] === u8[s + k]) k++;
        if (k === len) return id;
      }
      idx = (idx + 1) & mask;
    }
    const id = this.n;
    let o = 0;
    if (len > 16) {
      o = this.used;
      const need = o + len - 16;
      if (need > this.tail.length) {
        let cap = this.tail.length * 2;
        while (need > cap) cap *= 2;
        const t = new Uint8Array(cap);
        t.set(this.tail.subarray(0, o));
        this.tail = t;
      }
      this.tail.set(u8.subarray(s + 16, e), o);
      this.used = need;
    }
    const p = idx << 3;
    slots[p] = h;
    slots[p + 1] = id;
    slots[p + 2] = len;
    slots[p + 3] = o;
    slots[p + 4] = w0;
    slots[p + 5] = w1;
    slots[p + 6] = w2;
    slots[p + 7] = w3;
    this.names.push(buf.toString('utf8', s, e));
    this.n = id + 1;
    if (this.n * 2 > mask + 1) this.rehash();
    return id;
  }

  /** Interns a JS string (Arrow input). */
  internString(str: string): number {
    const b = Buffer.from(str, 'utf8');
    return this.intern(b, b, 0, b.length, hashBytes(b, 0, b.length));
  }

  private rehash(): void {
    const old = this.slots;
    const size = (this.mask + 1) * 2;
    const slots = new Int32Array(8 * size).fill(-1);
    const mask = size - 1;
    for (let p = 0; p < old.length; p += 8) {
      if (old[p + 1] < 0) continue;
      let idx = old[p] & mask;
      while (slots[(idx << 3) + 1] >= 0) idx = (idx + 1) & mask;
      slots.set(old.subarray(p, p + 8), idx << 3);
    }
    this.slots = slots;
    this.mask = mask;
  }
}

/** Numeric ids -> dense 0..n-1 in increasing id order. Reuses the arrays when they are Int32. */
export function remapNumeric(
  rawSrc: Int32Array | Float64Array,
  rawDst: Int32Array | Float64Array,
  m: number,
  maxId: number,
): { src: Int32Array; dst: Int32Array; ids: Float64Array } {
  if (rawSrc instanceof Int32Array && rawDst instanceof Int32Array && maxId < Math.max(1 << 28, 32 * m)) {
    // Presence bitmap over 0..maxId plus a rank prefix per 32-bit word: dense id = rank of the id.
    // Both fit in cache far better than an Int32 table over all ids (random ids stay fast).
    const src = rawSrc;
    const dst = rawDst;
    const words = (maxId >>> 5) + 1;
    const bits = new Int32Array(words);
    for (let k = 0; k < m; k++) {
      const s = src[k];
      const d = dst[k];
      bits[s >>> 5] |= 1 << (s & 31);
      bits[d >>> 5] |= 1 << (d & 31);
    }
    const before = new Int32Array(words);
    let n = 0;
    for (let w = 0; w < words; w++) {
      before[w] = n;
      n += popcount(bits[w]);
    }
    const ids = new Float64Array(n);
    if (n === maxId + 1) {
      for (let v = 0; v < n; v++) ids[v] = v;
      return { src, dst, ids };
    }
    for (let w = 0, d = 0; w < words; w++) {
      let x = bits[w];
      while (x !== 0) {
        const low = x & -x;
        ids[d++] = w * 32 + (31 - Math.clz32(low));
        x ^= low;
      }
    }
    for (let k = 0; k < m; k++) {
      const s = src[k];
      const ws = s >>> 5;
      src[k] = before[ws] + popcount(bits[ws] & ((1 << (s & 31)) - 1));
      const d = dst[k];
      const wd = d >>> 5;
      dst[k] = before[wd] + popcount(bits[wd] & ((1 << (d & 31)) - 1));
    }
    return { src, dst, ids };
  }
  // Sparse or huge ids: hash to first-appearance indices, then rank the distinct ids.
  const src = rawSrc instanceof Int32Array ? rawSrc : new Int32Array(m);
  const dst = rawDst instanceof Int32Array ? rawDst : new Int32Array(m);
  const h = new NumberIndex();
  for (let k = 0; k < m; k++) {
    src[k] = h.indexOf(rawSrc[k]);
    dst[k] = h.indexOf(rawDst[k]);
  }
  const n = h.n;
  const ids = h.keys.slice(0, n).sort();
  const rank = new Int32Array(n);
  for (let r = 0; r < n; r++) rank[h.indexOf(ids[r])] = r;
  for (let k = 0; k < m; k++) {
    src[k] = rank[src[k]];
    dst[k] = rank[dst[k]];
  }
  return { src, dst, ids };
}

/** Open-addressing map from integer-valued doubles (0..2^53-1) to first-appearance indices. */
class NumberIndex {
  keys = new Float64Array(1 << 12);
  n = 0;
  private slots = new Int32Array(1 << 14).fill(-1);
  private mask = (1 << 14) - 1;

  indexOf(v: number): number {
    const slots = this.slots;
    const keys = this.keys;
    const mask = this.mask;
    let idx = hashNumber(v) & mask;
    for (;;) {
      const id = slots[idx];
      if (id < 0) break;
      if (keys[id] === v) return id;
      idx = (idx + 1) & mask;
    }
    const id = this.n++;
    if (id === keys.length) {
      const k2 = new Float64Array(keys.length * 2);
      k2.set(keys);
      this.keys = k2;
    }
    this.keys[id] = v;
    slots[idx] = id;
    if (this.n * 2 > slots.length) this.rehash();
    return id;
  }

  private rehash(): void {
    const size = this.slots.length * 2;
    const slots = new Int32Array(size).fill(-1);
    const mask = size - 1;
    for (let id = 0; id < this.n; id++) {
      let idx = hashNumber(this.keys[id]) & mask;
      while (slots[idx] >= 0) idx = (idx + 1) & mask;
      slots[idx] = id;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

function popcount(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

function hashNumber(v: number): number {
  const lo = v >>> 0;
  const hi = (v / 4294967296) >>> 0;
  let h = Math.imul(lo ^ Math.imul(hi, 0x27d4eb2d), 0x9e3779b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x85ebca6b);
  return h ^ (h >>> 13);
}
