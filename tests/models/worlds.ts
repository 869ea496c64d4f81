/** Hand-built worlds for the model tests: a follow graph from an edge list and an optional opinion column. */
import { buildGraph } from '../../sim-core/csr.ts';
import type { Executor } from '../../sim-core/exec.ts';
import type { World } from '../../sim-core/phase.ts';
import { createTable, sharedArray, type Schema } from '../../sim-core/table.ts';

/**
 * A world over a hand-built graph. `follows` lists edges u -> v, "u follows v": v influences u
 * (directed unless `directed` is false). The agent table starts with an `opinion` column (f32)
 * when `opinion` is given.
 */
export async function makeWorld(
  ex: Executor,
  n: number,
  follows: ReadonlyArray<readonly [number, number]>,
  o: { seed?: number; opinion?: ArrayLike<number>; directed?: boolean } = {},
): Promise<World> {
  const src = sharedArray('i32', follows.length);
  const dst = sharedArray('i32', follows.length);
  follows.forEach(([u, v], k) => {
    src[k] = u;
    dst[k] = v;
  });
  const graph = await buildGraph(ex, n, src, dst, o.directed ?? true);
  const schema: Schema = o.opinion ? { opinion: { type: 'f32' } } : {};
  const agents = createTable(schema, n);
  if (o.opinion) (agents.columns.opinion as Float32Array).set(Array.from(o.opinion));
  return { agents, graph, exec: ex, seed: o.seed ?? 1, stepSeconds: 3600 };
}
