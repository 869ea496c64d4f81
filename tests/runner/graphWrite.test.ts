/**
 * graph.arrow (~4 GB at 10M agents) is written while the first steps run: the steps do not wait
 * for the disk, but a checkpoint (a resumable run has its graph), the end of the run and onReady
 * (a live dashboard reads the graph) do. A checkpoint leaves out a graph set-up built.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { setWriteIo } from '../../sim-core/io/arrowFile.ts';
import { loadScenario } from '../../runner/run/loadScenario.ts';
import { runScenario } from '../../runner/run/runScenario.ts';

const tmp = mkdtempSync(join(tmpdir(), 'socsim-graph-write-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('graph.arrow written while the run goes on', () => {
  afterEach(() => setWriteIo());

  it('the first step runs before it is written; onReady and a checkpoint wait for it; the checkpoint leaves the graph out and resumes to the same bytes', async () => {
    const { scenario } = await loadScenario('sir');
    const ref = join(tmp, 'ref');
    await runScenario(scenario, { agents: 20_000, steps: 3, out: ref });
    // A slow disk: each write (at most 64 KiB; graph.arrow is ~400 KB) takes 30 ms.
    setWriteIo({
      maxBytesPerCall: 1 << 16,
      writevLater: async (fh, buffers, position) => {
        await sleep(30);
        return (await fh.writev(buffers, position)).bytesWritten;
      },
    });
    const out = join(tmp, 'slow');
    const graph = join(out, 'graph.arrow');
    const hadGraph: boolean[] = [];
    const ready: boolean[] = [];
    const signal = { stopRequested: false };
    const r = await runScenario(scenario, {
      agents: 20_000,
      steps: 3,
      out,
      checkpointEvery: 1,
      signal,
      onStep: (step) => {
        hadGraph.push(existsSync(graph));
        if (step === 2) signal.stopRequested = true; // after the second step
      },
      onReady: () => ready.push(existsSync(graph)),
    });
    expect(hadGraph).toEqual([false, true]); // the first step was done while it was written; its checkpoint waited
    expect(ready).toEqual([true]);
    expect(r.manifest.status).toBe('interrupted');
    expect(r.manifest.checkpoint?.step).toBe(2);
    expect(readFileSync(graph).equals(readFileSync(join(ref, 'graph.arrow')))).toBe(true);
    expect(existsSync(`${graph}.tmp`)).toBe(false);
    // The graph is still set-up's: the checkpoint leaves it out (the resume builds it again). The
    // population's columns are ~1.6 MB (16 float32 interests an agent); the CSR of its 99,975
    // undirected edges would add ~0.88 MB.
    expect(r.manifest.checkpoint!.bytes).toBeLessThan(1_700_000);
    setWriteIo();
    const resumed = await runScenario(scenario, { agents: 20_000, steps: 3, out, resume: true });
    expect(resumed.manifest.status).toBe('completed');
    for (const f of ['graph.arrow', 'metrics.arrow', ...resumed.manifest.files.agents]) {
      expect(readFileSync(join(out, f)).equals(readFileSync(join(ref, f))), f).toBe(true);
    }

    // A run of no steps is not ready (onReady) but ends with its graph.
    const none = join(tmp, 'none');
    let readyCalls = 0;
    await runScenario(scenario, { agents: 20_000, steps: 0, out: none, onReady: () => readyCalls++ });
    expect(readyCalls).toBe(0);
    expect(readFileSync(join(none, 'graph.arrow')).equals(readFileSync(join(ref, 'graph.arrow')))).toBe(true);
  });
});
