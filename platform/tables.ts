/**
 * The social platform's smaller state tables (sim-core/stateTable.ts), beside the post table
 * (posts.ts), the behaviour table (behaviour.ts), the cascade trackers (cascades.ts) and the
 * injected stories (stories.ts). SocialState (state.ts) holds them under these names:
 *
 *   feeds       (step)    who is active this step and the feed each active user was shown
 *   events      (step)    what each active user did with it (the act kernel's event buffer)
 *   readers     (carried) what the recommender keeps per user: nearest clusters, recent impressions
 *   follows     (carried) follower counts, mutes, and the follows and unfollows since the last rebuild
 *   moderation  (carried) suspended accounts and the post-level random assignment in force
 *
 * The per-active-user arrays (feeds, events) are indexed by the row of the user in `feeds.active`.
 */
import { createPairSet, type PairSet } from '../sim-core/pairSet.ts';
import { StateTable, type Lifetime } from '../sim-core/stateTable.ts';
import { sharedArray } from '../sim-core/table.ts';

export class FeedTable extends StateTable {
  /** 1 for the users active this step (the activate kernel), n of them. */
  mask: Uint8Array;
  /** The active users, ascending: row k of every per-active-user array is user active[k]. */
  active: Int32Array = sharedArray('i32', 0);
  /** Per active user: feedSize post ids, the item flags, and how many items it was shown. */
  items = sharedArray('i32', 0);
  flags = sharedArray('u8', 0);
  len = sharedArray('u8', 0);
  /** Per active user: sum of |stance - opinion| over its feed before the update (the exposure kernel). */
  rowDist = sharedArray('f32', 0);
  /** Per active user: distinct topic clusters in its feed (the feedMix kernel). */
  rowDistinct = sharedArray('u8', 0);

  /** Items per feed. */
  readonly size: number;

  constructor(users: number, size: number) {
    super();
    this.size = size;
    this.mask = sharedArray('u8', users);
  }

  override get lifetime(): Lifetime {
    return 'step';
  }

  /** Whether the per-active-user arrays hold `active` users (else reserve() must grow them). */
  holds(active: number): boolean {
    return this.len.length >= active;
  }

  /** New per-active-user arrays for `cap` users (their contents are rewritten every step). */
  reserve(cap: number): void {
    this.items = sharedArray('i32', cap * this.size);
    this.flags = sharedArray('u8', cap * this.size);
    this.len = sharedArray('u8', cap);
    this.rowDist = sharedArray('f32', cap);
    this.rowDistinct = sharedArray('u8', cap);
  }
}

export class EventTable extends StateTable {
  /** Per active user: `max` slots of action code and target (a post id, or a user for follows), and the count used. */
  action = sharedArray('u8', 0);
  target = sharedArray('i32', 0);
  count = sharedArray('u16', 0);

  /** Event slots per active user (events.ts maxEventsFor). */
  readonly max: number;

  constructor(max: number) {
    super();
    this.max = max;
  }

  override get lifetime(): Lifetime {
    return 'step';
  }

  /** New arrays for `cap` active users. */
  reserve(cap: number): void {
    this.action = sharedArray('u8', cap * this.max);
    this.target = sharedArray('i32', cap * this.max);
    this.count = sharedArray('u16', cap);
  }
}

export class ReaderTable extends StateTable {
  /** Each user's nearest topic clusters (n x probe), refreshed at rebuilds. */
  clusters: Uint8Array;
  /** Ring of recent impressions per user (n x seenSize) and its cursor (the already-seen filter). */
  seen: Int32Array;
  seenAt: Uint8Array;

  constructor(users: number, probe: number, seenSize: number) {
    super();
    this.clusters = sharedArray('u8', users * probe);
    this.seen = sharedArray('i32', users * seenSize).fill(-1);
    this.seenAt = sharedArray('u8', users);
  }
}

export class FollowTable extends StateTable {
  /** Follower counts, updated as follows happen (the graph catches up at rebuilds). */
  followers: Int32Array;
  /** Muted (user, author) pairs. */
  mutes: PairSet = createPairSet();
  /** Follow deltas since the last graph rebuild. */
  added: PairSet = createPairSet();
  removed: PairSet = createPairSet();

  constructor(followers: Int32Array) {
    super();
    this.followers = followers;
  }

  /** Whether follows or unfollows wait for the next rebuild. */
  get pending(): number {
    return this.added.size + this.removed.size;
  }
}

/** Post-level random assignment: new posts of `kinds` join group g with probability share[g]. */
export interface Assignment {
  /** Random key of the assignment (the intervention's stream); draws are keyed by post id. */
  key: number;
  /** Bit per post kind. */
  kinds: number;
  /** Group codes (PostTable.groups), cumulative shares and votes. */
  codes: number[];
  cumulative: number[];
  votes: number[];
  /** First step without assignment (Infinity: the end of the run). */
  until: number;
  /** Posts assigned this step (interventions.arrow). */
  assigned: number;
}

export class ModerationTable extends StateTable {
  /** 1 for suspended accounts (the suspend intervention): never active, their posts removed. */
  suspended: Uint8Array;
  /** Post-level random assignment in force (the assign intervention), or none. */
  assign: Assignment | null = null;

  constructor(users: number) {
    super();
    this.suspended = sharedArray('u8', users);
  }
}
