/**
 * The reply an archetype's LLM call must give: JSON with per-action probabilities, opinion-update
 * parameters, a one-sentence reason and an optional example post. Validated with zod; numbers
 * outside their range are clamped and the reply is flagged `out_of_range` (used, but counted).
 */
import { z } from 'zod';

export const ACTION_PROBS = ['post', 'like', 'dislike', 'repost', 'quote', 'comment', 'report', 'mute', 'unfollow', 'follow'] as const;
export const RANGES: Record<string, [number, number]> = {
  ...Object.fromEntries(ACTION_PROBS.map((a) => [a, [0, 1] as [number, number]])),
  eps: [0, 2],
  mu: [0, 1],
  backfire: [0, 1],
};
export const REPLY_PARAMS = [...ACTION_PROBS, 'eps', 'mu', 'backfire'] as const;
export type ReplyParam = (typeof REPLY_PARAMS)[number];

const num = z.number().finite();
export const replySchema = z.object({
  probabilities: z.object(Object.fromEntries(ACTION_PROBS.map((a) => [a, num])) as Record<(typeof ACTION_PROBS)[number], typeof num>),
  opinion: z.object({ eps: num, mu: num, backfire: num }),
  reason: z.string().min(1).max(1000),
  example_post: z.string().max(2000).optional(),
});

export type FailureKind =
  | ''
  | 'http_429'
  | 'http_5xx'
  | 'http_4xx'
  | 'timeout'
  | 'connection'
  | 'bad_body'
  | 'bad_json'
  | 'schema'
  | 'out_of_range'
  /** HTTP 401 or 403: the server refuses the key (or the key the model). */
  | 'http_auth';

export interface ParsedReply {
  params?: Record<ReplyParam, number>;
  reason: string;
  example: string;
  failure: FailureKind;
  detail?: string;
}

/** Extracts the first JSON object in the text (models often wrap it in prose or code fences). */
function jsonOf(text: string): unknown {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) throw new Error('no JSON object in the reply');
  return JSON.parse(text.slice(start, end + 1));
}

export function parseReply(text: string): ParsedReply {
  let raw: unknown;
  try {
    raw = jsonOf(text);
  } catch (e) {
    return { reason: '', example: '', failure: 'bad_json', detail: (e as Error).message };
  }
  const r = replySchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0];
    return { reason: '', example: '', failure: 'schema', detail: `${i.path.join('.')}: ${i.message}` };
  }
  const flat: Record<string, number> = { ...r.data.probabilities, ...r.data.opinion };
  let clamped = false;
  for (const k of REPLY_PARAMS) {
    const [lo, hi] = RANGES[k];
    const v = flat[k];
    if (v < lo || v > hi) {
      clamped = true;
      flat[k] = Math.min(hi, Math.max(lo, v));
    }
  }
  return {
    params: flat as Record<ReplyParam, number>,
    reason: r.data.reason,
    example: r.data.example_post ?? '',
    failure: clamped ? 'out_of_range' : '',
  };
}
