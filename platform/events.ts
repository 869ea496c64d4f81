/**
 * What an active user's step emits, shared by the act and postContent kernels' two versions
 * (platform/kernels.ts, kernels.wgsl.ts, act.wgsl.ts) and the phases that apply the events: the
 * action codes, the event buffer's slots per user, and the noise a new post's content draws.
 */

/** Action codes, as in events.arrow's `action` dictionary. */
export const ACTIONS = ['refresh', 'like', 'dislike', 'repost', 'quote', 'comment', 'report', 'mute', 'unfollow', 'follow', 'post', 'nothing'] as const;
export const A = Object.fromEntries(ACTIONS.map((x, i) => [x, i])) as Record<(typeof ACTIONS)[number], number>;

/** Original posts one user makes in one step at most (the event buffer's room for them). */
export const MAX_POSTS_PER_STEP = 8;

/**
 * Event slots per active user: per feed item at most 8 events (like or dislike, repost, quote,
 * comment, report, mute, unfollow), then the posts and one follow; rounded up to whole 4-byte words,
 * so that on the GPU each user's action bytes are words of its own.
 */
export const maxEventsFor = (feedSize: number) => Math.ceil((feedSize * 8 + MAX_POSTS_PER_STEP + 1) / 4) * 4;

/** Standard deviations of the noise on a new post's topic components and on its stance. */
export const TOPIC_NOISE = 0.3;
export const STANCE_NOISE = 0.1;
