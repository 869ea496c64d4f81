import { describe, expect, it } from 'vitest';
import { barabasiAlbert, barabasiAlbertOn, erdosRenyi, homophilousPreferential, homophilousPreferentialOn, stochasticBlockModel, type BlockEdgeList, type EdgeList } from '../../graph/generators.ts';
import { InputError } from '../../sim-core/errors.ts';
import { sourceArray } from '../../sim-core/csr.ts';
import { createExecutor } from '../../sim-core/cpuExecutor.ts';
import { synthesizePopulation } from '../../population/synthesize.ts';

/** Checks ids are in range, no self loops, no duplicate edges (unordered pairs when undirected). */
function expectSimple(el: EdgeList): void {
  const { nodes: n, src, dst } = el;
  expect(src.length).toBe(dst.length);
  const keys = new Float64Array(src.length);
  let bad = 0;
  let loops = 0;
  for (let k = 0; k < src.length; k++) {
    const u = src[k];
    const v = dst[k];
    if (!(Number.isInteger(u) && Number.isInteger(v) && u >= 0 && v >= 0 && u < n && v < n)) bad++;
    if (u === v) loops++;
    keys[k] = el.directed ? u * n + v : Math.min(u, v) * n + Math.max(u, v);
  }
  expect(bad, 'ids out of range').toBe(0);
  expect(loops, 'self loops').toBe(0);
  keys.sort();
  let dups = 0;
  for (let k = 1; k < keys.length; k++) if (keys[k] === keys[k - 1]) dups++;
  expect(dups, 'duplicate edges').toBe(0);
}

function degrees(el: EdgeList): Int32Array {
  const d = new Int32Array(el.nodes);
  for (let k = 0; k < el.src.length; k++) {
    d[el.src[k]]++;
    if (!el.directed) d[el.dst[k]]++;
  }
  return d;
}

function inDegrees(el: EdgeList): Int32Array {
  const d = new Int32Array(el.nodes);
  for (let k = 0; k < el.dst.length; k++) d[el.dst[k]]++;
  return d;
}

function same(a: EdgeList, b: EdgeList): boolean {
  const eq = (x: Int32Array, y: Int32Array) => Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(y.buffer, y.byteOffset, y.byteLength));
  return a.nodes === b.nodes && a.directed === b.directed && eq(a.src, b.src) && eq(a.dst, b.dst);
}

function meanSd(xs: number[]): [number, number] {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  const v = xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1);
  return [m, Math.sqrt(v)];
}

describe('barabasiAlbert', () => {
  it('has m * (n - m) simple undirected edges, min degree m, and hubs (scale-free)', () => {
    for (const [n, m, seed] of [
      [20_000, 3, 1],
      [20_000, 1, 2],
      [5_000, 8, 3],
    ]) {
      const el = barabasiAlbert(n, m, seed);
      expect(el.directed).toBe(false);
      expect(el.nodes).toBe(n);
      expect(el.src.length).toBe(m * (n - m));
      expectSimple(el);
      const d = degrees(el);
      let min = Infinity;
      let max = 0;
      for (const x of d) {
        min = Math.min(min, x);
        max = Math.max(max, x);
      }
      expect(min).toBe(m);
      // Mean degree ~2m; BA's largest hub grows like m * sqrt(n) (~420 for n=20k, m=3), while a
      // Poisson graph of the same mean stays below ~4x the mean.
      const mean = (2 * el.src.length) / n;
      expect(max, `max degree ${max}, mean ${mean}`).toBeGreaterThan(15 * mean);
    }
  });

  it('attaches every new node to earlier nodes only (node m joins 0..m-1 first)', () => {
    const el = barabasiAlbert(50, 3, 9);
    expect(Array.from(el.src.subarray(0, 3))).toEqual([3, 3, 3]);
    expect(Array.from(el.dst.subarray(0, 3))).toEqual([0, 1, 2]);
    for (let k = 0; k < el.src.length; k++) {
      expect(el.dst[k]).toBeLessThan(el.src[k]);
      expect(el.src[k]).toBe(3 + Math.floor(k / 3));
    }
  });

  it('drawn on two threads (nodes that meet undrawn earlier ones draw them), the edges are those of one thread', async () => {
    const exec = createExecutor(2);
    try {
      for (const [n, m, seed] of [
        [400_000, 5, 1],
        [300_000, 1, 2],
        [150_000, 12, 3],
        [4, 3, 4],
      ]) {
        const a = barabasiAlbert(n, m, seed);
        const b = await barabasiAlbertOn(exec, n, m, seed);
        expect(same(a, b), `n=${n} m=${m}`).toBe(true);
        expect(b.dst.includes(-1)).toBe(false);
      }
    } finally {
      await exec.close();
    }
  });

  it('is deterministic per seed and rejects bad parameters', () => {
    expect(same(barabasiAlbert(3000, 4, 5), barabasiAlbert(3000, 4, 5))).toBe(true);
    expect(same(barabasiAlbert(3000, 4, 5), barabasiAlbert(3000, 4, 6))).toBe(false);
    expect(() => barabasiAlbert(5, 5, 1)).toThrow(/m < n/);
    expect(() => barabasiAlbert(5, 5, 1)).toThrow(InputError); // the CLI's exit 2 with one line
    expect(() => barabasiAlbert(10, 0, 1)).toThrow(/1 <= m/);
  });
});

describe('erdosRenyi', () => {
  it('p = 1 lists every pair exactly once (checks the pair-index arithmetic)', () => {
    const n = 37;
    const u = erdosRenyi(n, 1, 1, false);
    expect(u.src.length).toBe((n * (n - 1)) / 2);
    expectSimple(u);
    for (let k = 0; k < u.src.length; k++) expect(u.src[k]).toBeLessThan(u.dst[k]);
    const d = erdosRenyi(n, 1, 1, true);
    expect(d.src.length).toBe(n * (n - 1));
    expectSimple(d);
    expect(erdosRenyi(n, 0, 1).src.length).toBe(0);
    expect(erdosRenyi(1, 0.5, 1).src.length).toBe(0);
  });

  for (const directed of [false, true]) {
    it(`edge count has mean p * pairs within 4 SE over 10 seeds (${directed ? 'directed' : 'undirected'})`, () => {
      const n = 2000;
      const p = 0.004;
      const pairs = directed ? n * (n - 1) : (n * (n - 1)) / 2;
      const seeds = 10;
      const edgeCounts: number[] = [];
      const lowHalf: number[] = [];
      for (let s = 1; s <= seeds; s++) {
        const el = erdosRenyi(n, p, s, directed);
        expect(el.directed).toBe(directed);
        expectSimple(el);
        edgeCounts.push(el.src.length);
        // Uniformity across the index space: endpoints in the lower half of the ids.
        let low = 0;
        for (let k = 0; k < el.src.length; k++) low += (el.src[k] < n / 2 ? 1 : 0) + (el.dst[k] < n / 2 ? 1 : 0);
        lowHalf.push(low / (2 * el.src.length));
      }
      const [mean] = meanSd(edgeCounts);
      const se = Math.sqrt((pairs * p * (1 - p)) / seeds);
      expect(Math.abs(mean - p * pairs), `mean ${mean} vs ${p * pairs}`).toBeLessThan(4 * se);
      // Each endpoint is in the lower half with probability 1/2; ~8k-16k edges per seed.
      const [lm] = meanSd(lowHalf);
      expect(Math.abs(lm - 0.5)).toBeLessThan(4 * Math.sqrt(0.25 / (p * pairs * seeds)));
    });
  }

  it('stays valid at larger n and is deterministic per seed', () => {
    const el = erdosRenyi(100_000, 1e-4, 3);
    expectSimple(el);
    for (let k = 0; k < el.src.length; k++) if (!(el.src[k] < el.dst[k])) throw new Error(`pair ${k} not u < v`);
    expect(same(el, erdosRenyi(100_000, 1e-4, 3))).toBe(true);
    expect(same(el, erdosRenyi(100_000, 1e-4, 4))).toBe(false);
    expect(() => erdosRenyi(10, 1.5, 1)).toThrow(/0 <= p <= 1/);
  });
});

describe('stochasticBlockModel', () => {
  const sizes = [300, 500, 200];
  const probs = [
    [0.1, 0.01, 0.02],
    [0.01, 0.05, 0.005],
    [0.02, 0.005, 0.2],
  ];
  const blockOf = (v: number) => (v < 300 ? 0 : v < 800 ? 1 : 2);

  for (const directed of [false, true]) {
    it(`block-pair edge counts match probs within 4 SE over 3 seeds (${directed ? 'directed' : 'undirected'})`, () => {
      const seeds = 3;
      const B = sizes.length;
      const count = Array.from({ length: B }, () => new Array<number>(B).fill(0));
      for (let s = 1; s <= seeds; s++) {
        const el = stochasticBlockModel(sizes, probs, s, directed);
        expect(el.nodes).toBe(1000);
        expectSimple(el);
        for (let k = 0; k < el.src.length; k++) {
          let a = blockOf(el.src[k]);
          let b = blockOf(el.dst[k]);
          if (!directed && a > b) [a, b] = [b, a];
          count[a][b]++;
        }
      }
      for (let a = 0; a < B; a++) {
        for (let b = 0; b < B; b++) {
          if (!directed && b < a) {
            expect(count[a][b]).toBe(0);
            continue;
          }
          const pairs = a === b ? (directed ? sizes[a] * (sizes[a] - 1) : (sizes[a] * (sizes[a] - 1)) / 2) : sizes[a] * sizes[b];
          const p = probs[a][b];
          const se = Math.sqrt(seeds * pairs * p * (1 - p));
          expect(Math.abs(count[a][b] - seeds * pairs * p), `block ${a},${b}`).toBeLessThan(4 * se);
        }
      }
    });
  }

  it('p = 1 blocks are complete, p = 0 blocks empty; deterministic; validates probs', () => {
    const el = stochasticBlockModel([4, 3], [[1, 0], [0, 1]], 1);
    expect(el.src.length).toBe(6 + 3);
    expectSimple(el);
    for (let k = 0; k < el.src.length; k++) expect(el.src[k] < 4).toBe(el.dst[k] < 4);
    const d = stochasticBlockModel([4, 3], [[0, 1], [0, 0]], 1, true);
    expect(d.src.length).toBe(12);
    for (let k = 0; k < d.src.length; k++) expect([d.src[k] < 4, d.dst[k] >= 4]).toEqual([true, true]);
    expect(same(stochasticBlockModel(sizes, probs, 5), stochasticBlockModel(sizes, probs, 5))).toBe(true);
    expect(same(stochasticBlockModel(sizes, probs, 5), stochasticBlockModel(sizes, probs, 6))).toBe(false);
    expect(() => stochasticBlockModel([2, 2], [[0.5, 2], [0.5, 0.5]], 1)).toThrow(/probs\[0\]\[1\]/);
    // A missing entry the model needs is an error, not a silently empty graph.
    expect(() => stochasticBlockModel([2, 2], [[0.5, 0.5], [0.5]], 1, true)).toThrow(/probs\[1\]\[1\]/);
    expect(() => stochasticBlockModel([2, 2], [[0.5, 0.5]], 1)).toThrow(/2 rows/);
  });
});

/** A block edge list's sources as an array (the statistics below read them per edge). */
const plain = (el: BlockEdgeList): EdgeList => ({ ...el, src: sourceArray(el.src, el.dst) });

describe('homophilousPreferential', () => {
  const n = 20_000;
  const pops = [1, 2, 3, 4].map((s) => synthesizePopulation(n, s));
  const graph = (s: number, homophily: number, extra: Partial<Parameters<typeof homophilousPreferential>[2]> = {}) => {
    const c = pops[s - 1].agents.columns;
    return plain(
      homophilousPreferential(n, s, {
        meanFollowing: 10,
        homophily,
        opinion: c.opinion as Float32Array,
        topic: c.topic as Uint8Array,
        ...extra,
      }),
    );
  };

  it('is simple (no self loops, no duplicate follows, follow-backs included) and deterministic', () => {
    const el = graph(1, 0.7, { reciprocity: 0.3 });
    expect(el.directed).toBe(true);
    expectSimple(el);
    const again = graph(1, 0.7, { reciprocity: 0.3 });
    expect(same(el, again)).toBe(true);
    expect(same(el, graph(2, 0.7, { reciprocity: 0.3 }))).toBe(false);
  });

  it('mean following matches meanFollowing (with and without activity weights and follow-backs)', () => {
    // Each user follows floor(m * w + u) accounts (mean m * w, variance <= 1/4), fewer only for the
    // first m users; weights are mean-normalised, so the total is m * n minus ~m^2/2.
    const m = 10;
    const slack = (4 * 0.5) / Math.sqrt(n) + (m * m) / (2 * n);
    for (const s of [1, 2]) {
      const plain = graph(s, 0.5, { reciprocity: 0 });
      expect(Math.abs(plain.src.length / n - m), 'plain').toBeLessThan(slack);
      const weighted = graph(s, 0.5, { reciprocity: 0, weight: pops[s - 1].agents.columns.activity as Float32Array });
      // Heavy users among the first 20 m can follow only the t users before them: with the default
      // heavy-tailed activity a few hundred edges of m * n go missing (0.3% at this size).
      expect(Math.abs(weighted.src.length / n - m), 'weighted').toBeLessThan(slack + 0.005 * m);
      // Follow-backs: Binomial(m * n, r) extra edges.
      const r = 0.2;
      const recip = graph(s, 0.5, { reciprocity: r });
      const follows = m * n;
      const se = Math.sqrt(follows * r * (1 - r)) / n;
      expect(Math.abs(recip.src.length / n - m * (1 + r)), 'reciprocity').toBeLessThan(slack * (1 + r) + 4 * se);
      // Activity weights: the most active tenth follows more than the least active tenth.
      const act = pops[s - 1].agents.columns.activity as Float32Array;
      const out = new Int32Array(n);
      for (const u of weighted.src) out[u]++;
      const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => act[a] - act[b]);
      const avg = (ids: number[]) => ids.reduce((x, i) => x + out[i], 0) / ids.length;
      expect(avg(order.slice(-n / 10))).toBeGreaterThan(2 * avg(order.slice(0, n / 10)));
    }
  });

  it('in-degree is heavy-tailed under preferential attachment, not under uniform picks', () => {
    for (const s of [1, 2]) {
      const pref = inDegrees(graph(s, 0.5, { preferential: 0.8 }));
      const unif = inDegrees(graph(s, 0.5, { preferential: 0 }));
      const max = (d: Int32Array) => d.reduce((a, b) => Math.max(a, b), 0);
      // Mean in-degree 10. Uniform picks give user j about 10 * ln(n / j) followers: ~100 at most.
      expect(max(pref)).toBeGreaterThan(50 * 10);
      expect(max(pref)).toBeGreaterThan(4 * max(unif));
      expect(max(unif)).toBeLessThan(200);
    }
  });

  it('homophily 0.9 gives more same-topic and close-opinion follows than homophily 0 (4 seeds)', () => {
    const sameTopic: number[] = [];
    const closeOpinion: number[] = [];
    for (const s of [1, 2, 3, 4]) {
      const c = pops[s - 1].agents.columns;
      const Op = c.opinion as Float32Array;
      const Top = c.topic as Uint8Array;
      const shares = (el: EdgeList) => {
        let t = 0;
        let o = 0;
        for (let k = 0; k < el.src.length; k++) {
          if (Top[el.src[k]] === Top[el.dst[k]]) t++;
          if (Math.abs(Op[el.src[k]] - Op[el.dst[k]]) < 0.25) o++;
        }
        return [t / el.src.length, o / el.src.length];
      };
      const [t0, o0] = shares(graph(s, 0, { reciprocity: 0 }));
      const [t9, o9] = shares(graph(s, 0.9, { reciprocity: 0 }));
      sameTopic.push(t9 - t0);
      closeOpinion.push(o9 - o0);
    }
    // Every seed moves the same way, and the mean shift is far beyond the seed-to-seed spread.
    for (const [name, diffs] of [
      ['same topic', sameTopic],
      ['close opinion', closeOpinion],
    ] as const) {
      const [m, sd] = meanSd(diffs);
      expect(Math.min(...diffs), name).toBeGreaterThan(0);
      expect(m, `${name}: mean ${m}, sd ${sd}`).toBeGreaterThan(4 * (sd / Math.sqrt(diffs.length)));
    }
    // Effect sizes: same-topic share roughly doubles (~1.6% -> ~3.5%); close-opinion share rises.
    expect(meanSd(sameTopic)[0]).toBeGreaterThan(0.01);
    expect(meanSd(closeOpinion)[0]).toBeGreaterThan(0.05);
  });

  it('preferential attachment counts follow-backs as followers', () => {
    // Odd users have weight 4, even users 1; with reciprocity 1 each user's follow-backs equal its
    // follows, so odd users start with 4x the followers. Later (regular, src > dst) follows are
    // drawn 80% by follower count, so odd users attract about twice as many; if follow-backs were
    // left out of the attachment weights the ratio would be ~1 (seed-to-seed spread ~0.03).
    const w = new Float32Array(n);
    for (let i = 0; i < n; i++) w[i] = i % 2 ? 4 : 1;
    const flat = { opinion: new Float32Array(n), topic: new Uint8Array(n) };
    for (const s of [1, 2, 3]) {
      const el = plain(homophilousPreferential(n, s, { meanFollowing: 4, homophily: 0, preferential: 0.8, reciprocity: 1, weight: w, ...flat }));
      expectSimple(el);
      const regular = [0, 0];
      for (let k = 0; k < el.src.length; k++) if (el.src[k] > el.dst[k]) regular[el.dst[k] % 2]++;
      expect(regular[1] / regular[0], `seed ${s}`).toBeGreaterThan(1.5);
    }
  });

  it('drawn on two threads, the edges are those of one thread (users that draw undrawn ones first, users that come up short)', async () => {
    const exec = createExecutor(2);
    // Counts the threaded rounds: a user that comes up short sends everyone after it round again.
    let rounds = 0;
    const run = exec.run.bind(exec);
    exec.run = (...args) => {
      rounds++;
      return run(...args);
    };
    try {
      const c = pops[1].agents.columns;
      const opinion = c.opinion as Float32Array;
      const topic = c.topic as Uint8Array;
      const weight = c.activity as Float32Array;
      for (const [users, o, split, shorts] of [
        // Small chunks right after a short prefix: many picks land in blocks not drawn yet.
        [n, { meanFollowing: 10, homophily: 0.7, reciprocity: 0.3, opinion, topic }, { prefix: 64, grow: 4, chunk: 32 }, false],
        [n, { meanFollowing: 10, homophily: 0.5, reciprocity: 0, opinion, topic, weight }, { prefix: 16, grow: 4, chunk: 8 }, false],
        // Heavy users among the first 20 m want as many follows as there are users before them and
        // come up short: each sends everyone after it round again (29 and 7 rounds here).
        [3000, { meanFollowing: 45, homophily: 0.7, reciprocity: 0.1, opinion, topic, weight }, { prefix: 8, grow: 0, chunk: 16 }, true],
        [3000, { meanFollowing: 45, homophily: 0.7, reciprocity: 0.5, opinion, topic, weight }, { prefix: 200, grow: 0, chunk: 16 }, true],
        // The defaults (in order up to 16k users), and graphs too small to split.
        [n, { meanFollowing: 10, homophily: 0.7, reciprocity: 0.1, opinion, topic, weight }, undefined, false],
        [3, { meanFollowing: 2, homophily: 0.5, opinion, topic }, { prefix: 1, grow: 0, chunk: 1 }, false],
        [1, { meanFollowing: 2, homophily: 0.5, opinion, topic }, undefined, false],
      ] as const) {
        rounds = 0;
        const a = plain(homophilousPreferential(users, 2, o));
        const b = plain(await homophilousPreferentialOn(exec, users, 2, o, split));
        const label = `n=${users} ${JSON.stringify(split)}`;
        expect(same(a, b), label).toBe(true);
        expect(b.dst.includes(-1), label).toBe(false);
        if (shorts) expect(rounds, label).toBeGreaterThan(1);
      }
    } finally {
      await exec.close();
    }
  });

  it('rejects inputs that do not cover every user', () => {
    const c = pops[0].agents.columns;
    expect(() =>
      homophilousPreferential(n + 1, 1, { meanFollowing: 5, homophily: 0.5, opinion: c.opinion as Float32Array, topic: c.topic as Uint8Array }),
    ).toThrow(/opinion, topic/);
  });
});
