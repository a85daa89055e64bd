/**
 * The control socket `.raider-hall.socket` (mode 0600): one JSON object per
 * line in, one line of JSON with sorted keys out for every command, in the
 * order the commands came. `subscribe` frames join the event bus. Nothing a
 * client sends can take the hall down.
 */
import net from 'node:net';
import stringify from 'safe-stable-stringify';
import { describeLineFault, LineReader } from '../../protocol/line-reader.js';
import type { EventBus } from './event-bus.js';
import { listenUnix, type UnixListener } from '../os/socket-path.js';
import type { Reply } from './queries.js';

export type CommandHandler = (payload: Record<string, unknown>) => Reply | Promise<Reply>;

export interface ControlSocketOptions {
  socketPath: string;
  commands: Readonly<Record<string, CommandHandler>>;
  bus: EventBus;
  warn: (message: string) => void;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class ControlSocket {
  private readonly server: net.Server;
  private readonly connections = new Set<net.Socket>();
  private listener: UnixListener | null = null;

  constructor(private readonly options: ControlSocketOptions) {
    // Half-open: a client may send its frames and close its side; it still gets every reply.
    this.server = net.createServer({ allowHalfOpen: true }, (socket) => this.serve(socket));
    this.server.on('error', (err) => options.warn(`control socket: ${err.message}`));
  }

  async listen(): Promise<void> {
    this.listener = await listenUnix(this.server, this.options.socketPath);
  }

  /** Stops accepting, closes every connection, removes the socket file. */
  async close(): Promise<void> {
    for (const socket of this.connections) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.listener?.remove();
  }

  private serve(socket: net.Socket): void {
    this.connections.add(socket);
    const reader = new LineReader();
    // Replies leave in the order their commands came, whenever each is ready.
    let chain: Promise<void> = Promise.resolve();
    let unsubscribe: Array<() => void> = [];
    const write = (reply: Reply) => {
      if (!socket.destroyed && socket.writable) socket.write(`${stringify(reply)}\n`);
    };
    const queueReply = (reply: Reply | Promise<Reply>) => {
      const ready = Promise.resolve(reply).catch((err: Error) => ({ error: `command failed: ${err.message}` }));
      chain = chain.then(async () => write(await ready));
    };
    socket.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        if (!('line' in frame)) {
          queueReply({ error: describeLineFault(frame, 'frame') });
          continue;
        }
        if (frame.line.trim() === '') continue;
        const outcome = this.handle(frame.line, socket);
        if (outcome === 'subscribed') continue;
        if (typeof outcome === 'function') {
          unsubscribe.push(outcome);
          continue;
        }
        queueReply(outcome);
      }
    });
    const cleanup = () => {
      this.connections.delete(socket);
      for (const off of unsubscribe) off();
      unsubscribe = [];
    };
    socket.on('end', () => {
      // The client is done sending: answer what it sent, then close our side.
      // A subscriber that has nothing more to say still gets its events.
      chain = chain.then(() => {
        if (!socket.destroyed && unsubscribe.length === 0) socket.end();
      });
    });
    socket.on('close', cleanup);
    socket.on('error', () => socket.destroy());
  }

  /** A reply, or the unsubscribe function of a new subscription. */
  private handle(line: string, socket: net.Socket): Reply | Promise<Reply> | (() => void) | 'subscribed' {
    let frame: unknown;
    try {
      frame = JSON.parse(line);
    } catch (err) {
      return { error: `invalid JSON: ${(err as Error).message}` };
    }
    if (!isObject(frame)) return { error: 'invalid frame: expected a JSON object with type and payload' };
    const type = frame.type;
    const payload = frame.payload === undefined || frame.payload === null ? {} : frame.payload;
    if (!isObject(payload)) return { error: 'invalid frame: payload must be a JSON object' };
    if (type === 'subscribe') {
      const filter = payload.filter === undefined || payload.filter === null ? '' : payload.filter;
      if (typeof filter !== 'string') return { error: 'subscribe: filter must be a string' };
      return this.options.bus.subscribe({
        filter,
        deliver: (text) => {
          if (!socket.destroyed) socket.write(text);
        },
        backlog: () => socket.writableLength,
        // The bus has logged why.
        drop: () => socket.destroy(),
      });
    }
    if (type !== 'command') return { error: `unknown message type: ${typeof type === 'string' ? type : ''}` };
    const cmd = payload.cmd;
    const handler = typeof cmd === 'string' && Object.hasOwn(this.options.commands, cmd) ? this.options.commands[cmd] : undefined;
    if (!handler) return { error: `unknown command: ${typeof cmd === 'string' ? cmd : ''}` };
    try {
      return handler(payload);
    } catch (err) {
      return { error: `command failed: ${(err as Error).message}` };
    }
  }
}
