/**
 * Injected stories (the inject intervention): each injected post is followed as the root of a
 * reshare cascade, counting the posts that carry its tag (reposts and quotes, at any depth;
 * comments start conversations, not reshares). Written to stories.arrow at the end of the run, one
 * row per injected post:
 *
 *   reach          unique users shown the story (the root or any of its reshares) in a feed
 *   sharers        unique users who posted it: the author and everyone who reshared it
 *   depth          largest reshare depth (root = 0); max_breadth: most posts at one depth
 *   hours_to_reach_100, hours_to_reach_1000   simulated hours from the story's step to the end of
 *                  the step in which its reach first reached 100 (1,000; NaN if it never did), as
 *                  Vosoughi, Roy and Aral (Science 2018) time how fast stories reach a number of
 *                  people
 */
import type { ColumnData } from '../sim-core/io/arrowFile.ts';
import { VERACITY } from './posts.ts';
import { StateTable } from '../sim-core/stateTable.ts';

/** The reaches at which a story's time is taken (hours_to_reach_100, hours_to_reach_1000). */
export const REACH_MARKS = [100, 1000] as const;

interface Story {
  id: number;
  tag: number;
  veracity: number;
  author: number;
  step: number;
  novelty: number;
  stance: number;
  reach: number;
  sharers: number;
  depth: number;
  breadth: number[];
  /** Step in which reach reached each of REACH_MARKS, or -1. */
  markSteps: number[];
  /** Bit per user: shown the story; posted it. */
  shown: Uint8Array;
  posted: Uint8Array;
}

export class StoryTracker extends StateTable {
  /**
   * The scenario story's seed accounts, chosen at init from set-up's graph. State, so that a
   * checkpoint holds them: a resumed run may take the checkpoint's graph in place of set-up's.
   */
  seeds: Int32Array = new Int32Array(0);
  stories: Story[] = [];
  /** Root post id -> index in `stories`. */
  byRoot = new Map<number, number>();

  register(o: { id: number; tag: number; veracity: number; author: number; step: number; novelty: number; stance: number }, users: number): void {
    const bytes = (users + 7) >> 3;
    const st: Story = { ...o, reach: 0, sharers: 0, depth: 0, breadth: [0], markSteps: REACH_MARKS.map(() => -1), shown: new Uint8Array(bytes), posted: new Uint8Array(bytes) };
    this.byRoot.set(o.id, this.stories.length);
    this.stories.push(st);
    this.share(o.id, o.author, 0);
  }

  get size(): number {
    return this.stories.length;
  }

  /** `user` was shown a post of the story rooted at `root` during `step`. */
  expose(root: number, user: number, step: number): void {
    const i = this.byRoot.get(root);
    if (i === undefined) return;
    const st = this.stories[i];
    const b = 1 << (user & 7);
    if ((st.shown[user >> 3] & b) !== 0) return;
    st.shown[user >> 3] |= b;
    const reach = ++st.reach;
    for (let m = 0; m < REACH_MARKS.length; m++) if (reach === REACH_MARKS[m]) st.markSteps[m] = step;
  }

  /** `user` posted the story (root, or a reshare at `depth`). */
  share(root: number, user: number, depth: number): void {
    const i = this.byRoot.get(root);
    if (i === undefined) return;
    const st = this.stories[i];
    const b = 1 << (user & 7);
    if ((st.posted[user >> 3] & b) === 0) {
      st.posted[user >> 3] |= b;
      st.sharers++;
    }
    if (depth > st.depth) st.depth = depth;
    st.breadth[depth] = (st.breadth[depth] ?? 0) + 1;
  }

  /** stories.arrow's columns. */
  columns(tags: readonly string[], stepHours: number): ColumnData[] {
    const S = this.stories;
    const i32 = (f: (s: Story) => number) => Int32Array.from(S, f);
    return [
      { name: 'id', type: 'i32', values: i32((s) => s.id) },
      { name: 'tag', type: 'u8', values: Uint8Array.from(S, (s) => s.tag), dictionary: tags },
      { name: 'veracity', type: 'u8', values: Uint8Array.from(S, (s) => s.veracity), dictionary: VERACITY },
      { name: 'author', type: 'i32', values: i32((s) => s.author) },
      { name: 'step', type: 'i32', values: i32((s) => s.step) },
      { name: 'novelty', type: 'f32', values: Float32Array.from(S, (s) => s.novelty) },
      { name: 'stance', type: 'f32', values: Float32Array.from(S, (s) => s.stance) },
      { name: 'reach', type: 'i32', values: i32((s) => s.reach) },
      { name: 'sharers', type: 'i32', values: i32((s) => s.sharers) },
      { name: 'depth', type: 'i32', values: i32((s) => s.depth) },
      { name: 'max_breadth', type: 'i32', values: i32((s) => s.breadth.reduce((m, b) => Math.max(m, b ?? 0), 0)) },
      ...REACH_MARKS.map((mark, m): ColumnData => ({
        name: `hours_to_reach_${mark}`,
        type: 'f64',
        values: Float64Array.from(S, (s) => (s.markSteps[m] < 0 ? NaN : (s.markSteps[m] - s.step + 1) * stepHours)),
      })),
    ];
  }
}
