/**
 * `raider hall stop` signals only this root's hall: a pid file whose process
 * is gone, or whose pid now belongs to an unrelated process, is reported as
 * stale and removed, and nothing is signalled. A client command after a
 * `kill -9` of the hall says the hall is not running (issue 14, item 2).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { alive, hall, hallRoot, pidFileOf, removeRoots, socketOf, startHallProcess } from './cli-helpers.js';
import { hallRootOfArgv } from '../../src/cli/hall/hall-pid.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const CONFIG = 'raiders: { bjorn: {} }\n';

/** A pid that no process has: one of a child that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = spawn('true');
  await new Promise((resolve) => child.on('close', resolve));
  return child.pid ?? 0;
}

describe.concurrent('raider hall stop with a pid file that is not this hall', () => {
  it('a pid of a process that is gone: stale, removed, exit 1', async () => {
    const root = hallRoot(CONFIG);
    fs.writeFileSync(pidFileOf(root), `${await deadPid()}\n`);
    const stop = await hall(['stop'], root);
    expect(stop.code).toBe(1);
    expect(stop.stdout).toBe('');
    expect(stop.stderr).toMatch(/^Hall not running \(stale pid file removed/);
    expect(fs.existsSync(pidFileOf(root))).toBe(false);
  });

  it('a pid reused by an unrelated process: never signalled', async () => {
    const root = hallRoot(CONFIG);
    const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
    const pid = sleeper.pid ?? 0;
    try {
      fs.writeFileSync(pidFileOf(root), `${pid}\n`);
      const stop = await hall(['stop'], root);
      expect(stop.code).toBe(1);
      expect(stop.stderr).toMatch(/^Hall not running \(stale pid file removed/);
      expect(fs.existsSync(pidFileOf(root))).toBe(false);
      expect(sleeper.exitCode).toBeNull();
      expect(sleeper.signalCode).toBeNull();
      expect(alive(pid)).toBe(true);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it("another root's hall is not this root's hall", async () => {
    const root = hallRoot(CONFIG);
    const other = await startHallProcess(hallRoot(CONFIG));
    try {
      fs.writeFileSync(pidFileOf(root), `${other.child.pid}\n`);
      const stop = await hall(['stop'], root);
      expect(stop.code).toBe(1);
      expect(stop.stderr).toMatch(/^Hall not running \(stale pid file removed/);
      expect(alive(other.child.pid ?? 0)).toBe(true);
    } finally {
      await other.stop();
    }
  });
});

describe.concurrent('a hall killed with SIGKILL', () => {
  it('status and stop say the hall is not running, without a connect error', async () => {
    const root = hallRoot(CONFIG);
    const h = await startHallProcess(root);
    h.child.kill('SIGKILL');
    await h.exited;
    // What a kill -9 leaves: the socket file and the pid file.
    expect(fs.existsSync(socketOf(root))).toBe(true);
    expect(fs.existsSync(pidFileOf(root))).toBe(true);
    const [status, ps] = await Promise.all([hall(['status'], root), hall(['ps'], root)]);
    for (const r of [status, ps]) {
      expect(r).toMatchObject({ code: 1, stdout: '' });
      expect(r.stderr).toMatch(/^Hall not running/);
      expect(r.stderr).not.toContain('ECONNREFUSED');
    }
    const stop = await hall(['stop'], root);
    expect(stop.code).toBe(1);
    expect(stop.stderr).toMatch(/^Hall not running \(stale pid file removed/);
    expect(fs.existsSync(pidFileOf(root))).toBe(false);
  });
});

describe('which root a hall command line runs', () => {
  it('reads DIR after hall start or demo, resolved against the working directory', () => {
    expect(hallRootOfArgv(['node', '/x/bin/raider', 'hall', 'start', '/r', '--quiet'], '/c')).toBe('/r');
    expect(hallRootOfArgv(['node', 'raider', 'hall', 'start', '--acp-port', '7', 'sub'], '/c')).toBe('/c/sub');
    expect(hallRootOfArgv(['node', 'raider', 'hall', 'start', '--daemon'], '/c')).toBe('/c');
    expect(hallRootOfArgv(['node', 'raider', 'demo'], '/c')).toBe('/c/demo-hall');
    expect(hallRootOfArgv(['sleep', '300'], '/c')).toBeNull();
  });
});
