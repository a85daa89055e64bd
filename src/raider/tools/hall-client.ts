/**
 * One command to the hall's control socket (hall-reference §2.3): a fresh
 * connection per call, one `{"type":"command","payload":{...}}` line out,
 * one line back. Transport problems come back as the reference's texts.
 */
import { connect } from 'node:net';
import { errorMessage } from '../errors.js';

export class HallError extends Error {}

const TIMEOUT_MS = 30_000;

export function hallRequest(
  socketPath: string,
  payload: Record<string, unknown>,
  signal: AbortSignal,
  timeoutMs: number = TIMEOUT_MS,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let connected = false;
    let done = false;
    const socket = connect(socketPath);
    const finish = (err: Error | undefined, value?: Record<string, unknown>): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      if (err) reject(err);
      else resolve(value!);
    };
    const onAbort = (): void => finish(new HallError('cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => finish(new HallError('no response from hall')), timeoutMs);
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      connected = true;
      socket.write(`${JSON.stringify({ type: 'command', payload })}\n`);
    });
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const nl = buffer.indexOf('\n');
      if (nl < 0) return;
      const line = buffer.slice(0, nl);
      let reply: unknown;
      try {
        reply = JSON.parse(line);
      } catch (err) {
        return finish(new HallError(`invalid hall response: ${errorMessage(err)}`));
      }
      if (!reply || typeof reply !== 'object' || Array.isArray(reply)) return finish(new HallError(`invalid hall response: ${line.slice(0, 200)}`));
      finish(undefined, reply as Record<string, unknown>);
    });
    socket.on('error', (err) => {
      finish(new HallError(connected ? `no response from hall: ${errorMessage(err)}` : `cannot connect to hall socket ${socketPath}: ${errorMessage(err)}`));
    });
    socket.on('close', () => finish(new HallError('no response from hall')));
  });
}
