/**
 * A hall whose root is too long for a UNIX socket path (107 bytes): its
 * sockets live in a short runtime directory and the root's socket names are
 * links to them; every client follows them; nothing stays behind.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runtimeDirFor } from '../../src/os/socket-path.js';
import { socketAnswers } from '../../src/adapters/os/unix-socket.js';
import { connectStdio } from '../mcp/mcp-support.js';
import { alive, eventually, eventsFile, hall, hallRoot, removeRoots, runCli, spawned } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

/** A directory under a fresh temp root (`base`) whose path is exactly `length` characters. */
function longRoot(length: number, config: string): { base: string; root: string } {
  const base = hallRoot();
  let root = base;
  while (root.length < length) root = path.join(root, 'x'.repeat(Math.min(60, length - root.length - 1)));
  fs.mkdirSync(root, { recursive: true });
  fs.writeFileSync(path.join(root, '.raider-hall.yml'), config);
  return { base, root };
}

/** Every socket and symlink under `dir`, at any depth (a cut socket path would leave one in an ancestor). */
function socketsUnder(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((p) => {
    const stat = fs.lstatSync(path.join(dir, p));
    return stat.isSocket() || stat.isSymbolicLink();
  });
}

describe('a hall in a 200-character root', () => {
  it('starts --daemon, serves every socket through its link, runs a mission, and stops leaving nothing behind', async () => {
    const { base, root } = longRoot(200, 'raiders: { bjorn: {} }\nmcp: { enable: true }\n');
    expect(root.length).toBe(200);
    const started = await hall(['start', '--daemon'], root);
    expect(started, started.stderr).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Hall started with PID \d+\n$/) });
    const pid = Number(/PID (\d+)/.exec(started.stdout)?.[1]);
    const runtime = runtimeDirFor(root);
    try {
      for (const name of ['.raider-hall.socket', '.raider-hall.mcp', '.raider-hall.acp.socket']) {
        const link = path.join(root, name);
        expect(fs.lstatSync(link).isSymbolicLink(), name).toBe(true);
        expect(fs.readlinkSync(link)).toBe(path.join(runtime, name));
        expect(await socketAnswers(link), name).toBe(true);
      }
      expect((fs.statSync(runtime).mode & 0o777).toString(8)).toBe('700');

      const spawn = await hall(['spawn', 'bjorn', 'argv'], root);
      expect(spawn, spawn.stderr).toMatchObject({ code: 0 });
      const { id } = spawned(spawn.stdout);
      // The raider got a socket path it can connect to.
      const result = await eventually(
        () => {
          const line = fs
            .readFileSync(eventsFile(root, id), 'utf8')
            .split('\n')
            .find((l) => l.includes('"run.finished"'));
          expect(line).toBeDefined();
          return JSON.parse(JSON.parse(line ?? '{}').response) as { env: Record<string, string> };
        },
        60_000,
        20,
      );
      expect(result.env.RAIDER_HALL_SOCKET).toBe(path.join(runtime, '.raider-hall.socket'));

      // The MCP stdio bridge and the ACP terminal client reach the hall through the links too.
      const mcp = await connectStdio(root);
      try {
        expect((await mcp.call('hall_status')).json).toMatchObject({ root });
      } finally {
        await mcp.close();
      }
      const acp = await runCli(['acp', root], { input: 'answer through the link\n' });
      expect(acp.stdout, acp.stderr).toContain('through the link');

      const status = await hall(['status', '--json'], root);
      expect(status, status.stderr).toMatchObject({ code: 0 });
      expect(JSON.parse(status.stdout)).toMatchObject({ root, mcp: { listening: true } });

      const stop = await hall(['stop'], root);
      expect(stop, stop.stderr).toMatchObject({ code: 0 });
      expect(alive(pid)).toBe(false);
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
    // No socket, link or truncated name anywhere from the temp root down, and no runtime directory.
    expect(socketsUnder(base)).toEqual([]);
    expect(fs.existsSync(runtime)).toBe(false);
  });

  it('start refuses with exit 3 when there is no private short directory for its sockets', async () => {
    const { base, root } = longRoot(200, 'raiders: { bjorn: {} }\n');
    // A runtime directory that others may read: the hall will not put its sockets there.
    const runtime = hallRoot(undefined, 'xdg-');
    const shared = path.join(runtime, `raider-hall-${process.getuid?.() ?? 0}`);
    fs.mkdirSync(shared);
    fs.chmodSync(shared, 0o755);
    const started = await hall(['start', '--daemon'], root, { env: { XDG_RUNTIME_DIR: runtime } });
    expect(started.code, started.stderr).toBe(3);
    expect(started.stdout).toBe('');
    expect(started.stderr).toContain(`Cannot serve ${path.join(root, '.raider-hall.socket')}`);
    expect(started.stderr).toContain('not a private directory');
    expect(fs.existsSync(path.join(root, '.raider-hall.pid'))).toBe(false);
    expect(socketsUnder(base)).toEqual([]);
  });
});
