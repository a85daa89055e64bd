/**
 * A local stand-in for the Anthropic Messages API, as far as Claude Code needs
 * it to run whole turns offline (docs/agents.md, "Claude Code"): `POST
 * /v1/messages` answered as Server-Sent Events (`message_start`,
 * `content_block_start/delta/stop` for text and `tool_use`, `message_delta`,
 * `message_stop`, the frames of test/raider/fake-llm.ts). Claude Code streams
 * every request it makes in a turn.
 * Each test scripts the replies: a function of the request decides whether
 * the model "says" text, calls a tool, or streams a little and then hangs
 * until the client goes away (a turn to cancel).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { anthropicFrames } from '../raider/fake-llm.js';

const Block = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  tool_use_id: z.string().optional(),
  content: z.unknown().optional(),
  is_error: z.boolean().optional(),
});
const Message = z.looseObject({ role: z.string(), content: z.union([z.string(), z.array(Block)]) });
export const MessagesRequest = z.looseObject({
  model: z.string(),
  stream: z.boolean().optional(),
  tools: z.array(z.looseObject({ name: z.string() })).optional(),
  messages: z.array(Message),
});
export type MessagesRequest = z.infer<typeof MessagesRequest>;

/** What the model does for one request. */
export type StandInReply =
  | { text: string }
  | { tool: { name: string; input: Record<string, unknown> } }
  /** Streams `text`, then holds the response open until the client closes it. */
  | { hang: string };

export interface AnthropicStandIn {
  /** `http://127.0.0.1:PORT`: the agent's ANTHROPIC_BASE_URL. */
  readonly url: string;
  /** Every `/v1/messages` request so far, in order. */
  readonly requests: MessagesRequest[];
  /** Resolves once a hanging reply has started: the turn is in flight, waiting on the model. */
  hanging(): Promise<void>;
  /** How many hanging replies the client has given up on (closed the request). */
  readonly abandoned: number;
  close(): Promise<void>;
}

/** The text of a message's blocks (a plain string content counts as one text block). */
function textOf(message: MessagesRequest['messages'][number]): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .filter((b) => b.type === 'text')
    .map((b) => b.text ?? '')
    .join('\n');
}

/** All the user's text in the request: the mission is in it, among Claude Code's reminders. */
export function userText(request: MessagesRequest): string {
  return request.messages
    .filter((m) => m.role === 'user')
    .map(textOf)
    .join('\n');
}

/** The tool result the request's last message carries, when the model's last reply was a tool call. */
export function lastToolResult(request: MessagesRequest): { text: string; isError: boolean } | undefined {
  const last = request.messages.at(-1);
  if (last === undefined || typeof last.content === 'string') return undefined;
  const result = last.content.find((b) => b.type === 'tool_result');
  if (result === undefined) return undefined;
  const content = result.content;
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((c) => (typeof c === 'object' && c !== null && 'text' in c ? String(c.text) : '')).join('\n')
        : '';
  return { text, isError: result.is_error === true };
}

/** The reply as the fake model servers' frames; a hanging one stops before its text block ends. */
function frames(reply: StandInReply, model: string): string[] {
  if ('tool' in reply) return anthropicFrames({ tools: [{ name: reply.tool.name, arguments: reply.tool.input }] }, model);
  if ('text' in reply) return anthropicFrames({ text: reply.text }, model);
  // Without content_block_stop, message_delta and message_stop the turn is still streaming.
  return anthropicFrames({ text: reply.hang }, model).slice(0, -3);
}

export async function startAnthropicStandIn(script: (request: MessagesRequest) => StandInReply): Promise<AnthropicStandIn> {
  const requests: MessagesRequest[] = [];
  let hung = false;
  let abandoned = 0;
  const hangWaiters: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      if (req.method !== 'POST' || url.pathname !== '/v1/messages') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `the stand-in has no ${url.pathname}` } }));
        return;
      }
      const parsed = MessagesRequest.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      if (!parsed.success || parsed.data.stream !== true) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            type: 'error',
            error: { type: 'invalid_request_error', message: parsed.success ? 'the stand-in only streams' : parsed.error.message },
          }),
        );
        return;
      }
      requests.push(parsed.data);
      const reply = script(parsed.data);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const frame of frames(reply, parsed.data.model)) res.write(frame);
      if (!('hang' in reply)) {
        res.end();
        return;
      }
      res.on('close', () => abandoned++);
      hung = true;
      for (const wake of hangWaiters.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get abandoned() {
      return abandoned;
    },
    hanging: () => (hung ? Promise.resolve() : new Promise((resolve) => hangWaiters.push(resolve))),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
