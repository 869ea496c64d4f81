/**
 * The shape of the summation tree of sim-core/treeSums.ts and its WGSL version.
 *
 * The opinion statistics' sums (models/opinion.ts) are taken over groups of TREE_GROUP rows, each
 * the same fixed tree: TREE_BLOCKS blocks of TREE_BLOCK rows, each summed in row order from +0,
 * then the block sums added pairwise (block t + 32 into t, then t + 16, ..., t + 1). The tree does
 * not depend on the chunking (chunks must start at multiples of TREE_GROUP) nor on the thread
 * count, and it is what a GPU workgroup computes (sim-core/gpu/treeSums.wgsl.ts: one invocation a
 * block, the same f64 roundings in software): so each group's sums have the same bits on both
 * backends, and only the groups' sums leave the device. Callers combine the groups in order.
 */
export const TREE_BLOCK = 64;
export const TREE_BLOCKS = 64;
export const TREE_GROUP = TREE_BLOCK * TREE_BLOCKS;
