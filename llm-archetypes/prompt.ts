/**
 * Prompt templates with named placeholders, `{name}`. Filling fails loudly on a placeholder with
 * no value, so a template and its data cannot drift apart silently.
 */
export const SYSTEM_PROMPT =
  'You set the behaviour of one group of users in a social-media simulation. Answer with one JSON object and nothing else.';

export const USER_TEMPLATE = `Group: {persona}
Members: {members} users; {online} were online in the last step.
Their mean opinion on the current debate: {opinion} (scale -1 to +1).
Their feeds showed {items} items, {in_network}% from accounts they follow. Stance of those items: {stance_mix}.
Trending now: {trending}
What they did: {actions}
News: {events}
Current behaviour: {current}

Give, for a typical member of this group, the probability (0 to 1) of each action: per item read for
like, dislike, repost, quote, comment, report, mute and unfollow; per session for post and follow.
Also give opinion dynamics: eps (0 to 2), how far another stance may be and still persuade; mu (0 to
1), how fast they move toward it; backfire (0 to 1), how strongly very distant content pushes them away.
Reply as JSON: {"probabilities": {"post": p, "like": p, "dislike": p, "repost": p, "quote": p,
"comment": p, "report": p, "mute": p, "unfollow": p, "follow": p}, "opinion": {"eps": x, "mu": x,
"backfire": x}, "reason": "one sentence", "example_post": "a post they might write"}`;

/** Replaces every {name} in the template; throws when a placeholder has no value. */
export function fillTemplate(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`prompt template placeholder {${name}} has no value`);
    return String(values[name]);
  });
}

/** The archetype prompt's messages for the template's values. */
export function archetypeMessages(values: Record<string, string | number>, template = USER_TEMPLATE): Array<{ role: 'system' | 'user'; content: string }> {
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: fillTemplate(template, values) },
  ];
}

/**
 * The template's values for a plan, before any step: the archetype's own persona, members,
 * behaviour and news, with representative feed figures in the format a run writes them: 6.5% of
 * the members online (the default population's mean sessions per hour); in the first round empty
 * feeds and only posts and follows (nothing has been shown yet), later ten items each, the
 * per-item actions and three trending posts; an archetype too small to have anyone online shows
 * nothing.
 */
export function typicalValues(persona: string, members: number, current: string, news: string, step: number): Record<string, string | number> {
  const online = Math.round(members * 0.065);
  const base = { persona, members, online, events: news, current };
  const empty = { items: 0, in_network: '0%', stance_mix: 'nothing' };
  if (online === 0) return { ...base, ...empty, opinion: 'unknown', trending: step === 0 ? 'nothing yet.' : TRENDING, actions: 'nothing' };
  const counts = (names: string[]) => names.map((a, i) => `${Math.max(1, Math.round((online * (names.length - i)) / names.length))} ${a}`).join(', ');
  if (step === 0) return { ...base, ...empty, opinion: '-0.123', trending: 'nothing yet.', actions: counts(['follow', 'post']) };
  return {
    ...base,
    opinion: '-0.123',
    items: online * 10,
    in_network: '64%',
    stance_mix: 'strongly against 12%, against 23%, neutral 31%, for 21%, strongly for 13%',
    trending: TRENDING,
    actions: counts(['like', 'dislike', 'repost', 'quote', 'comment', 'report', 'mute', 'unfollow']),
  };
}

const TRENDING = 'a post with stance 0.8 (45 likes, 12 reposts); a post with stance -0.456 (38 likes, 9 reposts); a post with stance 0.123 (21 likes, 4 reposts)';
