/**
 * Token counts for cost plans and budgets: OpenAI's o200k_base encoding (GPT-4o, GPT-4.1, o-series
 * models), from the gpt-tokenizer package. For other models' tokenizers (Llama, Qwen, Mistral) the
 * count is an estimate, typically within 10-20%. The encoding (a few MB of tables) is loaded on
 * first use, so runs without a plan or a cost limit never pay for it.
 */
export const TOKENIZER = 'o200k_base (gpt-tokenizer)';

/**
 * Tokens of one chat message's framing in OpenAI's chat format (role and separators), as their
 * cookbook counts it: 3 per message, and 3 that prime the reply.
 */
const PER_MESSAGE = 3;
const PER_REPLY = 3;

type Counter = (text: string) => number;
let counter: Counter | undefined;

/** Loads the encoding (once); `countTokens` needs it loaded. */
export async function loadTokenizer(): Promise<void> {
  counter ??= (await import('gpt-tokenizer/encoding/o200k_base')).countTokens;
}

/** Tokens of a text; loadTokenizer() must have been awaited. */
export function countTokens(text: string): number {
  if (!counter) throw new Error('countTokens before loadTokenizer()');
  return counter(text);
}

/** Prompt tokens of a chat request: its messages' contents plus the chat format's framing. */
export function promptTokens(messages: ReadonlyArray<{ content: string }>): number {
  return messages.reduce((t, m) => t + countTokens(m.content) + PER_MESSAGE, PER_REPLY);
}
