/**
 * Fake model servers on loopback for the engine tests: one that speaks the
 * OpenAI chat-completions streaming format (`POST /v1/chat/completions`,
 * server-sent `data:` chunks, `[DONE]`) and one that speaks the Anthropic
 * messages streaming format (`POST /v1/messages`, named SSE events). Each
 * request takes the next scripted reply; every request body is kept so a
 * test can check what the raider sent (system prompt, tools, tool results).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeDialect = 'openai' | 'anthropic';

export interface FakeToolCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Sent instead of the JSON of `arguments`, to play a model that writes broken JSON. */
  raw?: string;
}

export interface FakeReply {
  /** Assistant text, streamed in a few pieces. */
  text?: string;
  /** Tool calls after the text. */
  tools?: FakeToolCall[];
  /** Wait this long after the headers before the first chunk. */
  delayMs?: number;
  /** Send the headers and then nothing, until the client goes away. */
  hang?: boolean;
  /** Answer with this HTTP status and an error body instead of a stream. */
  status?: number;
}

export interface FakeRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export interface FakeLlm {
  /** Base URL including `/v1`, as OPENAI_BASE_URL or `-o url=` want it. */
  url: string;
  requests: FakeRequest[];
  /** Resolves when a request has come in whose reply hangs or is delayed. */
  waiting(): Promise<void>;
  /** How many requests were cut off by the client (aborted). */
  aborted: number;
  close(): Promise<void>;
}

const FALLBACK: FakeReply = { text: 'the fake model has no more replies' };

export async function startFakeLlm(dialect: FakeDialect, replies: FakeReply[]): Promise<FakeLlm> {
  const queue = [...replies];
  const requests: FakeRequest[] = [];
  let wake: (() => void) | undefined;
  let waitingSeen = false;
  const sockets = new Set<import('node:net').Socket>();
  const state = { aborted: 0 };

  const server: Server = createServer((req, res) => {
    void handle(req, res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      // keep {} — the test will see it
    }
    requests.push({ path: req.url ?? '', headers: req.headers, body });
    const want = dialect === 'openai' ? '/v1/chat/completions' : '/v1/messages';
    if (req.method !== 'POST' || req.url !== want) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
      return;
    }
    const reply = queue.shift() ?? FALLBACK;
    res.on('close', () => {
      if (!res.writableFinished) state.aborted++;
    });
    if (reply.status !== undefined) {
      const error =
        dialect === 'openai'
          ? { error: { message: `fake failure ${reply.status}`, type: 'server_error' } }
          : { type: 'error', error: { type: 'api_error', message: `fake failure ${reply.status}` } };
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(error));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    if (reply.hang || reply.delayMs) {
      waitingSeen = true;
      wake?.();
    }
    if (reply.hang) return; // the client's abort closes it
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (res.destroyed) return;
    const model = typeof body.model === 'string' ? body.model : 'fake';
    for (const frame of dialect === 'openai' ? openAiFrames(reply, model) : anthropicFrames(reply, model)) res.write(frame);
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get aborted() {
      return state.aborted;
    },
    waiting: () =>
      waitingSeen
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            wake = resolve;
          }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Text in three pieces, so the client really assembles a stream. */
function pieces(text: string): string[] {
  const n = Math.ceil(text.length / 3) || 1;
  const out: string[] = [];
  for (let i = 0; i < text.length; i += n) out.push(text.slice(i, i + n));
  return out;
}

function openAiFrames(reply: FakeReply, model: string): string[] {
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const frames = [chunk({ role: 'assistant', content: '' })];
  for (const p of pieces(reply.text ?? '')) frames.push(chunk({ content: p }));
  (reply.tools ?? []).forEach((t, index) => {
    const args = t.raw ?? JSON.stringify(t.arguments);
    const half = Math.floor(args.length / 2);
    frames.push(
      chunk({ tool_calls: [{ index, id: `call_${index}`, type: 'function', function: { name: t.name, arguments: args.slice(0, half) } }] }),
    );
    frames.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }));
  });
  frames.push(chunk({}, reply.tools?.length ? 'tool_calls' : 'stop'));
  frames.push(
    `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`,
  );
  frames.push('data: [DONE]\n\n');
  return frames;
}

/** The SSE frames of one Anthropic messages reply; test/support/anthropic-stand-in.ts streams them to Claude Code too. */
export function anthropicFrames(reply: FakeReply, model: string): string[] {
  const ev = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const frames = [
    ev('message_start', {
      message: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        content: [],
        model,
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    }),
  ];
  let index = 0;
  if (reply.text) {
    frames.push(ev('content_block_start', { index, content_block: { type: 'text', text: '' } }));
    for (const p of pieces(reply.text)) frames.push(ev('content_block_delta', { index, delta: { type: 'text_delta', text: p } }));
    frames.push(ev('content_block_stop', { index }));
    index++;
  }
  for (const t of reply.tools ?? []) {
    const args = t.raw ?? JSON.stringify(t.arguments);
    const half = Math.floor(args.length / 2);
    frames.push(ev('content_block_start', { index, content_block: { type: 'tool_use', id: `toolu_${index}`, name: t.name, input: {} } }));
    frames.push(ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: args.slice(0, half) } }));
    frames.push(ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: args.slice(half) } }));
    frames.push(ev('content_block_stop', { index }));
    index++;
  }
  frames.push(
    ev('message_delta', {
      delta: { stop_reason: reply.tools?.length ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: 5 },
    }),
  );
  frames.push(ev('message_stop', {}));
  return frames;
}
