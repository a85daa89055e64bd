/**
 * The fork server reads its requests with a splitter of its own (it runs
 * without the build); like the hall's line reader, it caps a line: an
 * overlong one is reported on stderr and skipped, and the next request is
 * served.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ForkServerDriver, trueIn } from '../support/fork-server-driver.js';
import { tempRoot } from '../support/hall-client.js';

let server: ForkServerDriver | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('the fork server with an overlong request line', () => {
  it('skips it, says so, and starts the next request', async () => {
    const root = tempRoot();
    server = new ForkServerDriver();
    // 9 MiB without a newline in pieces, then its end, then a real request.
    const piece = 'x'.repeat(1 << 20);
    for (let i = 0; i < 9; i++) server.send(piece);
    server.send('\n');
    await server.start(trueIn(root), 'r1');
    expect(await server.exit('r1')).toEqual({ id: 'r1', code: 0, signal: null });
    expect(server.reports[0]).toEqual({ id: 'r1', pid: expect.any(Number) });
    expect(server.stderr).toBe('raider-spawner: a request longer than 8388608 characters was skipped\n');
  });
});

describe('the fork server with a request Node refuses at once', () => {
  it('reports the error and serves the next request', async () => {
    // Node's spawn throws (not an error event) for some requests, here args that are not a
    // list: the fork server closed the log file twice then, and died of EBADF.
    // (The posix way refuses it before starting anything: spawn-ways.test.ts.)
    const root = tempRoot();
    server = new ForkServerDriver('node');
    await server.start({ ...trueIn(root), args: 5 }, 'bad');
    await server.start(trueIn(root), 'good');
    expect(await server.exit('good')).toEqual({ id: 'good', code: 0, signal: null });
    expect(server.reports[0]).toEqual({ id: 'bad', error: expect.stringContaining('"args"') });
  });
});
