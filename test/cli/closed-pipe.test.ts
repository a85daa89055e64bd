/**
 * A reader that closes the pipe early (`| head -1`) ends the command quietly
 * (issue 14, item 13): no stack trace, no error text, exit 0.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ODD_RAIDER } from '../faults/odd-raider-path.js';
import { hallEnv, RAIDER_BIN, runStarted, startTestHall, tempRoot, type TestHall } from '../support/test-hall.js';

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

interface Closed {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * Runs `raider ARGS` with stdout a pipe that is closed after its first line
 * (or at once), then calls `afterClose` to make the command write again.
 */
function readFirstLine(
  args: string[],
  options: { env?: Record<string, string>; atOnce?: boolean; afterClose?: () => Promise<void> },
): Promise<Closed> {
  const child = spawn(process.execPath, [RAIDER_BIN, ...args], { env: hallEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const close = () => {
    child.stdout.destroy();
    void options.afterClose?.();
  };
  if (options.atOnce) close();
  else {
    let seen = '';
    const onData = (d: Buffer) => {
      seen += d.toString();
      if (!seen.includes('\n')) return;
      child.stdout.off('data', onData);
      close();
    };
    child.stdout.on('data', onData);
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

describe('stdout closed by its reader', () => {
  it('inspect without a terminal ends quietly at its next print, which a change brings', async () => {
    hall = await startTestHall({ config: 'raiders: { odd: {} }\n', env: { RAIDER_HALL_RAIDER_BIN: ODD_RAIDER } });
    const h = hall;
    const result = await readFirstLine(['hall', 'inspect', h.root], {
      afterClose: async () => {
        await h.request({ cmd: 'spawn', name: 'odd', mission: 'change the tree' });
      },
    });
    expect(result).toEqual({ code: 0, signal: null, stderr: '' });
  });

  it('attach --json ends quietly when its reader leaves after the first line', async () => {
    hall = await startTestHall({ config: 'raiders: { odd: {} }\n', env: { RAIDER_HALL_RAIDER_BIN: ODD_RAIDER } });
    const h = hall;
    const flag = path.join(h.root, 'go');
    const run = await h.request({ cmd: 'spawn', name: 'odd', mission: `until ${flag}` });
    await runStarted(run.events_path);
    const result = await readFirstLine(['hall', 'attach', h.root, String(run.id), '--json'], {
      afterClose: async () => fs.writeFileSync(flag, ''),
    });
    expect(result).toEqual({ code: 0, signal: null, stderr: '' });
  });

  it('the raider with --stream-json ends quietly when nobody reads its events', async () => {
    const root = tempRoot();
    fs.mkdirSync(path.join(root, '.raider'));
    fs.writeFileSync(path.join(root, '.raider', 'script.yml'), 'replies:\n  - steps:\n      - message: "heard {{mission}}"\n');
    const result = await readFirstLine(['--stream-json', '--engine', 'scripted', '--root', root, '--no-session', '--', 'hi'], {
      atOnce: true,
    });
    expect(result.stderr).toBe('');
    expect(result.signal).toBeNull();
  });
});
