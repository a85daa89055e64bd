/** `raider hall dashboard`: the URL with the token, or a clear refusal naming the key. */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startTestHall, tempRoot, type TestHall } from '../support/test-hall.js';
import { dashboardAdapter } from '../../src/adapters/dashboard/dashboard-adapter.js';
import { httpRequest, startBoardHall } from './dashboard-support.js';

const halls: TestHall[] = [];
afterEach(async () => {
  for (const hall of halls.splice(0)) await hall.stop();
});

describe('raider hall dashboard', () => {
  it('prints the URL with the login token, as text and with --json; the URL logs in', async () => {
    const { hall, board } = await startBoardHall();
    halls.push(hall);
    const text = await runCli(['hall', 'dashboard', hall.root]);
    expect(text.code, text.stderr).toBe(0);
    const url = text.stdout.trim();
    expect(url).toBe(`${board.url}?token=${board.token}`);

    const asJson = await runCli(['hall', 'dashboard', hall.root, '--json']);
    expect(asJson.code, asJson.stderr).toBe(0);
    expect(JSON.parse(asJson.stdout)).toEqual({ url });

    const login = await httpRequest(board, new URL(url).pathname + new URL(url).search);
    expect(login.status).toBe(303);
  });

  it('says so (exit 1) when the hall is not running', async () => {
    const root = tempRoot('dashboard-cli-');
    const r = await runCli(['hall', 'dashboard', root]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/not running.*raider hall start/);
  });

  it('says so (exit 1) when the dashboard could not listen (its address is taken)', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const address = taken.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const hall = await startTestHall({ config: `dashboard: { listen: "127.0.0.1:${port}" }\n`, adapters: [dashboardAdapter] });
      halls.push(hall);
      expect(hall.logs.join('\n')).toMatch(/dashboard: cannot serve: .*EADDRINUSE/);
      const r = await runCli(['hall', 'dashboard', hall.root]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/dashboard is not listening \(dashboard\.listen/);
    } finally {
      taken.close();
    }
  });

  it('says so (exit 1) naming dashboard.listen when the hall has no dashboard', async () => {
    const hall = await startTestHall({ adapters: [dashboardAdapter] });
    halls.push(hall);
    const [r, json] = await Promise.all([runCli(['hall', 'dashboard', hall.root]), runCli(['hall', 'dashboard', hall.root, '--json'])]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('dashboard.listen');
    // Under --json the error is a JSON object on stdout (README, "Using it"), with the same exit code.
    expect(json).toMatchObject({ code: 1, stderr: '' });
    expect(JSON.parse(json.stdout).error).toBe(r.stderr.trimEnd());
  });
});
