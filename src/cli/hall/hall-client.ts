/**
 * Talking to a hall over its control socket: one command, one reply line;
 * or a subscription that delivers events until it is closed.
 */
import fs from 'node:fs';
import net from 'node:net';
import { onLines } from '../../adapters/os/unix-socket.js';
import { connectUnix } from '../../adapters/os/socket-path.js';

export type Reply = Record<string, unknown>;

export class HallClientError extends Error {}

function connect(socketPath: string): Promise<net.Socket> {
  if (!fs.existsSync(socketPath)) return Promise.reject(new HallClientError('Hall not running (no socket found)'));
  return new Promise((resolve, reject) => {
    const socket = connectUnix(socketPath);
    socket.once('connect', () => resolve(socket));
    socket.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new HallClientError(
          // A socket file nobody listens on is what a hall that was killed leaves behind.
          err.code === 'ECONNREFUSED' || err.code === 'ENOENT'
            ? 'Hall not running (nothing answers on its socket)'
            : `Cannot connect to ${socketPath}: ${err.message}`,
        ),
      ),
    );
  });
}

/** Sends one command and resolves with its reply. */
export async function hallCommand(socketPath: string, payload: Reply): Promise<Reply> {
  const socket = await connect(socketPath);
  return new Promise((resolve, reject) => {
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const nl = buffer.indexOf('\n');
      if (nl < 0) return;
      socket.destroy();
      try {
        resolve(JSON.parse(buffer.slice(0, nl)) as Reply);
      } catch {
        reject(new HallClientError(`Invalid reply from hall: ${buffer.slice(0, 200)}`));
      }
    });
    socket.on('close', () => reject(new HallClientError('No response from hall')));
    socket.on('error', (err) => reject(new HallClientError(`Cannot talk to ${socketPath}: ${err.message}`)));
    socket.write(`${JSON.stringify({ type: 'command', payload })}\n`);
  });
}

/** Subscribes to events whose type starts with `filter`; returns a function that ends it. */
export async function subscribe(socketPath: string, filter: string, onEvent: (event: Reply) => void, onClose: () => void): Promise<() => void> {
  const socket = await connect(socketPath);
  onLines(socket, (line) => {
    try {
      onEvent(JSON.parse(line) as Reply);
    } catch {
      /* not an event */
    }
  });
  socket.on('close', onClose);
  socket.on('error', () => socket.destroy());
  socket.write(`${JSON.stringify({ type: 'subscribe', payload: { filter } })}\n`);
  return () => socket.destroy();
}
