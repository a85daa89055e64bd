/**
 * `raider acp [DIR] [--host H --port P] [--raider NAME]`: an ACP client in the
 * terminal. Type a prompt, watch the reply and the tool calls stream, answer
 * permission questions at the keyboard; Ctrl-C cancels the turn (and leaves
 * when no turn runs).
 */
import net from 'node:net';
import { connectUnix } from '../../os/socket-path.js';
import readline from 'node:readline/promises';
import { Readable, Writable } from 'node:stream';
import {
  client,
  methods,
  ndJsonStream,
  RequestError,
  type RequestPermissionRequest,
  type SessionNotification,
} from '@agentclientprotocol/sdk';
import { acpSocketPath } from '../../adapters/acp/acp-adapter.js';
import { styleFor } from '../hall/render.js';
import { hallNotRunning } from './hall-down.js';
import { errorMessage } from '../../domain/error-message.js';
import { definedFields } from '../../domain/defined-fields.js';

/** JSON-RPC's code for a request whose parameters the agent refuses. */
const INVALID_PARAMS = -32602;

function errorText(err: unknown): string {
  return errorMessage(err);
}

export interface TerminalClientOptions {
  root: string;
  host?: string;
  port?: number;
  raider?: string;
}

export async function runTerminalClient(options: TerminalClientOptions): Promise<number> {
  const style = styleFor(process.stdout);
  const target = options.port !== undefined ? `${options.host ?? '127.0.0.1'}:${options.port}` : acpSocketPath(options.root);
  const socket = options.port !== undefined ? net.connect(options.port, options.host ?? '127.0.0.1') : connectUnix(target);
  const connected = await new Promise<string | null>((resolve) => {
    socket.once('connect', () => resolve(null));
    socket.once('error', (err) => resolve(err.message));
  });
  if (connected !== null) {
    process.stderr.write(
      options.port !== undefined ? `Cannot connect to ${target}: ${connected}\n` : `raider acp: ${hallNotRunning(options.root, target)}\n`,
    );
    return 1;
  }
  // The hall may stop at any time: then there is nobody to talk to, and the client says so and ends.
  let hallGone = false;
  const gone = new Promise<null>((resolve) =>
    socket.once('close', () => {
      hallGone = true;
      resolve(null);
    }),
  );
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  const lines = new LineSource(rl);
  let busy = false;
  const app = client({ name: 'raider-acp' })
    .onNotification(methods.client.session.update, ({ params }) => render(params, style))
    .onRequest(methods.client.session.requestPermission, async ({ params }) => askPerson(lines, params, style));
  const conn = app.connect(
    ndJsonStream(Writable.toWeb(socket) as WritableStream<Uint8Array>, Readable.toWeb(socket) as ReadableStream<Uint8Array>),
  );
  const leave = (code: number, message: string): number => {
    process.stderr.write(`raider acp: ${message}\n`);
    rl.close();
    conn.close();
    socket.destroy();
    return code;
  };
  let session: { sessionId: string };
  let protocolVersion: number;
  try {
    protocolVersion = (await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} })).protocolVersion;
    session = (await conn.agent.request('session/new', {
      cwd: process.cwd(),
      mcpServers: [],
      ...definedFields({ raiderName: options.raider }),
    })) as { sessionId: string };
  } catch (err) {
    // A session the hall refuses (an unknown --raider) is a usage error.
    return leave(err instanceof RequestError && err.code === INVALID_PARAMS ? 2 : 1, errorText(err));
  }
  process.stdout.write(
    style.dim(
      `connected to ${target} (protocol v${protocolVersion}); session ${session.sessionId}. Ctrl-C cancels a turn, /quit leaves.\n`,
    ),
  );
  rl.on('SIGINT', () => {
    if (busy) {
      process.stdout.write(style.yellow('\n(cancelling)\n'));
      void conn.agent.notify(methods.agent.session.cancel, { sessionId: session.sessionId });
    } else rl.close();
  });
  for (;;) {
    const next = await Promise.race([lines.next('acp> '), gone]);
    if (hallGone) return leave(1, `the hall closed the connection (${target}): it has stopped`);
    if (next === null) break;
    const line = next.trim();
    if (['/quit', '/exit', ':q', 'quit', 'exit'].includes(line)) break;
    if (line === '') continue;
    busy = true;
    try {
      const res = await conn.agent.request(methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: 'text', text: line }],
      });
      process.stdout.write(`\n${style.dim(`-- stopReason: ${res.stopReason}`)}\n`);
    } catch (err) {
      process.stdout.write(`\n${style.red(`error: ${errorText(err)}`)}\n`);
    } finally {
      busy = false;
    }
  }
  process.stdout.write('bye.\n');
  rl.close();
  conn.close();
  socket.destroy();
  return 0;
}

function render(params: SessionNotification, style: ReturnType<typeof styleFor>): void {
  const u = params.update as Record<string, unknown> & { sessionUpdate: string };
  switch (u.sessionUpdate) {
    case 'agent_message_chunk':
    case 'user_message_chunk': {
      const content = u.content as { text?: string } | undefined;
      if (content?.text) process.stdout.write(content.text);
      return;
    }
    case 'tool_call':
      process.stdout.write(`\n${style.cyan(`→ ${String(u.title)}`)} ${style.dim(String(u.status ?? ''))}\n`);
      return;
    case 'tool_call_update':
      if (u.status === 'completed' || u.status === 'failed') {
        const mark = u.status === 'completed' ? style.green('←') : style.red('←');
        const tool = typeof u.title === 'string' && u.title !== '' ? u.title : String(u.toolCallId);
        process.stdout.write(`${mark} ${tool} ${String(u.status)}\n`);
      }
      return;
    case 'current_mode_update':
      process.stdout.write(style.dim(`(mode: ${String(u.currentModeId)})\n`));
      return;
    default:
      return;
  }
}

/**
 * Lines typed (or piped) in, read one at a time: lines that arrive before
 * anybody asks are kept, so piped input is never lost.
 */
class LineSource {
  private readonly lines: AsyncIterator<string>;

  constructor(rl: readline.Interface) {
    this.lines = rl[Symbol.asyncIterator]();
  }

  async next(prompt: string): Promise<string | null> {
    if (process.stdin.isTTY) process.stdout.write(prompt);
    const result = await this.lines.next();
    return result.done ? null : result.value;
  }
}

async function askPerson(lines: LineSource, params: RequestPermissionRequest, style: ReturnType<typeof styleFor>) {
  const title = String((params.toolCall as { title?: unknown }).title ?? 'a tool call');
  process.stdout.write(`\n${style.yellow(`The raider asks to run: ${title}`)}\n`);
  for (const [i, o] of params.options.entries()) process.stdout.write(`  ${i + 1}) ${o.name}\n`);
  const answer = ((await lines.next('choose: ')) ?? '').trim();
  const option = params.options[Number(answer) - 1];
  if (!option) return { outcome: { outcome: 'cancelled' as const } };
  return { outcome: { outcome: 'selected' as const, optionId: option.optionId } };
}
