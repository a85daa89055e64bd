/**
 * `raider hall start --daemon` tells the truth: it returns once the hall
 * serves or has failed, with the hall's own error; config warnings reach its
 * terminal; the hall logs its events to .raider-hall/hall.log; a refused
 * second start leaves that log alone.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { alive, eventually, hall, hallRoot, pidFileOf, removeRoots, socketOf, spawned } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const CONFIG = 'raiders: { bjorn: {} }\n';

function hallLog(root: string): string {
  return path.join(root, '.raider-hall', 'hall.log');
}

/** The pid of `Hall started with PID N`, or null. */
function startedPid(stdout: string): number | null {
  const m = /^Hall started with PID (\d+)\n$/.exec(stdout);
  return m ? Number(m[1]) : null;
}

/** Runs `body` with a TCP port that something else listens on. */
async function withBusyPort(body: (port: number) => Promise<void>): Promise<void> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  try {
    await body(address.port);
  } finally {
    server.close();
  }
}

function nothingLeft(root: string): void {
  expect(fs.existsSync(pidFileOf(root))).toBe(false);
  expect(fs.lstatSync(socketOf(root), { throwIfNoEntry: false })?.isSocket() ?? false).toBe(false);
}

describe.concurrent('raider hall start --daemon', () => {
  it('exits 1 when a face it was asked for cannot serve (a busy ACP port); status says so', async () => {
    const root = hallRoot(CONFIG);
    await withBusyPort(async (port) => {
      const started = await hall(['start', '--daemon', '--acp-port', String(port)], root);
      const pid = startedPid(started.stdout);
      try {
        expect(started.code, started.stderr).toBe(1);
        expect(pid, started.stdout).not.toBeNull();
        // Said once, in one wording: what, where, why and where the port came from; then what to do.
        expect(started.stderr).toBe(
          `acp: cannot serve: cannot listen on 127.0.0.1:${port}: another program listens there (EADDRINUSE) (the port from --acp-port)\n` +
            `The hall runs without acp; stop it with: raider hall stop ${root}\n`,
        );
        const log = fs.readFileSync(hallLog(root), 'utf8');
        expect(log.split(`127.0.0.1:${port}`)).toHaveLength(2);

        const status = await hall(['status', '--json'], root);
        expect(JSON.parse(status.stdout)).toMatchObject({ face_errors: { acp: expect.stringContaining(`127.0.0.1:${port}`) } });
        const human = await hall(['status'], root);
        expect(human.stdout).toContain(`acp: not serving: cannot listen on 127.0.0.1:${port}`);
        expect((await hall(['stop'], root)).code).toBe(0);
      } finally {
        if (pid !== null && alive(pid)) process.kill(pid, 'SIGKILL');
      }
    });
  });

  it('fails with the hall’s own error when the state directory is broken', async () => {
    const root = hallRoot(CONFIG);
    fs.mkdirSync(path.join(root, '.raider-hall'));
    fs.writeFileSync(path.join(root, '.raider-hall', 'state'), 'not a directory\n');
    const started = await hall(['start', '--daemon'], root);
    expect(started.code).not.toBe(0);
    expect(started.stdout).toBe('');
    expect(started.stderr).toContain(path.join(root, '.raider-hall', 'state'));
    nothingLeft(root);
  });

  it('fails with the hall’s own error when the control socket cannot be bound', async () => {
    const root = hallRoot(CONFIG);
    fs.mkdirSync(socketOf(root));
    fs.writeFileSync(path.join(socketOf(root), 'keep'), 'ours\n');
    const started = await hall(['start', '--daemon'], root);
    expect(started.code).not.toBe(0);
    expect(started.stdout).toBe('');
    expect(started.stderr).toContain('.raider-hall.socket');
    expect(fs.existsSync(pidFileOf(root))).toBe(false);
    expect(fs.readFileSync(path.join(socketOf(root), 'keep'), 'utf8')).toBe('ours\n');
  });

  it('shows config warnings, logs events to hall.log, and a refused second start leaves the log alone', async () => {
    const root = hallRoot(`${CONFIG}bogus_key: 1\n`);
    const started = await hall(['start', '--daemon'], root);
    const pid = startedPid(started.stdout);
    try {
      expect(started.code, started.stderr).toBe(0);
      expect(started.stderr).toContain('unknown key bogus_key');
      expect(fs.readFileSync(hallLog(root), 'utf8')).toContain('unknown key bogus_key');
      // Nobody has a Ctrl-C to press for a daemon.
      expect(fs.readFileSync(hallLog(root), 'utf8')).toContain(`Stop it with: raider hall stop ${root}\n`);
      expect(fs.readFileSync(hallLog(root), 'utf8')).not.toContain('Ctrl-C');

      const spawn = await hall(['spawn', 'bjorn', 'answer done'], root);
      const { id } = spawned(spawn.stdout);
      // The run's events, as the foreground prints them, reach the log up to its end.
      await eventually(() => expect(fs.readFileSync(hallLog(root), 'utf8')).toMatch(new RegExp(`${id}.*completed`)), 60_000, 20);
      const before = fs.readFileSync(hallLog(root), 'utf8');

      const again = await hall(['start', '--daemon'], root);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`Hall already running with PID ${pid}`);
      expect(again.stderr).toContain('unknown key bogus_key');
      expect(fs.readFileSync(hallLog(root), 'utf8')).toBe(before);
      expect((await hall(['stop'], root)).code).toBe(0);
    } finally {
      if (pid !== null && alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});
