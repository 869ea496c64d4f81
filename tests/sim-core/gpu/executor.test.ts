/**
 * The webgpu backend's executor (sim-core/gpu/executor.ts): a whole run on it writes the same
 * bytes as the CPU, with the kernels that have a WGSL version really on the device; arrays move
 * between host and device when a kernel on the other side needs them. Skips with one line when no
 * adapter exists.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { randomFillSync } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compact } from '../../../sim-core/exec.ts';
import { createExecutor } from '../../../sim-core/cpuExecutor.ts';
import { kernels as K } from '../../../sim-core/kernels.ts';
import { hash } from '../../../sim-core/rng.ts';
import { buildGraph } from '../../../sim-core/csr.ts';
import { barabasiAlbert } from '../../../graph/generators.ts';
import { sharedArray } from '../../../sim-core/table.ts';
import { GpuExecutor } from '../../../sim-core/gpu/executor.ts';
import { openGpu } from '../../../sim-core/gpu/device.ts';
import { splitParts } from '../../../sim-core/gpu/wgslKernel.ts';
import { gpuKernelFor } from '../../../sim-core/gpu/gpuKernels.ts';
import { runScenario } from '../../../runner/run/runScenario.ts';
import { loadScenario } from '../../../runner/run/loadScenario.ts';
import { inspectRun } from '../../../runner/cli/inspect.ts';
import { tableFromIPC } from 'apache-arrow';
import { gpuOrSkip } from '../../gpuHelpers.ts';
import { BIN, ROOT } from '../../runner/cliHelpers.ts';

const gpu = await gpuOrSkip('the webgpu executor');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-gpu-exec-'));
afterAll(() => {
  gpu?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A BA graph of n nodes (m edges per new node) built on a one-thread CPU executor, and that executor. */
async function baGraph(n: number, m: number, seed: number) {
  const cpu = createExecutor(1);
  const e = barabasiAlbert(n, m, seed);
  return { cpu, graph: await buildGraph(cpu, n, e.src, e.dst, e.directed) };
}

function arrowFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const f of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, f.name);
      if (f.isDirectory()) walk(p);
      else if (f.name.endsWith('.arrow')) out.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

describe.skipIf(!gpu)(`webgpu executor (${gpu?.adapter})`, () => {
  // Each scenario with the kernels its step runs, all of which have a WGSL version.
  const cases = [
    { scenario: 'voter', params: { states: 3 }, column: 'vote', kernels: ['gatherNeighbor', 'copy'] },
    { scenario: 'independent-cascade', params: { p: 0.05 }, column: 'state', kernels: ['spread', 'transition', 'applyMarks'] },
    { scenario: 'sir', params: { beta: 0.05, gamma: 0.2 }, column: 'state', kernels: ['spread', 'transition', 'applyMarks'] },
    { scenario: 'sir', params: { beta: 0.08, gamma: 0.3, sis: true }, column: 'state', kernels: ['spread', 'transition', 'applyMarks'] },
    { scenario: 'linear-threshold', params: { seedCount: 3000 }, column: 'state', kernels: ['thresholdMark', 'applyMarks'] },
    { scenario: 'linear-threshold', params: { threshold: 0.25, seedCount: 3000 }, column: 'state', kernels: ['thresholdMark', 'applyMarks'] },
    // Opinion models: f32 columns through the software f32 (their metrics' sums too: treeSum, treeCentralSums).
    { scenario: 'degroot', params: { selfWeight: 0.5 }, column: 'opinion', kernels: ['segmentMean', 'copy'] },
    { scenario: 'hegselmann-krause', params: { eps: 0.2 }, column: 'opinion', kernels: ['segmentBoundedMean', 'copy'] },
    { scenario: 'hegselmann-krause', params: { eps: 0.25, includeSelf: false, strict: true }, column: 'opinion', kernels: ['segmentBoundedMean', 'copy'] },
    { scenario: 'deffuant', params: { eps: 0.3, mu: 0.3, scheme: 'synchronous' }, column: 'opinion', kernels: ['sampleNeighbor', 'boundedStep', 'copy'] },
    // Pairwise Deffuant is sequential: its kernel stays on the CPU, with the same bytes.
    { scenario: 'deffuant', params: { eps: 0.3, mu: 0.3 }, column: 'opinion', kernels: [], onCpu: ['pairwiseBounded'] },
  ];
  it.each(cases)('$scenario $params: byte-identical Arrow files on webgpu and on two CPU threads, each kernel where the case puts it', async (c) => {
    const { scenario } = await loadScenario(c.scenario);
    // No checkpoints: an automatic one comes when the wall time since the last reaches 20x its cost,
    // which on a loaded machine can fall on step 4 or 8, whose snapshot is then read back at once
    // instead of captured on the device (the captures asserted below). Resume: resume.test.ts.
    const common = { agents: 60_000, steps: 12, seed: 5, snapshotEvery: 4, checkpointEvery: 0, params: c.params };
    const label = `${c.scenario}-${Object.values(c.params).join('-')}`;
    const cpu = createExecutor(2);
    const a = await runScenario(scenario, { ...common, out: path.join(tmp, `${label}-cpu`), executor: cpu });
    await cpu.close();
    const exec = new GpuExecutor(gpu!, createExecutor(1));
    const b = await runScenario(scenario, { ...common, out: path.join(tmp, `${label}-gpu`), executor: exec });
    expect(a.manifest.backend).toBe('cpu');
    expect(b.manifest.backend).toBe('webgpu');
    expect(b.manifest.adapter).toBe(gpu!.adapter);
    const files = arrowFiles(a.dir);
    expect(files).toContain('metrics.arrow');
    expect(files.filter((f) => f.startsWith('agents'))).toHaveLength(4);
    expect(arrowFiles(b.dir)).toEqual(files);
    for (const f of files) expect(fs.readFileSync(path.join(b.dir, f)).equals(fs.readFileSync(path.join(a.dir, f))), f).toBe(true);
    // The state moved: a run where nothing happened would prove little.
    const states = (f: string) => tableFromIPC(fs.readFileSync(path.join(b.dir, f))).getChild(c.column)!.toArray() as ArrayLike<number>;
    const snaps = files.filter((f) => f.startsWith('agents'));
    const [first, last] = [states(snaps[0]), states(snaps[snaps.length - 1])];
    let moved = 0;
    for (let i = 0; i < first.length; i++) if (first[i] !== last[i]) moved++;
    expect(moved).toBeGreaterThan(600);
    // The step's kernels ran on the device, every step; none fell back to the CPU.
    for (const name of c.kernels) expect(exec.counts.gpu.get(name), name).toBe(12);
    // The manifest says where they ran.
    for (const name of c.kernels) expect(b.manifest.kernel_calls?.webgpu[name], name).toBe(12);
    for (const name of c.onCpu ?? []) expect(b.manifest.kernel_calls?.cpu[name], name).toBe(12);
    expect(a.manifest.kernel_calls).toBeUndefined();
    expect(inspectRun(b.dir)).toContain(`backend webgpu (${gpu!.adapter})`);
    // Snapshots after steps 4 and 8 were copied on the device while the next step ran.
    expect(exec.captures).toBeGreaterThanOrEqual(2);
    const counted = c.column !== 'opinion';
    if (counted) expect(exec.counts.gpu.get('countCodes')).toBeGreaterThanOrEqual(12);
    expect([...exec.counts.cpu.keys()].filter((k) => [...c.kernels, 'countCodes'].includes(k))).toEqual([]);
    if (!counted) {
      // The opinion statistics were summed on the device at every step: besides the run's last
      // sync (the snapshots are captured), less than one column's bytes came back in all.
      expect(exec.counts.gpu.get('treeSum')).toBeGreaterThanOrEqual(12);
      expect(exec.counts.gpu.get('treeCentralSums')).toBeGreaterThanOrEqual(12);
      const down = [...exec.transfers].reduce((sum, [name, t]) => sum + (name === '(sync)' ? 0 : t.down), 0);
      expect(down).toBeLessThan(common.agents * 4);
    }
  });

  // The scenarios whose steps mix GPU and CPU kernels with phases that write columns in plain
  // JavaScript: arrays must move between host and device at the right moments.
  it.each([
    { scenario: 'opinion-cascade', agents: 40_000, steps: 10, onDevice: ['spread'] },
    // activate (and its compaction), the base scores, the candidate lists, recentAuthors, recommend, act, postContent, impressions, countVotes, exposure and feedMix on the device;
    // the rest of the social step on the CPU. Interventions rewrite, in plain JavaScript, arrays the device holds (suspended
    // accounts, the behaviour table, the post columns: a novel injected story, labels) and select
    // agents by the opinions exposure wrote on the device.
    {
      scenario: 'social-feed',
      agents: 12_000,
      steps: 8,
      onDevice: ['activate', 'countMask', 'compactMask', 'baseScores', 'candidateTops', 'mergeTops', 'recentAuthors', 'recommend', 'act', 'postContent', 'writeTopics', 'recordStatics', 'packEvents', 'impressions', 'countVotes', 'exposure', 'feedMix'],
      params: {
        interventions: [
          { kind: 'inject', step: 1, count: 30, stance: 0.8, novelty: 2.5, veracity: 'false', tag: 'rumour' },
          { kind: 'label', step: 4, posts: { tag: 'rumour' }, reshare: 0.5 },
          { kind: 'suspend', step: 3, agents: { topFollowers: 200 } },
          { kind: 'setParam', step: 5, param: 'behaviour.activity', scale: 3 },
          { kind: 'suspend', step: 6, agents: { opinion: [0.3, 1], fraction: 0.2 } },
        ],
      },
    },
    // The post window retires posts after 4 hours, so the post table moves its live rows to the
    // front every few steps; the graph is rebuilt every step (new follower counts); the interventions
    // write post columns in plain JavaScript (assignment votes, removals, rank factors). The
    // phases announce those writes and only the rows written go up (platform/state.ts). The story
    // comes at step 5: its posts' topics, written on the host, come before the step's new posts,
    // whose topics the device writes (postBatch.ts).
    {
      scenario: 'social-feed',
      agents: 8_000,
      steps: 16,
      onDevice: ['activate', 'baseScores', 'candidateTops', 'mergeTops', 'recentAuthors', 'recommend', 'act', 'postContent', 'writeTopics', 'recordStatics', 'impressions', 'countVotes', 'exposure', 'feedMix'],
      params: {
        platform: { windowHours: 4, rebuildEvery: 1, startHour: 8 },
        story: { step: 5 },
        interventions: [
          { kind: 'assign', step: 1, untilStep: 9, kinds: ['original', 'quote'], groups: { up: { share: 0.3, vote: 1 }, down: { share: 0.3, vote: -1 } } },
          { kind: 'inject', step: 2, count: 25, stance: -0.7, novelty: 2, veracity: 'false', tag: 'rumour' },
          { kind: 'downrank', step: 5, posts: { tag: 'rumour' }, factor: 0.3 },
          { kind: 'remove', step: 9, posts: { stance: [0.6, 1] } },
        ],
      },
    },
    // A 6-hour window about as large as the table: apply's new posts overflow it, so the table
    // compacts in the middle of apply (8 times), after the step's reshares and reports raised
    // counters at rows the compaction then moves (state.ts takes those posts by id), and before
    // writeTopics copies parents' topics on the device (postBatch.ts repeats the move first).
    { scenario: 'social-feed', agents: 20_000, steps: 24, onDevice: ['recommend', 'act', 'postContent', 'writeTopics'], params: { platform: { windowHours: 6, startHour: 8 } } },
    // A small population: act's and postContent's packs both start with the interest column, and
    // postContent's event arrays, large beside 1,500 agents' columns, reach into the offsets where
    // act's pack keeps later members (the two must not share one buffer).
    { scenario: 'social-feed', agents: 1_500, steps: 4, onDevice: ['recommend', 'act', 'postContent'], params: { platform: { startHour: 10 } } },
    // Many follows and no rebuild: act picks whom to follow by follower counts that apply raises
    // during the run, at scattered users (announced as such, state.ts).
    { scenario: 'social-feed', agents: 3_000, steps: 10, onDevice: ['act'], params: { platform: { startHour: 10, behaviour: { follow: 40 } } } },
  ])('$scenario $agents agents: byte-identical Arrow files on webgpu and on two CPU threads', async (c) => {
    const { scenario } = await loadScenario(c.scenario);
    const common = { agents: c.agents, steps: c.steps, seed: 3, snapshotEvery: 3, params: c.params ?? {} };
    const cpu = createExecutor(2);
    const a = await runScenario(scenario, { ...common, out: path.join(tmp, `${c.scenario}-${c.agents}-cpu`), executor: cpu });
    await cpu.close();
    const exec = new GpuExecutor(gpu!, createExecutor(1));
    const b = await runScenario(scenario, { ...common, out: path.join(tmp, `${c.scenario}-${c.agents}-gpu`), executor: exec });
    const files = arrowFiles(a.dir);
    expect(files.length).toBeGreaterThan(4);
    expect(arrowFiles(b.dir)).toEqual(files);
    for (const f of files) expect(fs.readFileSync(path.join(b.dir, f)).equals(fs.readFileSync(path.join(a.dir, f))), f).toBe(true);
    for (const name of c.onDevice) expect(b.manifest.kernel_calls?.webgpu[name], name).toBeGreaterThan(0);
    expect(Object.keys(b.manifest.kernel_calls?.cpu ?? {}).length).toBeGreaterThan(0);
  });

  it.each([
    { type: 'i32' as const, onDevice: true },
    { type: 'f64' as const, onDevice: true },
    // Elements of 2 bytes: no pass, the new array goes up whole.
    { type: 'u16' as const, onDevice: false },
  ])('hostRearranged ($type): an array made from pieces of another is copied together on the device, the host sending only its new elements', async ({ type, onDevice }) => {
    const n = 30_001;
    const inner = createExecutor(1);
    const exec = new GpuExecutor(gpu!, inner);
    try {
      const a = sharedArray(type, n);
      for (let i = 0; i < n; i++) a[i] = hash(51, i) & 0x7fff;
      await exec.run(K.copy, { out: sharedArray(type, n), src: a }, n);
      // The new array: a's elements 500..20500 (past one piece of the pass), 0..3 and
      // 25000..30000, between them one element of the host's own (scattered), after them a range.
      const m = n + 1_000;
      const dst = sharedArray(type, m);
      const pieces = [0, 500, 20_000, 20_001, 0, 3, 20_005, 25_000, 5_000];
      for (let k = 0; k < pieces.length; k += 3) dst.set(a.subarray(pieces[k + 1], pieces[k + 1] + pieces[k + 2]), pieces[k]);
      const at = Int32Array.from([20_000, 20_004]);
      for (const i of at) dst[i] = 3;
      const tail = 25_005;
      for (let i = tail; i < m; i++) dst[i] = 4;
      // The old array is not used again (a fold in place overwrites it): the device's copy counts.
      a.fill(9);
      exec.hostRearranged(dst, a, pieces);
      exec.hostWroteAt(dst, at, at.length);
      exec.hostWrote(dst, tail, m);
      const up = () => [...exec.transfers.values()].reduce((x, t) => x + t.up, 0);
      const before = up();
      const out = sharedArray(type, m);
      await exec.run(K.copy, { out, src: dst }, m);
      await exec.sync([out]);
      expect(Array.from(out)).toEqual(Array.from(dst));
      // Besides out: the host's range, its two scattered words (f64: four) with their indices and
      // n, and the pieces (at most 16 triples of words).
      const sent = up() - before - out.byteLength;
      if (onDevice) expect(sent).toBeLessThanOrEqual((m - tail) * dst.BYTES_PER_ELEMENT + 4 * (1 + 2 * 4) + 12 * 16);
      else expect(sent).toBeGreaterThanOrEqual(dst.byteLength);
      expect(() => exec.hostRearranged(sharedArray(type, 10), dst, [0, 0, 11])).toThrow(/piece 0 \(0, 0, 11\) lies outside/);
    } finally {
      await inner.close();
    }
  });

  it('arrays follow the kernels: read back before a CPU kernel, uploaded again after it', async () => {
    const n = 50_001;
    const src = sharedArray('u8', n);
    const index = sharedArray('i32', n);
    for (let i = 0; i < n; i++) {
      src[i] = hash(3, i) % 200;
      index[i] = i % 13 === 0 ? -1 : hash(4, i) % n;
    }
    // gather (GPU), fill over half the rows (CPU: it must see the gathered upper half), copy (GPU:
    // it must see the filled lower half), gather again from the copy.
    const steps = async (e: { run: GpuExecutor['run']; sync?: () => Promise<void> }) => {
      const a = sharedArray('u8', n);
      const b = sharedArray('u8', n);
      const c = sharedArray('u8', n);
      await e.run(K.gather, { out: a, src, index }, n);
      await e.run(K.fill, { out: a, value: 7 }, n >> 1);
      await e.run(K.copy, { out: b, src: a }, n);
      await e.run(K.gather, { out: c, src: b, index }, n);
      await e.sync?.();
      return [a, b, c];
    };
    const cpu = createExecutor(1);
    const want = await steps(cpu);
    const exec = new GpuExecutor(gpu!, cpu);
    const got = await steps(exec);
    for (let i = 0; i < 3; i++) expect(Buffer.from(got[i]).equals(Buffer.from(want[i])), `array ${i}`).toBe(true);
    expect(exec.counts.gpu.get('gather')).toBe(2);
    expect(exec.counts.gpu.get('copy')).toBe(1);
    expect(exec.counts.cpu.get('fill')).toBe(1);
    // Half filled, half gathered: the CPU kernel saw the device's rows.
    expect(want[0][n - 1]).toBe(src[index[n - 1] < 0 ? n - 1 : index[n - 1]]);
  });

  /** n random non-zero bytes copied into `out` on the device, and the executor that did it. */
  async function copiedOnDevice(n: number, seed: number) {
    const src = sharedArray('u8', n);
    for (let i = 0; i < n; i++) src[i] = 1 + (hash(seed, i) % 250);
    const out = sharedArray('u8', n);
    const exec = new GpuExecutor(gpu!, createExecutor(1));
    await exec.run(K.copy, { out, src }, n);
    return { src, out, exec };
  }

  it('an error the device reports outside an error scope fails the next call, with its message', async () => {
    // A device of its own: the failure stays with it.
    const own = await openGpu();
    if (!('device' in own)) throw new Error(own.unavailable);
    const inner = createExecutor(1);
    const exec = new GpuExecutor(own, inner);
    try {
      const src = sharedArray('u8', 1000).fill(3);
      const out = sharedArray('u8', 1000);
      await exec.run(K.copy, { out, src }, 1000);
      // An invalid command (a copy within one buffer), as a wrong residency move would make: Dawn
      // drops it and reports it only to the device's uncapturederror event.
      const b = own.device.createBuffer({ size: 64, usage: GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
      const enc = own.device.createCommandEncoder();
      enc.copyBufferToBuffer(b, 0, b, 32, 16);
      own.device.queue.submit([enc.finish()]);
      await expect(exec.sync([out])).rejects.toThrow(/the GPU reported an error, so results from here on would be wrong: Source and destination are the same buffer/);
      await expect(exec.run(K.copy, { out, src }, 1000)).rejects.toThrow(/the GPU reported an error/);
    } finally {
      await inner.close();
      own.close();
    }
  });

  it.each([
    { type: 'i32' as const, shift: 5000 },
    { type: 'u8' as const, shift: 5000 },
    // A u8 shift off whole words: the moved bytes go up from the host instead.
    { type: 'u8' as const, shift: 5001 },
  ])('hostMoved and hostCopied ($type, shift $shift): a compaction and a growth are repeated on the device, stale ranges and scattered words with them', async ({ type, shift }) => {
    const n = 20_003;
    const inner = createExecutor(1);
    const exec = new GpuExecutor(gpu!, inner);
    try {
      const a = sharedArray(type, n);
      const b = sharedArray(type, n);
      const index = sharedArray('i32', n);
      for (let i = 0; i < n; i++) {
        a[i] = hash(41, i) & 0x7f;
        b[i] = 0x80 | (hash(42, i) & 0x7f);
        index[i] = hash(43, i) % n;
      }
      const first = sharedArray(type, n);
      await exec.run(K.copy, { out: first, src: a }, n);
      await exec.sync([first]);
      // Rows written on the device (i32: 0..12000, the host's copy stale there; u8: all, then read
      // back), rows 15000..16000 on the host (announced), and for u8 three scattered rows (announced).
      const truth = Array.from(a);
      const rows = 12_000;
      if (type === 'i32') await exec.run(K.gather, { src: b, index, out: a }, rows);
      else await exec.run(K.gather, { src: b, index, out: a }, n);
      const gathered = type === 'i32' ? rows : n;
      for (let i = 0; i < gathered; i++) truth[i] = b[index[i]];
      if (type === 'u8') await exec.sync([a]);
      for (let i = 15_000; i < 16_000; i++) a[i] = truth[i] = 7;
      exec.hostWrote(a, 15_000, 16_000);
      if (type === 'u8') {
        // Scattered words need a valid host copy: here the u8 array's (synced above).
        const at = Int32Array.from([13_000, 13_005, n - 1]);
        for (const i of at) a[i] = truth[i] = 9;
        exec.hostWroteAt(a, at, at.length);
      }
      // The compaction: rows shift.. move to the front; the rest is unused.
      const live = n - shift;
      a.copyWithin(0, shift, n);
      truth.copyWithin(0, shift, n);
      exec.hostMoved(a, shift, 0, live);
      const c = sharedArray(type, n);
      const up = () => [...exec.transfers.values()].reduce((x, t) => x + t.up, 0);
      const before = up();
      await exec.run(K.copy, { out: c, src: a }, n);
      await exec.sync([c]);
      expect(Array.from(c.subarray(0, live))).toEqual(truth.slice(0, live));
      // The host's stale rows moved too: only the device's rows that are still live come back.
      const down = () => exec.transfers.get('(sync)')?.down ?? 0;
      const down0 = down();
      await exec.sync([a]);
      expect(Array.from(a.subarray(0, live))).toEqual(truth.slice(0, live));
      if (type === 'i32') expect(down() - down0).toBe((rows - shift) * 4);
      // What went up besides c (a new output goes up before its kernel): the host's rows and words
      // (for u8 as one span with the last, partial word of the move), not the moved rows (off
      // whole words: those too).
      const sent = up() - before - c.byteLength;
      if (shift % 4 !== 0) expect(sent).toBeGreaterThanOrEqual(live);
      else if (type === 'i32') expect(sent).toBeLessThan(1_100 * 4);
      else expect(sent).toBeLessThan(live / 2);
      // The growth: a larger array with the live rows, made from the device's copy (rows the host
      // wrote since go up with it).
      for (let i = 100; i < 200; i++) a[i] = truth[i] = 5;
      exec.hostWrote(a, 100, 200);
      if (type === 'i32') {
        // And rows the device wrote since (the host's copy stale there): they stay on the device.
        await exec.run(K.gather, { src: b, index, out: a }, 100);
        for (let i = 0; i < 100; i++) truth[i] = b[index[i]];
      }
      const d = sharedArray(type, 2 * n);
      d.set(a.subarray(0, live));
      exec.hostCopied(d, a, live);
      const before2 = up();
      const e = sharedArray(type, 2 * n);
      await exec.run(K.copy, { out: e, src: d }, 2 * n);
      await exec.sync([e]);
      expect(Array.from(e.subarray(0, live))).toEqual(truth.slice(0, live));
      // Past the live rows' last word both copies are zeros (that word's other bytes are unused).
      expect(e.subarray(Math.ceil(live / (4 / a.BYTES_PER_ELEMENT)) * (4 / a.BYTES_PER_ELEMENT)).every((x) => x === 0)).toBe(true);
      // Of d only those rows went up.
      expect(up() - before2 - e.byteLength).toBeLessThanOrEqual(100 * a.BYTES_PER_ELEMENT + 4);
      // A full sync reads back d's rows the device holds, not a's: a is superseded.
      const down1 = down();
      await exec.sync();
      expect(down() - down1).toBe(type === 'i32' ? 400 : 0);
      expect(Array.from(d.subarray(0, live))).toEqual(truth.slice(0, live));
    } finally {
      await inner.close();
    }
  });

  it('hostWrote(array, from, to): the next kernel uploads those elements (whole words) and nothing else', async () => {
    const n = 10_001;
    const { src, out, exec } = await copiedOnDevice(n, 22);
    // Both arrays go up whole the first time (out too: a kernel's output is uploaded before it runs).
    expect(exec.transfers.get('copy')?.up).toBe(2 * n);
    const before = Uint8Array.from(src);
    // Elements 101..202 announced (bytes 100..203 go up: the words they touch); byte 5000 written
    // unannounced, so its device copy keeps the old value.
    for (let i = 101; i < 203; i++) src[i] = 255 - src[i];
    src[5000] = 255 - src[5000];
    exec.hostWrote(src, 101, 203);
    await exec.run(K.copy, { out, src }, n);
    expect(exec.transfers.get('copy')?.up).toBe(2 * n + 104);
    await exec.sync();
    const want = Uint8Array.from(src);
    want[5000] = before[5000];
    expect(Buffer.from(out).equals(Buffer.from(want))).toBe(true);
    // The last partial word: padded beyond the array only.
    src[n - 1] = 3;
    exec.hostWrote(src, n - 1, n);
    await exec.run(K.copy, { out, src }, n);
    await exec.sync();
    expect(out[n - 1]).toBe(3);
    expect(out[n - 2]).toBe(src[n - 2]);
  });

  it('uploads through the staging ring: an array of several staging parts and a last partial word arrives whole, twice over (the ring reused)', async () => {
    const n = 70 * 2 ** 20 + 3;
    const src = sharedArray('u8', n);
    randomFillSync(src);
    const out = sharedArray('u8', n);
    const inner = createExecutor(1);
    const exec = new GpuExecutor(gpu!, inner);
    for (const round of [0, 1]) {
      if (round === 1) {
        randomFillSync(src);
        exec.hostWrote(src);
      }
      await exec.run(K.copy, { out, src }, n);
      await exec.sync();
      expect(Buffer.from(out.buffer).equals(Buffer.from(src.buffer)), `round ${round}`).toBe(true);
    }
    await inner.close();
  });

  it('hostWroteAt(array, indices, n): the next kernel gets those elements in place (index and word each), others stay; a dense list goes up as its span', async () => {
    const n = 40_003;
    const { src, out, exec } = await copiedOnDevice(n, 24);
    const before = Uint8Array.from(src);
    // Three scattered elements announced (two share a word), the last partial word among them; one
    // written unannounced keeps its old device value.
    const at = Int32Array.from([7, 6, 30_001, n - 1]);
    for (const i of at) src[i] = 255 - src[i];
    src[20_000] = 255 - src[20_000];
    exec.hostWroteAt(src, at, at.length);
    await exec.run(K.copy, { out, src }, n);
    // n, then an index and a value per element: 4 + 8 x 4 bytes.
    expect(exec.transfers.get('copy')?.up).toBe(2 * n + 36);
    await exec.sync();
    const want = Uint8Array.from(src);
    want[20_000] = before[20_000];
    expect(Buffer.from(out).equals(Buffer.from(want))).toBe(true);
    // Every element of a short span: the span's words go up as a range (cheaper than index + value each).
    const dense = Int32Array.from({ length: 400 }, (_, k) => 1_000 + k);
    for (const i of dense) src[i] = 1 + (src[i] % 200);
    exec.hostWroteAt(src, dense, dense.length);
    await exec.run(K.copy, { out, src }, n);
    expect(exec.transfers.get('copy')?.up).toBe(2 * n + 36 + 400);
    await exec.sync();
    expect(Buffer.from(out.subarray(1_000, 1_400)).equals(Buffer.from(src.subarray(1_000, 1_400)))).toBe(true);
  });

  it('sync with a length reads back that prefix only; the rest comes back when a CPU kernel needs it', async () => {
    const n = 10_003;
    const { src, out, exec } = await copiedOnDevice(n, 23);
    await exec.sync([{ array: out, length: 1001 }]);
    // 1001 elements: the words they touch (1004 bytes) come back, nothing after.
    expect(exec.transfers.get('(sync)')?.down).toBe(1004);
    expect(Buffer.from(out.subarray(0, 1004)).equals(Buffer.from(src.subarray(0, 1004)))).toBe(true);
    expect(out.subarray(1004).every((x) => x === 0)).toBe(true);
    // A CPU kernel reading out (moments) gets the rest first.
    const [rows] = await exec.reduce(K.moments, { x: out }, n);
    expect(exec.transfers.get('moments')?.down).toBe(n - 1004);
    expect(Buffer.from(out).equals(Buffer.from(src))).toBe(true);
    expect(rows).toBe(n);
  });

  it('read-backs keep their mappable buffers: an array read back again and again uses one, and its bytes are each time the new ones', async () => {
    const n = 1_000_003;
    const { src, out, exec } = await copiedOnDevice(n, 26);
    const held = () => (exec as unknown as { res: { reads: { bytes: number } } }).res.reads.bytes;
    for (let t = 0; t < 3; t++) {
      src.fill(t + 7, 0, 5_000);
      exec.hostWrote(src, 0, 5_000);
      await exec.run(K.copy, { out, src }, n);
      await exec.sync([out]);
      expect(Buffer.from(out).equals(Buffer.from(src)), `round ${t}`).toBe(true);
      expect(out[0]).toBe(t + 7);
    }
    // One buffer of the size class of out's 1,000,004 bytes.
    expect(held()).toBe(2 ** 20);
    // A capture takes one too and gives it back.
    await exec.run(K.copy, { out, src }, n);
    const [copy] = await exec.capture([out]);
    expect(Buffer.from(copy.buffer, copy.byteOffset, copy.byteLength).equals(Buffer.from(src))).toBe(true);
    expect(held()).toBe(2 ** 20);
  });

  it('compact on a u8 mask runs both passes on the device: the rows of the CPU, in order, and only the chunk counts read back', async () => {
    // Chunks of 65,536 rows: three whole, a partial last one, a slice boundary inside each.
    const n = 200_003;
    const mask = sharedArray('u8', n);
    for (let i = 0; i < n; i++) mask[i] = hash(24, i) % 7 === 0 ? 1 + (hash(25, i) % 3) : 0;
    mask[n - 1] = 2;
    for (let i = 70_000; i < 70_500; i++) mask[i] = 1;
    const cpu = createExecutor(2);
    const want = await compact(cpu, mask, n);
    const countArgs = { mask, chunkRows: 65_536 };
    const cpuParts = await cpu.run(K.countMask, countArgs, n, { chunkRows: 65_536 });
    await cpu.close();
    const exec = new GpuExecutor(gpu!, createExecutor(1));
    await exec.run(K.copy, { out: mask, src: mask.slice() as never }, n);
    const got = await compact(exec, mask, n);
    expect(exec.counts.gpu.get('countMask')).toBe(1);
    expect(exec.counts.gpu.get('compactMask')).toBe(1);
    expect(exec.transfers.get('countMask')?.down).toBe(4 * 4);
    // The counts in the CPU's shape, one partial per chunk, so reduce sums them the same way.
    expect(await exec.run(K.countMask, countArgs, n)).toEqual(cpuParts);
    expect(await exec.reduce(K.countMask, countArgs, n)).toEqual([want.length]);
    await exec.sync([got]);
    expect(got.length).toBe(want.length);
    expect(Buffer.from(got.buffer).equals(Buffer.from(want.buffer))).toBe(true);
    expect(want.length).toBeGreaterThan(n / 8);
    // An empty mask: no rows.
    const none = sharedArray('u8', 1_000);
    expect((await compact(exec, none, 1_000)).length).toBe(0);
  });

  it('a sync of several arrays, and a CPU kernel reading several, read back in one round trip each, a prefix where asked', async () => {
    const exec = new GpuExecutor(gpu!, createExecutor(1));
    // Three arrays of different sizes and types, written on the device (copies of host arrays).
    const src = [sharedArray('i32', 100_003), sharedArray('u8', 5_001), sharedArray('f32', 70_000)];
    src.forEach((a, k) => a.forEach((_, i) => (a[i] = hash(26, k, i) % 251)));
    const out = src.map((a) => a.slice().fill(0));
    const copies = async () => {
      for (let k = 0; k < 3; k++) await exec.run(K.copy, { out: out[k], src: src[k] } as never, src[k].length);
    };
    await copies();
    expect(exec.counts.gpu.get('copy')).toBe(3);
    const before = exec.readRounds;
    await exec.sync([out[0], { array: out[2], length: 1_000 }, out[1], out[0]]);
    expect(exec.readRounds).toBe(before + 1);
    expect(Buffer.from(out[0].buffer).equals(Buffer.from(src[0].buffer))).toBe(true);
    expect(Buffer.from(out[1].buffer).equals(Buffer.from(src[1].buffer))).toBe(true);
    expect(Array.from(out[2].subarray(0, 1_000))).toEqual(Array.from(src[2].subarray(0, 1_000)));
    expect(out[2][1_000]).toBe(0);
    // Nothing stale: no round trip.
    await exec.sync([out[0], out[1]]);
    expect(exec.readRounds).toBe(before + 1);
    // A CPU kernel (moments) over the rest of out[2], and a sync of everything, one round trip each.
    await exec.run(K.moments, { x: out[2] }, out[2].length);
    expect(exec.readRounds).toBe(before + 2);
    expect(Buffer.from(out[2].buffer).equals(Buffer.from(src[2].buffer))).toBe(true);
    await copies();
    await exec.sync();
    expect(exec.readRounds).toBe(before + 3);
    expect(out.every((a, k) => Buffer.from(a.buffer).equals(Buffer.from(src[k].buffer)))).toBe(true);
  });

  it('arrays past one 64 MiB upload go up in parts (an odd length, from a SharedArrayBuffer)', async () => {
    const n = 70_000_003;
    const src = sharedArray('u8', n);
    for (let i = 0; i < n; i += 997) src[i] = 1 + (hash(21, i) % 250);
    src[n - 1] = 7;
    const out = sharedArray('u8', n);
    const exec = new GpuExecutor(gpu!, createExecutor(1));
    await exec.run(K.copy, { out, src }, n);
    expect(exec.counts.gpu.get('copy')).toBe(1);
    await exec.sync();
    expect(Buffer.from(out).equals(Buffer.from(src))).toBe(true);
  });

  it('capture copies arrays as they stand, while later kernels change them', async () => {
    const n = 40_003;
    const src = sharedArray('u8', n);
    const index = sharedArray('i32', n);
    for (let i = 0; i < n; i++) {
      src[i] = hash(7, i) % 250;
      index[i] = hash(8, i) % n;
    }
    const cpu = createExecutor(1);
    const exec = new GpuExecutor(gpu!, cpu);
    const a = sharedArray('u8', n);
    const host = sharedArray('i32', n).fill(5);
    await exec.run(K.gather, { out: a, src, index }, n);
    const want = Uint8Array.from(index, (j) => src[j]);
    // Captured, then overwritten on the device and (the host array) on the CPU before the copies are awaited.
    const captured = exec.capture([a, host]);
    await exec.run(K.copy, { out: a, src }, n);
    await exec.run(K.fill, { out: host, value: 9 }, n);
    const [ca, ch] = await captured;
    expect(Buffer.from(ca).equals(Buffer.from(want))).toBe(true);
    expect(ca).toBeInstanceOf(Uint8Array);
    expect([...new Set(ch)]).toEqual([5]);
    await exec.sync();
    expect(Buffer.from(a).equals(Buffer.from(src))).toBe(true);
  });

  it('queueReduce: the sums are those of the array when it was queued, though later kernels change it before they are read', async () => {
    const n = 30_001;
    const codes = sharedArray('u8', n);
    for (let i = 0; i < n; i++) codes[i] = hash(9, i) % 5;
    const want = [0, 1, 2, 3, 4].map((c) => codes.filter((x) => x === c).length);
    const exec = new GpuExecutor(gpu!, createExecutor(1));
    const zeros = sharedArray('u8', n);
    await exec.run(K.copy, { out: codes, src: codes.slice() }, n); // the device copy is the valid one
    const queued = await exec.queueReduce(K.countCodes, { codes, k: 5 }, n);
    let read = false;
    const sums = queued.sums.then((x) => ((read = true), x));
    // Queued behind the count: it overwrites the codes before the sums can have come back.
    await exec.run(K.copy, { out: codes, src: zeros }, n);
    expect(read).toBe(false);
    expect(await sums).toEqual(want);
    expect(await exec.reduce(K.countCodes, { codes, k: 5 }, n)).toEqual([n, 0, 0, 0, 0]);
    expect(exec.counts.gpu.get('countCodes')).toBe(2);
  });

  it('socsim experiment --backend webgpu runs every run on the GPU backend', () => {
    const out = path.join(tmp, 'exp');
    const r = spawnSync(process.execPath, [BIN, 'experiment', 'experiments/sir-beta.ts', '--agents', '1000', '--seeds', '1', '--steps', '3', '--backend', 'webgpu', '--out', out, '--quiet'], { cwd: ROOT, encoding: 'utf8', timeout: 600_000 });
    expect(r.status, r.stderr).toBe(0);
    const runs = fs.readdirSync(path.join(out, 'runs'));
    expect(runs.length).toBe(3);
    for (const id of runs) expect(JSON.parse(fs.readFileSync(path.join(out, 'runs', id, 'manifest.json'), 'utf8')).backend, id).toBe('webgpu');
  });

  it('socsim bench --backend webgpu: the social step, the bytes each kernel moved and each GPU kernel timed', () => {
    const args = [BIN, 'bench', '--backend', 'webgpu', '--agents', '3000', '--runs', '1', '--json', '--only', 'social-step-3k-webgpu,social-kernel'];
    const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout: 600_000 });
    expect(r.status, r.stderr).toBe(0);
    const byName = new Map((JSON.parse(r.stdout).results as Array<{ name: string; median: number; runs: number }>).map((x) => [x.name, x]));
    expect(byName.get('social-step-3k-webgpu')?.runs).toBe(24);
    // Agents over each step's seconds.
    const perStep = byName.get('agent-steps-per-s-social-3k-webgpu');
    expect(perStep?.runs).toBe(24);
    expect(perStep!.median).toBeGreaterThan(3000);
    // The feed kernel's records and the act kernel's post rows go up; apply reads its users' rows back.
    expect(byName.get('social-gpu-up-recommend-3k-webgpu')?.median).toBeGreaterThan(0);
    expect(byName.get('social-gpu-up-act-3k-webgpu')?.median).toBeGreaterThan(0);
    expect(byName.get('social-gpu-down-(sync)-3k-webgpu')?.median).toBeGreaterThan(0);
    for (const k of ['activate', 'recommend', 'act', 'postContent', 'impressions', 'exposure']) {
      const x = byName.get(`social-kernel-${k}-3k-webgpu`);
      expect(x?.runs, k).toBe(6);
      expect(x?.median, k).toBeGreaterThan(0);
    }
  });

  it('spread, transition and applyMarks equal the CPU kernels on random u8 states, p from 0 to 1', async () => {
    const n = 40_003;
    const { cpu, graph } = await baGraph(n, 4, 9);
    const F = graph.followers;
    const random = (seed: number, k: number) => {
      const x = sharedArray('u8', n);
      for (let i = 0; i < n; i++) x[i] = hash(seed, i) % k;
      return x;
    };
    for (const p of [0, 0.37, 1]) {
      const sequence = async (ex: { run: GpuExecutor['run']; reduce: GpuExecutor['reduce']; sync?: () => Promise<void> }) => {
        const state = random(21, 4);
        // Marks on rows in every state, so applyMarks's `when` test matters.
        const next = random(22, 3);
        const spread = await ex.reduce(K.spread, { offsets: F.offsets, targets: F.targets, state, next, from: 2, susceptible: 3, mark: 2, p, key: 77 }, n);
        const moved = await ex.reduce(K.transition, { state, from: 1, to: 3, p, key: 2 ** 40 + 5 }, n);
        const changed = await ex.reduce(K.applyMarks, { state, next, when: 3 }, n);
        await ex.sync?.();
        return { state, next, counts: [...spread, ...moved, ...changed] };
      };
      const want = await sequence(cpu);
      const exec = new GpuExecutor(gpu!, cpu);
      const got = await sequence(exec);
      expect(got.counts, `p ${p}`).toEqual(want.counts);
      expect(Buffer.from(got.state).equals(Buffer.from(want.state)), `state, p ${p}`).toBe(true);
      expect(Buffer.from(got.next).equals(Buffer.from(want.next)), `next, p ${p}`).toBe(true);
      expect(exec.counts.cpu.size, `p ${p}`).toBe(0);
      if (p === 0.37) expect(want.counts[1]).toBeGreaterThan(1000);
    }
  });

  it('thresholdMark equals the CPU at exact ties, one f32 step either side of them, and at 0, 1, subnormal, NaN and infinite thresholds', async () => {
    const n = 30_011;
    const { cpu, graph } = await baGraph(n, 3, 12);
    const G = graph.following;
    const state = sharedArray('u8', n);
    for (let i = 0; i < n; i++) state[i] = hash(31, i) % 3;
    const threshold = sharedArray('f32', n);
    const special = [0, -0, 1, 1.5, 1e-40, NaN, Infinity, -0.25, 2 ** -30, 0.2, 1 / 3];
    const f32 = new Float32Array(1);
    const bits = new Uint32Array(f32.buffer);
    for (let i = 0; i < n; i++) {
      const deg = G.offsets[i + 1] - G.offsets[i];
      const h = hash(32, i);
      if (h % 5 === 0) threshold[i] = special[h % special.length];
      else {
        // The share of some count of neighbours, as f32, then nudged by -1, 0 or +1 in its last bit.
        f32[0] = (h % (deg + 1)) / Math.max(1, deg);
        if (f32[0] > 0) bits[0] += (h >>> 8) % 3 - 1;
        threshold[i] = f32[0];
      }
    }
    const sequence = async (ex: { reduce: GpuExecutor['reduce']; sync?: () => Promise<void> }) => {
      const next = sharedArray('u8', n);
      for (let i = 0; i < n; i += 7) next[i] = 2;
      const [marked] = await ex.reduce(K.thresholdMark, { offsets: G.offsets, targets: G.targets, state, threshold, next, from: 0, value: 1, mark: 1 }, n);
      await ex.sync?.();
      return { next, marked };
    };
    const want = await sequence(cpu);
    const exec = new GpuExecutor(gpu!, cpu);
    const got = await sequence(exec);
    expect(exec.counts.gpu.get('thresholdMark')).toBe(1);
    expect(got.marked).toBe(want.marked);
    expect(Buffer.from(got.next).equals(Buffer.from(want.next))).toBe(true);
    expect(want.marked).toBeGreaterThan(1000);
  });

  it('opinion kernels equal the CPU bit for bit at exact ties with eps, zero self-weight and isolated rows', async () => {
    // Opinions on a grid of eighths (with signed zeros) make many differences equal eps exactly;
    // a third of the rows follow nobody.
    const n = 30_000;
    const cpu = createExecutor(1);
    const e = barabasiAlbert(n, 3, 9);
    const keep = e.src.map((v, i) => (hash(60, v) % 3 === 0 ? -1 : i)).filter((i) => i >= 0);
    const graph = await buildGraph(cpu, n, Int32Array.from(keep, (i) => e.src[i]), Int32Array.from(keep, (i) => e.dst[i]), true);
    const x = sharedArray('f32', n);
    for (let i = 0; i < n; i++) x[i] = i % 97 === 0 ? -0 : ((hash(61, i) % 17) - 8) / 8;
    const G = graph.following;
    type Ex = Pick<GpuExecutor, 'run'> & { sync?: () => Promise<void> };
    // Each call writes a fresh output array and returns it once it is on the host.
    const out = async (ex: Ex, run: (o: Float32Array) => Promise<unknown>) => {
      const o = sharedArray('f32', n);
      await run(o);
      await ex.sync?.();
      return o;
    };
    const calls = (ex: Ex) => [
      ...[0, 0.5, 1, 3].map((selfWeight) => () => out(ex, (o) => ex.run(K.segmentMean, { offsets: G.offsets, targets: G.targets, x, out: o, selfWeight }, n))),
      ...[0, 0.25, 0.375, 2].flatMap((eps) =>
        [0, 1].flatMap((self) => [0, 1].map((strict) => () => out(ex, (o) => ex.run(K.segmentBoundedMean, { offsets: G.offsets, targets: G.targets, x, out: o, eps, self, strict }, n)))),
      ),
      ...[0.25, 0.5].map((eps) => () =>
        out(ex, async (o) => {
          const partner = sharedArray('i32', n);
          await ex.run(K.sampleNeighbor, { offsets: G.offsets, targets: G.targets, out: partner, key: 62 }, n);
          await ex.run(K.boundedStep, { x, partner, out: o, eps, mu: 0.3 }, n);
        }),
      ),
    ];
    const exec = new GpuExecutor(gpu!, cpu);
    const [want, have] = [calls(cpu), calls(exec)];
    for (let c = 0; c < want.length; c++) {
      const [a, b] = [await want[c](), await have[c]()];
      expect(Buffer.from(b.buffer).equals(Buffer.from(a.buffer)), `call ${c}`).toBe(true);
    }
    expect(exec.counts.cpu.size).toBe(0);
    let ties = 0;
    for (let i = 0; i < n; i++) for (let j = G.offsets[i]; j < G.offsets[i + 1]; j++) if (Math.abs(x[G.targets[j]] - x[i]) === 0.25) ties++;
    expect(ties).toBeGreaterThan(1000);
  });

  it('graphs past the storage binding limit: targets bound as ranges of one buffer give the same bytes', async () => {
    // A binding limit of 16 KiB (4,096 targets) forces a 16,000-arc graph into 4 ranges, one of 8 KiB into 8.
    // 2,000 rows keep every other array under 8 KiB.
    const n = 2_000;
    const { cpu, graph } = await baGraph(n, 4, 5);
    expect(graph.following.targets.byteLength).toBeGreaterThan(3 * 16384);
    expect(graph.following.targets.byteLength).toBeLessThanOrEqual(4 * 16384);
    expect(graph.following.targets.byteLength).toBeGreaterThan(7 * 8192);
    const state = sharedArray('u8', n);
    for (let i = 0; i < n; i++) state[i] = hash(41, i) % 3;
    const threshold = sharedArray('f32', n);
    for (let i = 0; i < n; i++) threshold[i] = (hash(42, i) % 5) / 5;
    const sequence = async (ex: { run: GpuExecutor['run']; reduce: GpuExecutor['reduce']; sync?: () => Promise<void> }) => {
      const G = graph.following;
      const partner = sharedArray('i32', n);
      const a = sharedArray('u8', n);
      const b = sharedArray('u8', n);
      await ex.run(K.sampleNeighbor, { offsets: G.offsets, targets: G.targets, out: partner, key: 3 }, n);
      const spread = await ex.reduce(K.spread, { offsets: G.offsets, targets: G.targets, state, next: a, from: 1, susceptible: 0, mark: 1, p: 0.5, key: 4 }, n);
      const marked = await ex.reduce(K.thresholdMark, { offsets: G.offsets, targets: G.targets, state, threshold, next: b, from: 0, value: 1, mark: 1 }, n);
      await ex.sync?.();
      return { arrays: [partner, a, b], counts: [...spread, ...marked] };
    };
    const want = await sequence(cpu);
    // 4 ranges of 16 KiB; then 8 of 8 KiB, where the adapter allows 8 (lavapipe does).
    const parts = splitParts(gpu!.limits);
    for (const limit of parts >= 8 ? [16384, 8192] : [16384]) {
      const exec = new GpuExecutor(gpu!, cpu, { maxBindingBytes: limit });
      const got = await sequence(exec);
      expect(exec.counts.cpu.size, `${limit}`).toBe(0);
      expect(got.counts).toEqual(want.counts);
      for (let i = 0; i < 3; i++) expect(Buffer.from(got.arrays[i].buffer).equals(Buffer.from(want.arrays[i].buffer)), `array ${i}, ${limit}`).toBe(true);
    }
    // Targets larger than the adapter's largest buffer stay on the CPU, however they would split.
    const args = { offsets: graph.following.offsets, targets: graph.following.targets, out: sharedArray('i32', n), key: 3 };
    const smallBuffers = { ...gpu!, limits: { ...gpu!.limits, maxBufferSize: graph.following.targets.byteLength - 4 } };
    expect(gpuKernelFor(K.sampleNeighbor, args, n, gpu!, 16384)).toBeDefined();
    expect(gpuKernelFor(K.sampleNeighbor, args, n, smallBuffers, 16384)).toBeUndefined();
    // Past the adapter's number of ranges the call stays on the CPU.
    expect(graph.following.targets.byteLength).toBeGreaterThan(parts * 4096);
    const tight = new GpuExecutor(gpu!, cpu, { maxBindingBytes: 4096 });
    await tight.run(K.sampleNeighbor, { offsets: graph.following.offsets, targets: graph.following.targets, out: sharedArray('i32', n), key: 3 }, n);
    expect(tight.counts.cpu.get('sampleNeighbor')).toBe(1);
  });
});

describe.skipIf(!gpu)('timeKernels', () => {
  it('times every GPU kernel from the host and, with timestamp queries, on the device, without changing its output', async () => {
    const n = 400_003;
    const e = barabasiAlbert(n, 3, 9);
    const cpu = createExecutor(1);
    const graph = await buildGraph(cpu, n, e.src, e.dst, e.directed);
    const votes = sharedArray('u8', n);
    for (let i = 0; i < n; i++) votes[i] = hash(5, i) % 3;
    const want = sharedArray('u8', n);
    await cpu.run(K.gatherNeighbor, { offsets: graph.following.offsets, targets: graph.following.targets, src: votes, out: want, key: 8 }, n);
    const exec = new GpuExecutor(gpu!, cpu, { timeKernels: true });
    const got = sharedArray('u8', n);
    for (let i = 0; i < 3; i++) await exec.run(K.gatherNeighbor, { offsets: graph.following.offsets, targets: graph.following.targets, src: votes, out: got, key: 8 }, n);
    await exec.sync();
    expect(Buffer.from(got).equals(Buffer.from(want))).toBe(true);
    const wall = exec.kernelMs.get('gatherNeighbor')!;
    expect(wall).toHaveLength(3);
    if (!gpu!.timestamps) {
      expect(exec.kernelDeviceMs.size).toBe(0);
      return;
    }
    const device = exec.kernelDeviceMs.get('gatherNeighbor')!;
    expect(device).toHaveLength(3);
    // On the device's clock a pass takes time, and no more than the host saw from encoding it to
    // the queue's end (the first call also uploads the graph).
    for (let i = 0; i < 3; i++) {
      expect(device[i]).toBeGreaterThan(0);
      expect(device[i]).toBeLessThanOrEqual(wall[i]);
    }
  });

  it("a run's manifest holds both, call by call, for every kernel the device ran", async () => {
    const { scenario } = await loadScenario('social-feed');
    const exec = new GpuExecutor(gpu!, createExecutor(1), { timeKernels: true });
    const r = await runScenario(scenario, { agents: 5_000, steps: 3, seed: 2, checkpointEvery: 0, out: path.join(tmp, 'timed'), executor: exec });
    const waited = r.manifest.kernel_device_ms!;
    const calls = r.manifest.kernel_calls!.webgpu;
    expect(Object.keys(waited).sort()).toEqual(Object.keys(calls).sort());
    for (const [k, ms] of Object.entries(waited)) expect(ms, k).toHaveLength(calls[k]);
    if (!gpu!.timestamps) {
      expect(r.manifest.kernel_clock_ms).toBeUndefined();
      return;
    }
    const clock = r.manifest.kernel_clock_ms!;
    expect(Object.keys(clock).sort()).toEqual(Object.keys(waited).sort());
    for (const [k, ms] of Object.entries(clock)) {
      expect(ms, k).toHaveLength(waited[k].length);
      ms.forEach((x, i) => expect(x, `${k} call ${i}`).toBeLessThanOrEqual(waited[k][i]));
    }
  });
});
