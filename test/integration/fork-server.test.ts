/**
 * A hall that cannot start raiders itself (or is asked not to, as these
 * halls are) starts them through a fork server (libexec/raider-spawner.cjs):
 * a small child process that forks for it and reports the exits. These tests
 * hit that process from outside: a Ctrl-C meant for the hall, and its death.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FORK_SERVER_SCRIPT as SPAWNER, ForkServer, type SpawnRequest, type SpawnWatcher } from '../../src/adapters/os/fork-server.js';
import { processAlive } from '../../src/adapters/os/process-alive.js';
import { commandLine, parentOf, processGroupOf } from '../support/processes.js';
import { eventually, runStarted, startTestHall, tempRoot, type TestHall } from '../support/test-hall.js';

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

const CONFIG = 'raiders: { bjorn: {} }\n';
/** The hall's fallback, asked for. */
const FORK_SERVER_ENV = { RAIDER_HALL_SPAWNER: 'fork-server' };

/** The signals pending for a process, as the mask in /proc (process-wide and for its main thread). */
function pendingSignals(pid: number): bigint {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const mask = (field: string) => BigInt(`0x${new RegExp(`^${field}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1] ?? '0'}`);
  return mask('ShdPnd') | mask('SigPnd');
}

/** A hall with one run waiting for its flag file, and the fork server that started it. */
async function hallWithWaitingRun() {
  const h = await startTestHall({ config: CONFIG, env: FORK_SERVER_ENV });
  hall = h;
  const tap = await h.events('raider.done');
  const flag = path.join(h.root, 'go');
  const a = await h.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${flag}` });
  await runStarted(a.events_path);
  return { h, tap, flag, a, server: parentOf(a.pid as number) };
}

describe('the fork server', () => {
  it('starts each raider, in a process group of its own, and is not the hall', async () => {
    hall = await startTestHall({ config: CONFIG, env: FORK_SERVER_ENV });
    const reply = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${path.join(hall.root, 'go')}` });
    await runStarted(reply.events_path);
    const server = parentOf(reply.pid as number);
    expect(server).not.toBe(process.pid);
    expect(commandLine(server)).toContain('libexec/raider-spawner.cjs');
    expect(parentOf(server)).toBe(process.pid);
    // The raider leads its own process group (SIGKILL at the end goes to the group).
    expect(processGroupOf(reply.pid as number)).toBe(reply.pid);
    fs.writeFileSync(path.join(hall.root, 'go'), '');
  });

  it('ignores the Ctrl-C meant for the hall: exits are still reported as they happened', async () => {
    const { h, tap, flag, a, server } = await hallWithWaitingRun();
    process.kill(server, 'SIGINT');
    process.kill(server, 'SIGTERM');
    // Once no signal is pending, both were delivered: had either been left at its default, the process would be gone.
    await eventually(() => expect(pendingSignals(server)).toBe(0n));
    expect(processAlive(server)).toBe(true);
    fs.writeFileSync(flag, '');
    expect(await tap.waitFor((e) => e.id === a.id)).toMatchObject({ status: 'completed', response: `saw ${flag}` });
    // A failing raider's exit code still comes through it.
    const b = await h.request({ cmd: 'spawn', name: 'bjorn', mission: 'fail on purpose' });
    expect(await tap.waitFor((e) => e.id === b.id)).toMatchObject({ status: 'failed', exit_code: 1, error: 'on purpose' });
    expect(h.logs.filter((l) => l.includes('spawner'))).toEqual([]);
    tap.close();
  });

  it('dies: its raiders run on and their runs end normally, and the next run gets a new fork server', async () => {
    const { h, tap, flag, a, server } = await hallWithWaitingRun();
    process.kill(server, 'SIGKILL');
    await eventually(() => expect(h.logs).toContainEqual(expect.stringMatching(/^raider spawner ended \(signal SIGKILL\)/)));
    expect(processAlive(a.pid as number)).toBe(true);
    expect(await h.request({ cmd: 'ps' })).toMatchObject({ raiders: [{ id: a.id }] });

    fs.writeFileSync(flag, '');
    expect(await tap.waitFor((e) => e.id === a.id)).toMatchObject({ status: 'completed', response: `saw ${flag}` });

    // The next run waits for a flag of its own: with the first one there it could end before
    // its parent is read from /proc.
    const flagB = path.join(h.root, 'go-b');
    const b = await h.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${flagB}` });
    await runStarted(b.events_path);
    const next = parentOf(b.pid as number);
    expect(next).not.toBe(server);
    expect(commandLine(next)).toContain('libexec/raider-spawner.cjs');
    fs.writeFileSync(flagB, '');
    expect(await tap.waitFor((e) => e.id === b.id)).toMatchObject({ status: 'completed' });
    tap.close();
  });

  it('ends when its hall has stopped', async () => {
    hall = await startTestHall({ config: CONFIG, env: FORK_SERVER_ENV });
    const a = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${path.join(hall.root, 'go')}` });
    await runStarted(a.events_path);
    const server = parentOf(a.pid as number);
    fs.writeFileSync(path.join(hall.root, 'go'), '');
    await hall.stop();
    hall = undefined;
    // Reaped by this process (its parent) once it exited: nothing left in /proc.
    await eventually(() => expect(fs.existsSync(`/proc/${server}`)).toBe(false), 5000);
  });

  it('of a hall that stops before its first run is ended at once, without a word in the hall log', async () => {
    const h = await startTestHall({ config: CONFIG, env: FORK_SERVER_ENV });
    hall = h;
    // The hall starts its fork server at boot (maybe still loading now): this process's child.
    const spawners = fs.readdirSync('/proc').filter((name) => {
      try {
        return /^\d+$/.test(name) && parentOf(Number(name)) === process.pid && commandLine(Number(name)).includes('raider-spawner.cjs');
      } catch {
        return false; // gone meanwhile
      }
    });
    expect(spawners).toHaveLength(1);
    await h.stop();
    hall = undefined;
    expect(fs.existsSync(`/proc/${spawners[0]}`)).toBe(false);
    expect(h.logs.filter((line) => line.includes('spawner'))).toEqual([]);
  });
});

describe('ForkServer', () => {
  const request = (root: string, command: string): SpawnRequest => ({
    command,
    args: [],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    cwd: root,
    stdoutPath: path.join(root, 'out'),
    stderrPath: path.join(root, 'err'),
  });

  function watch(): { watcher: SpawnWatcher; seen: string[] } {
    const seen: string[] = [];
    return {
      seen,
      watcher: {
        spawned: (pid) => seen.push(`spawned ${typeof pid}`),
        failed: (error) => seen.push(`failed ${error}`),
        exited: (code, signal) => seen.push(`exited ${String(code)} ${String(signal)}`),
        lost: (pid) => seen.push(`lost ${String(pid)}`),
      },
    };
  }

  it('reports a command that cannot be started, and a process and its exit code', async () => {
    const root = tempRoot('fork-server-');
    fs.writeFileSync(path.join(root, 'out'), '');
    const server = new ForkServer(() => {});
    const missing = watch();
    server.spawn(request(root, path.join(root, 'no-such-raider')), missing.watcher);
    const fine = watch();
    const script = path.join(root, 'raider.sh');
    fs.writeFileSync(script, '#!/bin/sh\necho out; echo err >&2; exit 7\n', { mode: 0o755 });
    server.spawn(request(root, script), fine.watcher);
    await eventually(() => expect(fine.seen).toEqual(['spawned number', 'exited 7 null']));
    expect(missing.seen).toEqual([expect.stringMatching(/^failed spawn .*no-such-raider ENOENT$/)]);
    expect(fs.readFileSync(path.join(root, 'out'), 'utf8')).toBe('out\n');
    expect(fs.readFileSync(path.join(root, 'err'), 'utf8')).toBe('err\n');
    await server.close();
  });

  /** A fork server that answers the first request with its pid and its exit in one write, then does `then`. */
  function quickExitServer(root: string, then: string): string {
    const script = path.join(root, 'quick.cjs');
    fs.writeFileSync(
      script,
      `process.stdin.once("data", () => { process.stdout.write('{"id":1,"pid":4242}\\n{"id":1,"code":0,"signal":null}\\n'); ${then} });\n`,
    );
    return script;
  }

  it('tells an exit read with the pid on the next turn: what the pid set going comes first', async () => {
    const root = tempRoot('fork-server-');
    const server = new ForkServer(() => {}, quickExitServer(root, ''));
    const seen: string[] = [];
    server.spawn(request(root, '/bin/true'), {
      spawned: () => {
        seen.push('spawned');
        // What a spawn's reply waits on: promise steps after the pid.
        void Promise.resolve()
          .then(() => undefined)
          .then(() => seen.push('answered'));
      },
      failed: (error) => seen.push(`failed ${error}`),
      exited: (code) => seen.push(`exited ${String(code)}`),
      lost: () => seen.push('lost'),
    });
    await eventually(() => expect(seen).toEqual(['spawned', 'answered', 'exited 0']));
    await server.close();
  });

  it('an exit it read before it ended is told as that exit, not as a lost process', async () => {
    const root = tempRoot('fork-server-');
    const server = new ForkServer(() => {}, quickExitServer(root, 'process.exit(0);'));
    const seen = watch();
    server.spawn(request(root, '/bin/true'), seen.watcher);
    await eventually(() => expect(seen.seen).toEqual(['spawned number', 'exited 0 null']));
    await server.close();
  });

  it('a report that does not read as one (a pid that is no number, an unknown signal) is logged and left out', async () => {
    const root = tempRoot('fork-server-');
    const odd = path.join(root, 'odd.cjs');
    fs.writeFileSync(
      odd,
      [
        'process.stdin.once("data", () => {',
        '  process.stdout.write(\'{"id":1,"pid":"many"}\\n{"id":1,"pid":4242}\\n{"id":1,"code":null,"signal":"SIGNOPE"}\\n{"id":1,"code":null,"signal":"SIGTERM"}\\n\');',
        '});',
        '',
      ].join('\n'),
    );
    const logs: string[] = [];
    const server = new ForkServer((line) => logs.push(line), odd);
    const seen = watch();
    server.spawn(request(root, '/bin/true'), seen.watcher);
    await eventually(() => expect(seen.seen).toEqual(['spawned number', 'exited null SIGTERM']));
    expect(logs).toEqual([
      'raider spawner sent a report this hall cannot read (is libexec/raider-spawner.cjs from another version? reinstall raider-hall): {"id":1,"pid":"many"}',
      'raider spawner sent a report this hall cannot read (is libexec/raider-spawner.cjs from another version? reinstall raider-hall): {"id":1,"code":null,"signal":"SIGNOPE"}',
    ]);
    await server.close();
  });

  it('one that dies before it answers fails the runs waiting for it, says so, and is started again', async () => {
    const root = tempRoot('fork-server-');
    const dying = path.join(root, 'dying.cjs');
    fs.writeFileSync(dying, 'process.stdin.once("data", () => process.exit(3));\n');
    const logs: string[] = [];
    const server = new ForkServer((line) => logs.push(line), dying);
    const first = watch();
    server.spawn(request(root, '/bin/true'), first.watcher);
    await eventually(() => expect(first.seen).toEqual(['lost undefined']));
    expect(logs).toEqual(['raider spawner ended (exit code 3); a new one starts with the next run']);
    const second = watch();
    server.spawn(request(root, '/bin/true'), second.watcher);
    await eventually(() => expect(second.seen).toEqual(['lost undefined']));
    expect(logs).toHaveLength(2);
    await server.close();
  });

  it('does not start what a hall asked for once that hall is gone: a request read after its death is refused', async () => {
    const root = tempRoot('fork-server-');
    const marker = path.join(root, 'ran');
    // A stand-in hall: starts the fork server with its own pid, hands it one request on "go", and dies.
    const standIn = spawn(
      process.execPath,
      [
        '-e',
        `const server = require('node:child_process').spawn(process.execPath, [${JSON.stringify(SPAWNER)}, String(process.pid)], { stdio: ['pipe', 'ignore', 'inherit'] });
         console.log(server.pid);
         process.stdin.once('data', () => server.stdin.write(process.argv[1] + '\\n', () => process.exit(0)));`,
        JSON.stringify({
          id: 1,
          command: '/usr/bin/touch',
          args: [marker],
          env: {},
          cwd: root,
          stdout: path.join(root, 'out'),
          stderr: path.join(root, 'err'),
        }),
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    standIn.stderr.setEncoding('utf8');
    standIn.stderr.on('data', (chunk: string) => (stderr += chunk));
    // The fork server holds the stand-in's stderr: it ends when the fork server exits.
    const serverGone = new Promise((resolve) => standIn.stderr.once('end', resolve));
    const [pidLine] = await once(standIn.stdout.setEncoding('utf8'), 'data');
    const server = Number(String(pidLine).trim());
    // Stopped, it reads nothing until its hall has died with the request in the pipe.
    process.kill(server, 'SIGSTOP');
    const exited = once(standIn, 'exit');
    standIn.stdin.write('go\n');
    await exited;
    process.kill(server, 'SIGCONT');
    await serverGone;
    expect(stderr).toBe(`raider-spawner: not starting /usr/bin/touch: the hall that asked for it (pid ${standIn.pid}) is gone\n`);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('refuses to be made without its script, saying what to do', () => {
    expect(() => new ForkServer(() => {}, '/nonexistent/raider-spawner.cjs')).toThrow(
      'the raider spawner /nonexistent/raider-spawner.cjs is missing: this installation of raider-hall is incomplete; reinstall it',
    );
  });
});
