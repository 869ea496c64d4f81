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
