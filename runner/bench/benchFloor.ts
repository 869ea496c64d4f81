/**
 * The C floor the voter benchmark is held to: `../shared/floors/csr_voter.c` (a plain OpenMP loop
 * over a CSR graph; see its README), compiled with gcc when the bench runs, fed the very graph
 * socsim built, and run in the same bench run so the ratio compares like with like on a noisy
 * machine. Where the source or gcc is missing, `prepareFloor` says why and the bench prints that
 * instead of a ratio.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../packageInfo.ts';

/** The floor's source: `$SOCSIM_FLOORS/csr_voter.c`, else `../shared/floors/` beside the repository. */
export function floorSource(): string {
  const dir = process.env.SOCSIM_FLOORS ?? path.resolve(PACKAGE_ROOT, '..', 'shared', 'floors');
  return path.join(dir, 'csr_voter.c');
}

export interface Floor {
  /** The compiled binary. */
  bin: string;
  /** The edge file (int32 pairs) of the graph under test. */
  edges: string;
  nodes: number;
  dir: string;
}

/**
 * Compiles the floor (the build line of the floors README) and writes the undirected edges
 * (src[k], dst[k]) as little-endian int32 pairs. Returns the reason instead when it cannot.
 */
export function prepareFloor(nodes: number, src: Int32Array, dst: Int32Array): Floor | { unavailable: string } {
  const source = floorSource();
  if (!fs.existsSync(source)) return { unavailable: `no C floor at ${source} (set SOCSIM_FLOORS)` };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-floor-'));
  const bin = path.join(dir, 'csr_voter');
  const cc = spawnSync('gcc', ['-O3', '-march=native', '-fopenmp', source, '-o', bin], { encoding: 'utf8' });
  if (cc.error || cc.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    return { unavailable: `gcc could not build ${source}: ${cc.error?.message ?? cc.stderr.trim()}` };
  }
  const pairs = new Int32Array(2 * src.length);
  for (let k = 0; k < src.length; k++) {
    pairs[2 * k] = src[k];
    pairs[2 * k + 1] = dst[k];
  }
  const edges = path.join(dir, 'edges.i32');
  // Typed arrays are little-endian on every platform Node runs on here (x86-64, arm64).
  fs.writeFileSync(edges, pairs);
  return { bin, edges, nodes, dir };
}

/** One run of the floor: `steps` steps, the first excluded; the median seconds per step. */
export function runFloor(f: Floor, steps: number, threads: number, mode: 'sample' | 'all' = 'sample'): number {
  const r = spawnSync(f.bin, [f.edges, String(f.nodes), String(steps), mode, String(threads)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`C floor failed: ${r.stderr}`);
  const out = JSON.parse(r.stdout) as { s_per_step_median: number };
  return out.s_per_step_median;
}

export function removeFloor(f: Floor): void {
  fs.rmSync(f.dir, { recursive: true, force: true });
}
