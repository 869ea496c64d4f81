/**
 * `assign`: post-level random assignment to treatment groups, with an artificial vote.
 */
import { z } from 'zod';
import { POST_KINDS } from '../posts.ts';
import { defineIntervention, type RunContext } from './kind.ts';
import { stepOf } from './time.ts';

/** Which assign intervention is in force and the step it last assigned in (-1: none to log). */
export interface AssignLog {
  index: number;
  step: number;
}

const group = z.strictObject({ share: z.number().gt(0).max(1), vote: z.union([z.literal(-1), z.literal(0), z.literal(1)]).default(0) });

/** Logs the posts the assignment in force gave a group during its last step, and starts a new count. */
function closeStep({ social: s, state, log }: RunContext<AssignLog>): void {
  if (s.moderation.assign && state.step >= 0 && s.moderation.assign.assigned > 0) log(state.step, state.index, { posts: s.moderation.assign.assigned, agents: 0 });
  if (s.moderation.assign) s.moderation.assign.assigned = 0;
}

export default defineIntervention({
  name: 'assign',
  doc:
    'Post-level random assignment: from then on (until untilHour or untilStep), each new post of the given kinds joins a treatment group with the group\'s share ' +
    'and gets its artificial vote at creation (shown in its score, never counted in likes or dislikes); posts.arrow records the group. ' +
    'It logs one row per step in which it assigned posts. The design of Muchnik, Aral & Taylor (Science 2013: one up- or down-vote at creation, herding experiment).',
  fields: {
    untilHour: z.number().min(0).optional().describe('End of assignment (exclusive), in hours or steps; default: the end of the run.'),
    untilStep: z.number().int().min(0).optional().describe('End of assignment (exclusive) as a step; default: the end of the run.'),
    kinds: z.array(z.enum(POST_KINDS)).min(1).default(['original']).describe('The kinds of new posts that are assigned.'),
    groups: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/, 'group names are letters, digits, _ and -'), group).describe('Group name -> share of new posts and the artificial vote they get (+1 up, -1 down, 0 none).'),
  },
  groups: (iv) => Object.keys(iv.groups),
  check(iv, issue) {
    const total = Object.values(iv.groups).reduce((t, g) => t + g.share, 0);
    if (Object.keys(iv.groups).length === 0) issue('give at least one group', 'groups');
    if (total > 1 + 1e-9) issue(`group shares add up to ${total}; they must add up to at most 1`, 'groups');
    if (iv.untilHour !== undefined && iv.untilStep !== undefined) issue('give at most one of untilHour or untilStep', 'untilHour');
  },
  state: (): AssignLog => ({ index: -1, step: -1 }),
  apply(iv, ctx) {
    closeStep(ctx);
    const s = ctx.social;
    const groups = Object.entries(iv.groups);
    let cum = 0;
    const until = iv.untilStep ?? (iv.untilHour !== undefined ? stepOf({ hour: iv.untilHour }, ctx.world.stepSeconds) : Infinity);
    s.moderation.assign = {
      key: ctx.key,
      kinds: iv.kinds.reduce((m, k) => m | (1 << POST_KINDS.indexOf(k)), 0),
      codes: groups.map(([g]) => s.posts.groups.indexOf(g)),
      cumulative: groups.map(([, g]) => (cum += g.share)),
      votes: groups.map(([, g]) => g.vote),
      until,
      assigned: 0,
    };
    ctx.state.index = ctx.index;
    return null;
  },
  beginStep: closeStep,
  endStep(ctx) {
    const a = ctx.social.moderation.assign;
    ctx.state.step = a && ctx.step < a.until ? ctx.step : -1;
  },
  finish: closeStep,
});
