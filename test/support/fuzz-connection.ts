/**
 * One fuzzing connection to the control socket, shared by the fuzz test and
 * the fuzz bench: writes a stream of frames in random pieces (now and then
 * yielding to the event loop), collects the reply lines until `want` are in,
 * then listens a little longer, so a second reply to any line would show.
 */
import net from 'node:net';
import { onLines } from '../../src/adapters/os/unix-socket.js';
import type { Rng } from './prng.js';

/** How long to keep listening after the last expected reply. */
const LINGER_MS = 300;

export function fuzzConnection(socketPath: string, stream: Buffer, want: number, rng: Rng, timeoutMs: number): Promise<string[]> {
  const pieces: Buffer[] = [];
  for (let at = 0; at < stream.length; ) {
    const size = rng.pick([1, 2, 3, 7, 64, 512, 4096, 65_536]) * (1 + rng.int(3));
    pieces.push(stream.subarray(at, at + size));
    at += size;
  }
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    const lines: string[] = [];
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        socket.destroy();
        reject(err);
        return;
      }
      setTimeout(() => {
        socket.destroy();
        resolve(lines);
      }, LINGER_MS);
    };
    const timer = setTimeout(() => finish(new Error(`no end after ${timeoutMs} ms: ${lines.length}/${want} replies`)), timeoutMs);
    onLines(socket, (line) => {
      lines.push(line);
      if (lines.length >= want) finish();
    });
    socket.on('error', (err) => finish(err));
    socket.on('close', () => finish(new Error(`the hall closed the connection after ${lines.length}/${want} replies`)));
    socket.on('connect', async () => {
      for (const piece of pieces) {
        if (socket.destroyed) return;
        if (!socket.write(piece)) await new Promise((r) => socket.once('drain', r));
        if (rng.chance(0.02)) await new Promise((r) => setImmediate(r));
      }
    });
  });
}
