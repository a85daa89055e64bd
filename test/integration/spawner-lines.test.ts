/**
 * The fork server reads its requests with a splitter of its own (it runs
 * without the build); like the hall's line reader, it caps a line: an
 * overlong one is reported on stderr and skipped, and the next request is
 * served.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readLines } from '../../src/protocol/line-reader.js';
import { REPO, tempRoot } from '../support/hall-client.js';

const SPAWNER = path.join(REPO, 'libexec', 'raider-spawner.cjs');

/** The fork server's reports as they come, and the first exit report. */
function reports(stdout: Readable): { replies: unknown[]; exited: Promise<unknown> } {
  const replies: unknown[] = [];
  const exited = new Promise<unknown>((resolve) => {
    readLines(stdout, (line) => {
      const reply: unknown = JSON.parse(line);
      replies.push(reply);
      if (typeof reply === 'object' && reply !== null && 'code' in reply) resolve(reply);
    });
  });
  return { replies, exited };
}

describe('the fork server with an overlong request line', () => {
  it('skips it, says so, and starts the next request', async () => {
    const root = tempRoot();
    const child = spawn(process.execPath, [SPAWNER], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    const { replies, exited } = reports(child.stdout);
    // 9 MiB without a newline in pieces, then its end, then a real request.
    const piece = 'x'.repeat(1 << 20);
    for (let i = 0; i < 9; i++) child.stdin.write(piece);
    child.stdin.write('\n');
    const request = {
      id: 'r1',
      command: 'true',
      args: [],
      env: {},
      cwd: root,
      stdout: path.join(root, 'out'),
      stderr: path.join(root, 'err'),
    };
    child.stdin.write(`${JSON.stringify(request)}\n`);
    expect(await exited).toEqual({ id: 'r1', code: 0, signal: null });
    expect(replies[0]).toEqual({ id: 'r1', pid: expect.any(Number) });
    expect(stderr).toBe('raider-spawner: a request longer than 8388608 characters was skipped\n');
    child.stdin.end();
    await new Promise((resolve) => child.once('exit', resolve));
  });
});

describe('the fork server with a request Node refuses at once', () => {
  it('reports the error and serves the next request', async () => {
    // Node's spawn throws (not an error event) for some requests, here args that are not a
    // list: the fork server closed the log file twice then, and died of EBADF.
    const root = tempRoot();
    const child = spawn(process.execPath, [SPAWNER], { stdio: ['pipe', 'pipe', 'inherit'] });
    const { replies, exited } = reports(child.stdout);
    const request = { command: 'true', args: [], env: {}, cwd: root, stdout: path.join(root, 'out'), stderr: path.join(root, 'err') };
    child.stdin.write(`${JSON.stringify({ ...request, id: 'bad', args: 5 })}\n`);
    child.stdin.write(`${JSON.stringify({ ...request, id: 'good' })}\n`);
    expect(await exited).toEqual({ id: 'good', code: 0, signal: null });
    expect(replies[0]).toEqual({ id: 'bad', error: expect.stringContaining('"args"') });
    child.stdin.end();
    await new Promise((resolve) => child.once('exit', resolve));
  });
});
