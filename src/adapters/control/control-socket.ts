/**
 * The control socket `.raider-hall.socket` (mode 0600): one JSON object per
 * line in, one line of JSON with sorted keys out for every command, in the
 * order the commands came. `subscribe` frames join the event bus. Nothing a
 * client sends can take the hall down.
 */
import net from 'node:net';
import { canonicalJson } from '../../protocol/canonical-json.js';
import { runCommand, type CommandHandlers } from '../../protocol/command-service.js';
import { parseFrame } from '../../protocol/frames.js';
import { describeLineFault, LineReader } from '../../protocol/line-reader.js';
import type { Reply } from '../../protocol/replies.js';
import type { EventBus } from '../../ports/bus.js';
import { listenUnix, type UnixListener } from '../../os/socket-path.js';

export interface ControlSocketOptions {
  socketPath: string;
  commands: Readonly<CommandHandlers>;
  bus: EventBus;
  warn: (message: string) => void;
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
      if (!socket.destroyed && socket.writable) socket.write(`${canonicalJson(reply)}\n`);
    };
    const queueReply = (reply: Reply | Promise<Reply>) => {
      const ready = Promise.resolve(reply);
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
  private handle(line: string, socket: net.Socket): Reply | Promise<Reply> | (() => void) {
    const frame = parseFrame(line);
    switch (frame.kind) {
      case 'error':
        return { error: frame.error };
      case 'command':
        return runCommand(this.options.commands, frame.cmd, frame.body);
      case 'subscribe':
        return this.options.bus.subscribe({
          filter: frame.filter,
          deliver: (text) => {
            if (!socket.destroyed) socket.write(text);
          },
          backlog: () => socket.writableLength,
          // The bus has logged why.
          drop: () => socket.destroy(),
        });
    }
  }
}
