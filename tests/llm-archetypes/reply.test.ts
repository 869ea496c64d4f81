import { describe, expect, it } from 'vitest';
import { parseReply, RANGES, REPLY_PARAMS } from '../../llm-archetypes/reply.ts';
import { replyObject } from './fakeServer.ts';

const valid = replyObject({ post: 0.1, like: 0.2, dislike: 0.01, repost: 0.03, quote: 0.004, comment: 0.05, report: 0.001, mute: 0.002, unfollow: 0.003, follow: 0.07, eps: 0.6, mu: 0.15, backfire: 0.05 }, 'they like it', 'wow');
const expected = { post: 0.1, like: 0.2, dislike: 0.01, repost: 0.03, quote: 0.004, comment: 0.05, report: 0.001, mute: 0.002, unfollow: 0.003, follow: 0.07, eps: 0.6, mu: 0.15, backfire: 0.05 };

describe('parseReply', () => {
  it('accepts a valid reply and flattens probabilities and opinion parameters', () => {
    const r = parseReply(JSON.stringify(valid));
    expect(r.failure).toBe('');
    expect(r.params).toEqual(expected);
    expect(Object.keys(r.params!).sort()).toEqual([...REPLY_PARAMS].sort());
    expect(r.reason).toBe('they like it');
    expect(r.example).toBe('wow');
    expect(r.detail).toBeUndefined();
  });

  it('makes example_post optional (empty string when absent)', () => {
    const { example_post: _, ...rest } = valid;
    const r = parseReply(JSON.stringify(rest));
    expect(r.failure).toBe('');
    expect(r.example).toBe('');
  });

  it('finds the JSON object inside prose and code fences', () => {
    const fenced = 'Sure! Here is the behaviour:\n```json\n' + JSON.stringify(valid, null, 2) + '\n```\nHope this helps.';
    const r = parseReply(fenced);
    expect(r.failure).toBe('');
    expect(r.params).toEqual(expected);
    expect(parseReply(`The answer is ${JSON.stringify(valid)} -- done`).params).toEqual(expected);
  });

  it('flags text without a JSON object as bad_json, with no parameters', () => {
    for (const text of ['', 'I cannot help with that.', 'post=0.1, like=0.2', '} backwards {', '{"probabilities": {"post": 0.1,', '{not json at all}']) {
      const r = parseReply(text);
      expect(r.failure, text).toBe('bad_json');
      expect(r.params, text).toBeUndefined();
      expect(r.detail, text).toBeTruthy();
    }
  });

  it('flags schema violations as schema, naming the path of the offending field', () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ ...valid, probabilities: { ...valid.probabilities, like: 'often' } }, /^probabilities\.like: /],
      [{ ...valid, probabilities: { ...valid.probabilities, repost: undefined } }, /^probabilities\.repost: /],
      [{ ...valid, opinion: { eps: 0.3, mu: 0.1 } }, /^opinion\.backfire: /],
      [{ ...valid, reason: '' }, /^reason: /],
      [{ ...valid, reason: 'x'.repeat(1001) }, /^reason: /],
      [{ ...valid, reason: 42 }, /^reason: /],
      [{ ...valid, example_post: 7 }, /^example_post: /],
      [{ probabilities: valid.probabilities, reason: 'r' }, /^opinion: /],
      [{ wrapped: [1, 2, 3] }, /^probabilities: /],
    ];
    for (const [obj, re] of cases) {
      const text = JSON.stringify(obj);
      const r = parseReply(text);
      expect(r.failure, text).toBe('schema');
      expect(r.params, text).toBeUndefined();
      expect(r.detail, text).toMatch(re);
    }
    // A non-finite number (1e999 parses to Infinity) is a schema failure, not a clamp.
    const inf = JSON.stringify(valid).replace('"like":0.2', '"like":1e999');
    expect(inf).toContain('1e999');
    const r = parseReply(inf);
    expect(r.failure).toBe('schema');
    expect(r.detail).toMatch(/^probabilities\.like: /);
  });

  it('clamps out-of-range values into their ranges and flags the reply out_of_range (still used)', () => {
    const r = parseReply(JSON.stringify(replyObject({ like: 3, post: -0.5, eps: -1, mu: 7, backfire: 1.5, follow: 0.3 })));
    expect(r.failure).toBe('out_of_range');
    expect(r.params).toBeDefined();
    expect(r.params!.like).toBe(1);
    expect(r.params!.post).toBe(0);
    expect(r.params!.eps).toBe(0);
    expect(r.params!.mu).toBe(1);
    expect(r.params!.backfire).toBe(1);
    // In-range values pass through untouched.
    expect(r.params!.follow).toBe(0.3);
    expect(r.params!.dislike).toBe(0.05);
    expect(r.reason).toBe('they react to what they see');
    // eps ranges up to 2: 1.5 is in range, 2.5 is clamped to 2.
    expect(RANGES.eps).toEqual([0, 2]);
    expect(parseReply(JSON.stringify(replyObject({ eps: 1.5 })))).toMatchObject({ failure: '', params: { eps: 1.5 } });
    expect(parseReply(JSON.stringify(replyObject({ eps: 2.5 })))).toMatchObject({ failure: 'out_of_range', params: { eps: 2 } });
    // The range bounds themselves are in range.
    expect(parseReply(JSON.stringify(replyObject({ like: 1, post: 0, eps: 2, mu: 0, backfire: 1 }))).failure).toBe('');
  });
});
