/** Small things every UNIX-socket user of the hall needs: is someone there, and its lines. */
import { connectUnix } from '../../os/socket-path.js';
import type { Readable } from 'node:stream';
import { MAX_MESSAGE_BYTES, readLines, type ReadLinesOptions } from '../../protocol/line-reader.js';

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

/**
 * Calls `onLine` with every complete line the socket (or a child's pipe)
 * delivers, however the bytes are split. Lines are capped (by default at
 * the size of a message the hall writes); a longer one is skipped and told
 * to `onFault`. Bytes that are not UTF-8 are replaced.
 */
export function onLines(socket: Readable, onLine: (line: string) => void, options: ReadLinesOptions = {}): void {
  readLines(socket, onLine, { maxBytes: MAX_MESSAGE_BYTES, utf8: 'replace', ...options });
}
