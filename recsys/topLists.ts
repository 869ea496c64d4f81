/**
 * The candidate lists' layout, shared by candidateKernels.ts and its WGSL version: the `topics`
 * cluster lists of `perCluster` entries, then the trending list of `trending` entries, at
 * TOP_WORDS words an entry (id, score high word, score low word, tie), `topWidth` entries a slice.
 */
export const TOP_WORDS = 4;

/** Entries of one slice's lists: topics x perCluster, then trending. */
export function topWidth(topics: number, perCluster: number, trending: number): number {
  return topics * perCluster + trending;
}
