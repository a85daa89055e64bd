/** Small things every UNIX-socket user of the hall needs: is someone there, and its lines. */
import { connectUnix } from './socket-path.js';
import type { Readable } from 'node:stream';

/** True when something accepts a connection on the socket. */
export function socketAnswers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectUnix(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Calls `onLine` with every complete line the socket (or a child's pipe) delivers, however the bytes are split. */
export function onLines(socket: Readable, onLine: (line: string) => void): void {
  let buffer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      onLine(line);
    }
  });
}
