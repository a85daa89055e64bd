/**
 * The fork server starts a raider with posix_spawn where it can, else with
 * Node's spawn (libexec/spawn-process.cjs). Both ways must start the same
 * process: these tests drive the fork server's protocol each way and look at
 * the started processes in /proc.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FORK_SERVER_SCRIPT } from '../../src/adapters/os/fork-server.js';
import { ForkServerDriver as Driver, trueIn } from '../support/fork-server-driver.js';
import { eventually } from '../support/hall-client.js';
import { processGroupOf, sessionOf } from '../support/processes.js';
import { tempRoot } from '../support/temp-roots.js';

let driver: Driver | undefined;
afterEach(async () => {
  await driver?.close();
  driver = undefined;
});

/** A signal mask field of /proc/PID/status, as a number. */
function mask(pid: number, field: string): bigint {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return BigInt(`0x${new RegExp(`^${field}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1] ?? 'ffff'}`);
}

describe.each(['posix', 'node'] as const)('a raider started by the fork server (%s)', (way) => {
  it(way === 'posix' ? 'uses posix_spawn here, without a word' : 'uses Node spawn when told to', async () => {
    const root = tempRoot('spawn-ways-');
    const d = new Driver(way);
    driver = d;
    // Once it has started one, the way it took is loaded: koffi's library is mapped for posix_spawn only.
    const { id } = await d.start(trueIn(root));
    await d.exit(id);
    const maps = fs.readFileSync(`/proc/${d.pid}/maps`, 'utf8');
    expect(maps.includes('koffi')).toBe(way === 'posix');
    await d.close();
    driver = undefined;
    expect(d.stderr).toBe('');
  });

  it('reports each of many raiders that end at once exactly once, after its pid', async () => {
    // Their SIGCHLDs arrive together and may be merged into one: each raider is asked for.
    const root = tempRoot('spawn-ways-');
    driver = new Driver(way);
    const request = trueIn(root);
    const ids = Array.from({ length: 60 }, (_, i) => i + 1);
    for (const id of ids) driver.send(`${JSON.stringify({ id, ...request })}\n`);
    await Promise.all(ids.map((id) => driver?.exit(id)));
    await driver.endInput();
    for (const id of ids) {
      const mine = driver.reports.filter((r) => r.id === id);
      expect(mine).toEqual([
        { id, pid: expect.any(Number) },
        { id, code: 0, signal: null },
      ]);
    }
  });

  it("a raider that closes its stderr and outlives the hall's end of stdin is still reported, and then the fork server ends", async () => {
    const root = tempRoot('spawn-ways-');
    const flag = path.join(root, 'go');
    driver = new Driver(way);
    const fds = () => fs.readdirSync(`/proc/${driver?.pid}/fd`).length;
    // Booted (its first report), with nothing of a raider's open yet.
    await driver.start(trueIn(root));
    await driver.exit(1);
    const idle = fds();
    const { id } = await driver.start({
      command: 'sh',
      args: ['-c', `exec 2>&-; while [ ! -e '${flag}' ]; do sleep 0.01; done; exit 4`],
      env: { PATH: '/usr/bin:/bin' },
      cwd: root,
      stdout: path.join(root, 'out'),
      stderr: path.join(root, 'err'),
      stderrPrefix: '[r] ',
    });
    const ended = driver.endInput();
    // Once the fork server has closed the raider's stderr (and the log it went to), and its stdin
    // has ended, only the raider keeps it going.
    await eventually(() => expect(fds()).toBeLessThanOrEqual(idle));
    fs.writeFileSync(flag, '');
    expect(await ended).toBe(0);
    expect(driver.reports.filter((r) => r.id === id)).toEqual([
      { id, pid: expect.any(Number) },
      { id, code: 4, signal: null },
    ]);
  });

  it('has stdin /dev/null, the given stdout, stderr through the prefixer, its cwd, exactly its env, a session, default signals', async () => {
    const root = tempRoot('spawn-ways-');
    const work = path.join(root, 'work');
    fs.mkdirSync(work);
    driver = new Driver(way);
    const env = { PATH: '/usr/bin:/bin', ONLY_THIS: 'a b\nc' };
    const { id, first } = await driver.start({
      command: 'sleep',
      args: ['30'],
      env,
      cwd: work,
      stdout: path.join(root, 'out'),
      stderr: path.join(root, 'err'),
      stderrPrefix: '[r] ',
    });
    const pid = first.pid;
    if (typeof pid !== 'number') throw new Error(`not started: ${JSON.stringify(first)}`);
    expect(processGroupOf(pid)).toBe(pid);
    expect(sessionOf(pid)).toBe(pid);
    expect(fs.readlinkSync(`/proc/${pid}/cwd`)).toBe(work);
    expect(fs.readFileSync(`/proc/${pid}/environ`, 'utf8')).toBe('PATH=/usr/bin:/bin\0ONLY_THIS=a b\nc\0');
    // Beyond 0-2 only what this test's process was given itself (a test runner's descriptor):
    // nothing of the fork server's.
    const extra = fs.readdirSync(`/proc/${pid}/fd`).filter((fd) => Number(fd) > 2);
    for (const fd of extra) expect(fs.readlinkSync(`/proc/${pid}/fd/${fd}`)).toBe(fs.readlinkSync(`/proc/self/fd/${fd}`));
    expect(fs.readlinkSync(`/proc/${pid}/fd/0`)).toBe('/dev/null');
    expect(fs.readlinkSync(`/proc/${pid}/fd/1`)).toBe(path.join(root, 'out'));
    expect(fs.readlinkSync(`/proc/${pid}/fd/2`)).toMatch(/^socket:/);
    // The fork server ignores SIGPIPE and catches SIGINT and SIGTERM: none of that is passed on.
    expect(mask(pid, 'SigIgn')).toBe(0n);
    expect(mask(pid, 'SigBlk')).toBe(0n);
    expect(mask(pid, 'SigCgt')).toBe(0n);
    process.kill(pid, 'SIGTERM');
    expect(await driver.exit(id)).toEqual({ id, code: null, signal: 'SIGTERM' });
  });

  it('reports exit codes, appends stderr (prefixed or not), and finds a command in the PATH of its env', async () => {
    const root = tempRoot('spawn-ways-');
    const bin = path.join(root, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'raider'), '#!/bin/sh\necho "out $1"; echo "err $1" >&2; exit 7\n', { mode: 0o755 });
    driver = new Driver(way);
    const common = { env: { PATH: `/nowhere:${bin}:/usr/bin:/bin` }, cwd: root, stderr: path.join(root, 'err') };
    const plain = await driver.start({ command: 'raider', args: ['one'], stdout: path.join(root, 'out1'), ...common });
    expect(await driver.exit(plain.id)).toEqual({ id: plain.id, code: 7, signal: null });
    const prefixed = await driver.start({
      command: 'raider',
      args: ['two words'],
      stdout: path.join(root, 'out2'),
      stderrPrefix: '[r2] ',
      ...common,
    });
    expect(await driver.exit(prefixed.id)).toEqual({ id: prefixed.id, code: 7, signal: null });
    // An executable script without `#!` is run by /bin/sh, as execvp does.
    fs.writeFileSync(path.join(bin, 'bare-script'), 'echo "bare $1"; exit 3\n', { mode: 0o755 });
    const bare = await driver.start({ command: 'bare-script', args: ['x'], stdout: path.join(root, 'out3'), ...common });
    expect(await driver.exit(bare.id)).toEqual({ id: bare.id, code: 3, signal: null });
    expect(fs.readFileSync(path.join(root, 'out3'), 'utf8')).toBe('bare x\n');
    expect(fs.readFileSync(path.join(root, 'out1'), 'utf8')).toBe('out one\n');
    expect(fs.readFileSync(path.join(root, 'out2'), 'utf8')).toBe('out two words\n');
    expect(fs.readFileSync(path.join(root, 'err'), 'utf8')).toBe('err one\n[r2] err two words\n');
  });

  it("refuses what cannot start in Node's words: no such command, not executable, no such directory, a NUL", async () => {
    const root = tempRoot('spawn-ways-');
    const notExecutable = path.join(root, 'plain.txt');
    fs.writeFileSync(notExecutable, 'echo hi\n');
    driver = new Driver(way);
    const base = { args: [], env: { PATH: '/usr/bin:/bin' }, cwd: root, stdout: path.join(root, 'out'), stderr: path.join(root, 'err') };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, command: path.join(root, 'missing') }, `spawn ${path.join(root, 'missing')} ENOENT`],
      [{ ...base, command: 'no-such-raider-anywhere' }, 'spawn no-such-raider-anywhere ENOENT'],
      [{ ...base, command: notExecutable }, `spawn ${notExecutable} EACCES`],
      [{ ...base, command: 'sh', cwd: path.join(root, 'gone') }, 'spawn sh ENOENT'],
    ];
    for (const [request, error] of cases) {
      const { id, first } = await driver.start(request);
      expect(first).toEqual({ id, error });
    }
    // A request Node's spawn throws on at once (args not a list) is refused too, and the fork
    // server goes on (it used to close the log file twice then, and die).
    const malformed = await driver.start({ ...base, command: 'true', args: 5 });
    expect(malformed.first).toEqual({ id: malformed.id, error: expect.any(String) });
    // A NUL would end a C string: a mission with one must not reach the raider cut short.
    for (const request of [
      { ...base, command: 'true', args: ['a\0b'] },
      { ...base, command: 'true', env: { A: 'x\0y' } },
      { ...base, command: 'true\0x' },
      { ...base, command: 'true', cwd: `${root}\0x` },
    ]) {
      const { id, first } = await driver.start(request);
      expect(first).toEqual({ id, error: expect.stringContaining('without null bytes') });
    }
    // Nothing of a refused start is left open: the next one works.
    const ok = await driver.start({ ...base, command: 'true' });
    expect(await driver.exit(ok.id)).toEqual({ id: ok.id, code: 0, signal: null });
  });
});

describe('the two ways, side by side', () => {
  /** What came of one request: its error, or its exit and what it wrote on stdout. */
  async function outcome(d: Driver, root: string, label: string, request: Record<string, unknown>): Promise<Record<string, unknown>> {
    const out = path.join(root, `${label}.out`);
    const { id, first } = await d.start({ stdout: out, stderr: path.join(root, 'err'), ...request });
    if (typeof first.error === 'string') return { error: first.error };
    const { code, signal } = await d.exit(id);
    return { code, signal, out: fs.readFileSync(out, 'utf8') };
  }

  it("read a request as Node does: no args, args that are no strings, no env, no or an empty cwd, PATH as execvp joins it, and fail with Node's codes", async () => {
    const root = tempRoot('spawn-ways-');
    const bin = path.join(root, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'hello'), '#!/bin/sh\necho "$0 $*"\n', { mode: 0o755 });
    const aFile = path.join(root, 'a-file');
    fs.writeFileSync(aFile, '');
    const env = { PATH: `${bin}:/usr/bin:/bin` };
    const cases: Record<string, Record<string, unknown>> = {
      noArgs: { command: 'echo', args: null, env, cwd: root },
      argsNoStrings: { command: 'echo', args: [1, true, null], env, cwd: root },
      noEnv: { command: 'sh', args: ['-c', 'echo "$PATH"'], env: null, cwd: root },
      noCwd: { command: 'sh', args: ['-c', 'pwd'], env, cwd: null },
      emptyCwd: { command: 'sh', args: ['-c', 'pwd'], env, cwd: '' },
      trailingSlash: { command: 'hello', args: ['x'], env: { PATH: `${bin}/` }, cwd: root },
      dotDotNotFollowed: { command: 'hello', args: [], env: { PATH: `${root}/missing/../bin` }, cwd: root },
      emptyEntryIsCwd: { command: 'hello', args: [], env: { PATH: '/nowhere:' }, cwd: bin },
      cwdIsAFile: { command: 'true', args: [], env, cwd: aFile },
      commandUnderAFile: { command: `${aFile}/x`, args: [], env, cwd: root },
      pathEntryIsAFile: { command: 'no-such-raider', args: [], env: { PATH: `/usr/bin:${aFile}` }, cwd: root },
    };
    const posix = new Driver('posix');
    const node = new Driver('node');
    driver = posix;
    try {
      for (const [label, request] of Object.entries(cases)) {
        const a = await outcome(posix, root, `posix-${label}`, request);
        const b = await outcome(node, root, `node-${label}`, request);
        expect({ label, ...a }).toEqual({ label, ...b });
      }
      // The ones that fail, fail as Node's spawn says it: the kernel's errno, on Node 20 to 26
      // alike (from Node 22 on, statSync with throwIfNoEntry calls ENOTDIR "no entry": no guide).
      expect(await outcome(posix, root, 'x', cases.cwdIsAFile ?? {})).toEqual({ error: 'spawn ENOTDIR' });
      expect(await outcome(posix, root, 'x', cases.commandUnderAFile ?? {})).toEqual({ error: 'spawn ENOTDIR' });
      expect(await outcome(posix, root, 'x', cases.pathEntryIsAFile ?? {})).toEqual({ error: 'spawn ENOTDIR' });
      expect(await outcome(posix, root, 'x', cases.dotDotNotFollowed ?? {})).toEqual({ error: 'spawn hello ENOENT' });
      // A cwd that is no string starts nothing, and the fork server goes on (it crashed here once).
      for (const d of [posix, node]) {
        const { first } = await d.start({
          command: 'true',
          args: [],
          env,
          cwd: 5,
          stdout: path.join(root, 'o'),
          stderr: path.join(root, 'err'),
        });
        expect(first.error).toEqual(expect.stringContaining('"options.cwd" property must be of type string'));
      }
      expect(await outcome(posix, root, 'after', { command: 'true', args: [], env, cwd: root })).toEqual({
        code: 0,
        signal: null,
        out: '',
      });
    } finally {
      await node.close();
    }
  });
});

describe('a fork server without koffi', () => {
  it("says so in one line and starts raiders with Node's spawn", async () => {
    // A copy of libexec/ with no node_modules above it: koffi cannot be found.
    const root = tempRoot('spawn-ways-');
    const libexec = path.join(root, 'libexec');
    fs.mkdirSync(libexec);
    for (const name of ['raider-spawner.cjs', 'spawn-process.cjs', 'line-prefixer.cjs'])
      fs.copyFileSync(path.join(path.dirname(FORK_SERVER_SCRIPT), name), path.join(libexec, name));
    const d = new Driver('posix', path.join(libexec, 'raider-spawner.cjs'));
    driver = d;
    const { id, first } = await d.start(trueIn(root));
    expect(first).toEqual({ id, pid: expect.any(Number) });
    expect(await d.exit(id)).toEqual({ id, code: 0, signal: null });
    expect(d.stderr).toBe(
      "raider-spawner: raiders are started with Node's spawn, about 1 ms slower each: koffi is not installed (an optional dependency)\n",
    );
  });
});
