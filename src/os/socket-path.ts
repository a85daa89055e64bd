/**
 * UNIX socket paths of any length. The kernel takes at most 107 bytes (and
 * Node silently cuts a longer path, so it would bind or reach the wrong
 * file). A hall socket whose path fits lives where its name says; a longer
 * one lives in a short private runtime directory (`$XDG_RUNTIME_DIR` or the
 * temp directory, `raider-hall-UID/HASH-OF-ROOT`, mode 0700) and its public
 * path is a symlink to it. Clients connect through `connectUnix`, which
 * follows that link when the public path is too long to connect to.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { errorMessage } from '../domain/error-message.js';

/** sun_path holds 108 bytes, its terminating NUL included. */
export const SOCKET_PATH_MAX = 107;

export class SocketPathError extends Error {}

export function fitsSocketPath(p: string): boolean {
  return Buffer.byteLength(p) <= SOCKET_PATH_MAX;
}

/** The path to connect to for `socketPath`: itself when it fits, else where its link points. */
export function reachableSocketPath(socketPath: string): string {
  if (fitsSocketPath(socketPath)) return socketPath;
  let target: string;
  try {
    target = fs.realpathSync(socketPath);
  } catch (err) {
    throw new SocketPathError(`no socket at ${socketPath}: ${errorMessage(err)}`);
  }
  if (!fitsSocketPath(target))
    throw new SocketPathError(`socket path too long to connect to (${SOCKET_PATH_MAX} bytes at most): ${target}`);
  return target;
}

/** `net.connect(socketPath)` for a path of any length; a path that cannot be reached fails as a socket 'error'. */
export function connectUnix(socketPath: string): net.Socket {
  try {
    return net.connect(reachableSocketPath(socketPath));
  } catch (err) {
    const socket = new net.Socket();
    process.nextTick(() => socket.destroy(err instanceof Error ? err : new Error(String(err))));
    return socket;
  }
}

/**
 * The private directory for the sockets of the hall in `root` that do not
 * fit under the root: created mode 0700, and refused when someone else owns
 * it or can read it.
 */
export function runtimeDirFor(root: string, env: Readonly<Record<string, string | undefined>> = process.env): string {
  const uid = process.getuid?.() ?? 0;
  const hash = createHash('sha256').update(path.resolve(root)).digest('hex').slice(0, 16);
  // Room for the longest socket name the hall makes in it.
  const room = '/raider-hall-4294967295/0123456789abcdef/.raider-hall.acp.socket'.length;
  const bases = [env.XDG_RUNTIME_DIR, os.tmpdir(), '/tmp'].filter(
    (base): base is string => base !== undefined && path.isAbsolute(base) && fitsSocketPath(base + ' '.repeat(room)),
  );
  const base = bases.find((b) => fs.statSync(b, { throwIfNoEntry: false })?.isDirectory());
  if (base === undefined)
    throw new SocketPathError('no short directory for the hall sockets: set XDG_RUNTIME_DIR or TMPDIR to a short existing directory');
  const userDir = path.join(base, `raider-hall-${uid}`);
  privateDir(userDir, uid);
  const dir = path.join(userDir, hash);
  privateDir(dir, uid);
  return dir;
}

function privateDir(dir: string, uid: number): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = fs.lstatSync(dir);
  if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o077) !== 0) {
    throw new SocketPathError(`${dir} is not a private directory of this user (mode 0700): the hall will not put its sockets there`);
  }
}

/** A socket being served: `close` removes what `listenUnix` made. */
export interface UnixListener {
  /** Where the socket really is (a path that fits). */
  readonly boundPath: string;
  /** Removes the socket, its link and an emptied runtime directory; the server is the caller's to close. */
  remove(): void;
}

/**
 * Listens on `socketPath` (mode 0600, a stale file there is removed: the
 * caller holds the hall's lock). A path too long to bind becomes a link to
 * a socket in the runtime directory of its directory.
 */
export async function listenUnix(server: net.Server, socketPath: string): Promise<UnixListener> {
  const linked = !fitsSocketPath(socketPath);
  const boundPath = linked ? path.join(runtimeDirFor(path.dirname(socketPath)), path.basename(socketPath)) : socketPath;
  fs.rmSync(socketPath, { force: true });
  if (linked) fs.rmSync(boundPath, { force: true });
  const previous = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(boundPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(previous);
  }
  fs.chmodSync(boundPath, 0o600);
  if (linked) fs.symlinkSync(boundPath, socketPath);
  return {
    boundPath,
    remove: () => {
      if (linked) {
        if (linksTo(socketPath, boundPath)) fs.rmSync(socketPath, { force: true });
        fs.rmSync(boundPath, { force: true });
        removeIfEmpty(path.dirname(boundPath));
      } else {
        fs.rmSync(socketPath, { force: true });
      }
    },
  };
}

function linksTo(link: string, target: string): boolean {
  try {
    return fs.readlinkSync(link) === target;
  } catch {
    return false;
  }
}

/** Removes a directory that nothing uses any more; one still in use stays. */
export function removeIfEmpty(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    /* not empty (another socket of the hall is still there) or already gone */
  }
}
