/**
 * Tree statistics as OASIS measures cascades: for a root post and the posts of its tree at any
 * depth, the scale is the number of unique users taking part (the root's author included), the
 * depth is the largest depth reached (root = 0), and the max breadth is the largest number of posts
 * at any one depth. The platform keeps two kinds of tree (newPost.ts): reshare cascades (reposts
 * and quotes, as retweet cascades are measured) and conversations (comments).
 */
export interface CascadeStats {
  scale: number;
  depth: number;
  maxBreadth: number;
  /** Posts in the cascade, root included. */
  size: number;
}

/** Statistics of one cascade from its posts' depths and authors (root included, depth 0). */
export function cascadeStats(depths: ArrayLike<number>, authors: ArrayLike<number>): CascadeStats {
  const users = new Set<number>();
  const breadth: number[] = [];
  let depth = 0;
  for (let i = 0; i < depths.length; i++) {
    users.add(authors[i]);
    breadth[depths[i]] = (breadth[depths[i]] ?? 0) + 1;
    if (depths[i] > depth) depth = depths[i];
  }
  let maxBreadth = 0;
  for (const b of breadth) if ((b ?? 0) > maxBreadth) maxBreadth = b;
  return { scale: users.size, depth, maxBreadth, size: depths.length };
}

/**
 * Most cascades stay small (on Twitter most are a root and a reshare or two), so a track keeps its
 * users in a plain array, searched in place, until it holds SMALL_USERS of them, and in a Set from
 * then on: a reshare that opens a cascade allocates no Set. Cascade bookkeeping was half of
 * apply's walk at 1M agents (18-19 ms a step without it, 35 with); this took the walk from 34-37
 * to 27-35 ms a step (2026-11-28, 2 cores).
 */
const SMALL_USERS = 16;

/** The track's users (an array while small, a Set once large: checkpoints hold either). */
type Users = number[] | Set<number>;

function usersHas(u: Users, user: number): boolean {
  if (!Array.isArray(u)) return u.has(user);
  for (let i = 0; i < u.length; i++) if (u[i] === user) return true;
  return false;
}

interface Track {
  users: Users;
  breadth: number[];
  depth: number;
  size: number;
  lastStep: number;
}

/**
 * Incremental version for a running simulation: cascades are opened lazily at their first reshare
 * (with the root's author at depth 0) and forgotten once idle for longer than the caller's window.
 */
export class CascadeTracker {
  private readonly tracks = new Map<number, Track>();
  private readonly changed = new Set<number>();
  /**
   * The roots touched at each step (a root once per step it was touched), so that prune reads
   * only the steps it forgets instead of every tracked cascade (5 ms a step at 1M agents).
   */
  private readonly touched = new Map<number, number[]>();

  /** Records a post at `depth` by `user` in the cascade of `root` (authored by rootAuthor). */
  add(root: number, rootAuthor: number, user: number, depth: number, step: number): void {
    let t = this.tracks.get(root);
    if (!t) {
      // A negative rootAuthor opens an aggregate without a root post (e.g. a story posted by
      // several seeds, each added at depth 0).
      t = rootAuthor >= 0 ? { users: [rootAuthor], breadth: [1], depth: 0, size: 1, lastStep: step } : { users: [], breadth: [], depth: 0, size: 0, lastStep: step };
      this.tracks.set(root, t);
      this.touch(root, step);
    } else if (t.lastStep !== step) this.touch(root, step);
    const u = t.users;
    if (!Array.isArray(u)) u.add(user);
    else if (!usersHas(u, user)) {
      if (u.length < SMALL_USERS) u.push(user);
      else t.users = new Set([...u, user]);
    }
    t.breadth[depth] = (t.breadth[depth] ?? 0) + 1;
    if (depth > t.depth) t.depth = depth;
    t.size++;
    t.lastStep = step;
    this.changed.add(root);
  }

  private touch(root: number, step: number): void {
    const roots = this.touched.get(step);
    if (roots) roots.push(root);
    else this.touched.set(step, [root]);
  }

  /** Whether `user` is in the tracked cascade of `root` (its root's author counts). */
  has(root: number, user: number): boolean {
    const t = this.tracks.get(root);
    return t !== undefined && usersHas(t.users, user);
  }

  stats(root: number): CascadeStats | undefined {
    const t = this.tracks.get(root);
    if (!t) return undefined;
    let maxBreadth = 0;
    for (const b of t.breadth) if ((b ?? 0) > maxBreadth) maxBreadth = b;
    return { scale: Array.isArray(t.users) ? t.users.length : t.users.size, depth: t.depth, maxBreadth, size: t.size };
  }

  /** Roots changed since the last call, in increasing root order, with their current statistics. */
  drainChanged(): Array<[number, CascadeStats]> {
    const roots = [...this.changed].sort((a, b) => a - b);
    this.changed.clear();
    return roots.map((r) => [r, this.stats(r)!]);
  }

  /**
   * Forgets cascades with no activity since `step` (their last cascades.arrow row is final). An
   * aggregate without a root post (negative key: the scenario's story) is kept, so the story_*
   * metrics report its totals for the whole run instead of dropping to 0 once it goes quiet.
   */
  prune(step: number): void {
    if (this.touched.size === 0) {
      // Tracks restored from a checkpoint written before `touched` existed: index them once.
      for (const [r, t] of this.tracks) this.touch(r, t.lastStep);
    }
    // A cascade last touched before `step` is among the roots touched at its last step.
    for (const [s, roots] of this.touched) {
      if (s >= step) continue;
      for (const r of roots) {
        const t = this.tracks.get(r);
        if (r >= 0 && t && t.lastStep < step) this.tracks.delete(r);
      }
      this.touched.delete(s);
    }
  }

  get size(): number {
    return this.tracks.size;
  }
}
