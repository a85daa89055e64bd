/**
 * `raider hall stop` signals only this root's hall: a pid file whose process
 * is gone, or whose pid now belongs to an unrelated process, is reported as
 * stale and removed, and nothing is signalled. A client command after a
 * `kill -9` of the hall says the hall is not running. No hall to stop is
 * exit 0, as `systemctl stop` of a stopped unit: the caller's wish holds.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { alive, hall, hallRoot, pidFileOf, removeRoots, socketOf, startHallProcess } from './cli-helpers.js';
import { hallRootOfArgv } from '../../src/cli/hall/hall-pid.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const CONFIG = 'raiders: { bjorn: {} }\n';

const died = (root: string, pid: number) =>
  `No hall runs in ${root}: the hall (PID ${pid}) died without stopping; its stale pid file was removed.\n`;
const notThisHall = (root: string, pid: number) =>
  `No hall runs in ${root}: its pid file named PID ${pid}, which is not this hall; the stale pid file was removed.\n`;

/** A pid that no process has: one of a child that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = spawn('true');
  await new Promise((resolve) => child.on('close', resolve));
  return child.pid ?? 0;
}

describe.concurrent('raider hall stop with a pid file that is not this hall', () => {
  it('a pid of a process that is gone: the hall died, its pid file is removed, exit 0', async () => {
    const root = hallRoot(CONFIG);
    const pid = await deadPid();
    fs.writeFileSync(pidFileOf(root), `${pid}\n`);
    const stop = await hall(['stop'], root);
    expect(stop).toMatchObject({ code: 0, stdout: died(root, pid), stderr: '' });
    expect(fs.existsSync(pidFileOf(root))).toBe(false);
    // --json: what was found, as an object.
    fs.writeFileSync(pidFileOf(root), `${pid}\n`);
    const json = await hall(['stop', '--json'], root);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual({ result: 'not_running', stale_pid: pid, stale_reason: 'gone' });
  });

  it('no pid file: no hall runs in DIR, exit 0 (also with --json)', async () => {
    const root = hallRoot(CONFIG);
    const [stop, json] = await Promise.all([hall(['stop'], root), hall(['stop', root, '--json'], hallRoot())]);
    expect(stop).toMatchObject({ code: 0, stdout: `No hall runs in ${root}.\n`, stderr: '' });
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual({ result: 'not_running' });
  });

  it('an invalid pid file is exit 1, under --json as {error, code}', async () => {
    const root = hallRoot(CONFIG);
    fs.writeFileSync(pidFileOf(root), 'not a pid\n');
    const [stop, json] = await Promise.all([hall(['stop'], root), hall(['stop', '--json'], root)]);
    expect(stop).toMatchObject({ code: 1, stdout: '', stderr: `Invalid PID file ${pidFileOf(root)}\n` });
    expect(json).toMatchObject({ code: 1, stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual({ error: `Invalid PID file ${pidFileOf(root)}`, code: 'invalid_pid_file' });
  });

  it('a pid reused by an unrelated process: never signalled', async () => {
    const root = hallRoot(CONFIG);
    const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
    const pid = sleeper.pid ?? 0;
    try {
      fs.writeFileSync(pidFileOf(root), `${pid}\n`);
      const stop = await hall(['stop'], root);
      expect(stop).toMatchObject({ code: 0, stdout: notThisHall(root, pid), stderr: '' });
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
      expect(stop).toMatchObject({ code: 0, stdout: notThisHall(root, other.child.pid ?? 0), stderr: '' });
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
    expect(stop).toMatchObject({ code: 0, stdout: died(root, h.child.pid ?? 0), stderr: '' });
    expect(fs.existsSync(pidFileOf(root))).toBe(false);
  });
});

describe.concurrent('stop --json of a running hall', () => {
  it('prints {result: stopped, pid} once the hall has exited, and nothing else', async () => {
    const root = hallRoot(CONFIG);
    const h = await startHallProcess(root);
    const stop = await hall(['stop', '--json'], root);
    expect(stop).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(stop.stdout)).toEqual({ result: 'stopped', pid: h.child.pid });
    expect(await h.exited).toMatchObject({ code: 0 });
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
