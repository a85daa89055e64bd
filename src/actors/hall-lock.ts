/**
 * One hall per root. The lock is a Linux abstract UNIX socket named after the
 * root: binding it succeeds for exactly one process, and the kernel releases
 * it when that process dies, however it dies, so a stale lock cannot exist.
 */
import { createHash } from 'node:crypto';
import net from 'node:net';

export interface HallLock {
  release(): Promise<void>;
}

export async function acquireHallLock(root: string): Promise<HallLock | null> {
  const name = `\0raider-hall-${createHash('sha256').update(root).digest('hex').slice(0, 40)}`;
  const server = net.createServer((socket) => socket.destroy());
  const ok = await new Promise<boolean>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(false) : reject(err)));
    server.listen(name, () => resolve(true));
  });
  if (!ok) return null;
  server.unref();
  return { release: () => new Promise((resolve) => server.close(() => resolve())) };
}
