/**
 * An OpenAI-compatible chat-completions server on 127.0.0.1 that answers every archetype call with
 * the same valid reply, so that a sample run of the docs writes archetypes.arrow and the LLM
 * metrics without a model. Its replies are fixed; only the files' columns are read from the run.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ACTION_PROBS } from '../../llm-archetypes/reply.ts';

const REPLY = JSON.stringify({
  probabilities: Object.fromEntries(ACTION_PROBS.map((a) => [a, 0.05])),
  opinion: { eps: 0.3, mu: 0.2, backfire: 0.1 },
  reason: 'a fixed reply of the documentation sample server',
  example_post: 'an example post',
});

export interface SampleLlmServer {
  baseURL: string;
  close(): Promise<void>;
}

export async function startSampleLlmServer(): Promise<SampleLlmServer> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.method === 'GET') return void res.end(JSON.stringify({ object: 'list', data: [] }));
      res.end(
        JSON.stringify({
          id: 'chatcmpl-docs',
          object: 'chat.completion',
          created: 0,
          model: 'docs-sample',
          choices: [{ index: 0, message: { role: 'assistant', content: REPLY }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
