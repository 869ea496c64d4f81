/** The edge lists the graph generators return and buildGraph turns into the follow CSR. */
import type { BlockSources } from '../sim-core/csr.ts';

export interface EdgeList {
  nodes: number;
  src: Int32Array;
  dst: Int32Array;
  directed: boolean;
}

/**
 * An edge list whose sources are the users' blocks of edges, follow-backs marked (the homophilous
 * generator's: 4 bytes per edge less; `sourceArray` in sim-core/csr.ts gives them as an array).
 * buildGraph turns `dst` into the following CSR's targets in place.
 */
export interface BlockEdgeList extends Omit<EdgeList, 'src'> {
  src: BlockSources;
}
