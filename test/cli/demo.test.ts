/**
 * The offline demo: `raider demo DIR` runs a hall whose raiders are the real
 * built-in raider with the scripted engine (no RAIDER_HALL_RAIDER_BIN).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { eventually, hall, hallRoot, pidFileOf, removeRoots, request, runCli, socketOf, demoEnded, startDemo } from './cli-helpers.js';

// Every command is a whole node process: on a busy machine they take a while.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const REAL_RAIDER = { RAIDER_HALL_RAIDER_BIN: undefined };

describe('raider demo', () => {
  it('answers "look at the files" with the scripted tool calls, and stops on SIGINT with exit 0', async () => {
    const dir = path.join(hallRoot(undefined, 'demo-'), 'demo-hall');
    const demo = startDemo(['demo', dir]);
    try {
      await eventually(async () => expect(await request(socketOf(dir), { cmd: 'status' })).toMatchObject({ running: 0 }), 30_000, 50);
      expect(fs.existsSync(path.join(dir, '.raider-hall.yml'))).toBe(true);
      expect(demo.err).toContain(`Demo hall in ${dir}`);
      expect(demo.err).toContain('raider hall spawn bjorn "look at the files" --attach');

      // A second demo on the same directory says the first runs, without the banner.
      const again = await runCli(['demo', dir]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`The demo hall is already running in ${dir}`);
      expect(again.stderr).not.toContain('Try in another terminal');

      const r = await hall(['spawn', 'bjorn', 'look at the files', '--attach'], dir, { env: REAL_RAIDER });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/^Spawned raider bjorn-\d+(\.\d+)? \(PID \d+\) in slot bjorn\.\n$/);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines[0]).toBe('· run started (scripted)');
      expect(lines).toContain('→ list_dir {"path":"."}');
      expect(lines).toContain('→ read_file {"path":"README.md"}');
      expect(lines.find((l) => l.startsWith('← list_dir succeeded: '))).toContain('README.md');
      expect(lines.find((l) => l.startsWith('← read_file succeeded: '))).toContain('# Demo hall');
      expect(lines).toContain('I looked around: a README and a hall config. (look at the files)');
      expect(lines.at(-1)).toBe('■ completed');
      // The tool calls come before their results, the final message after them.
      const at = (prefix: string) => lines.findIndex((l) => l.startsWith(prefix));
      expect(at('→ list_dir')).toBeLessThan(at('← list_dir'));
      expect(at('← list_dir')).toBeLessThan(at('→ read_file'));
      expect(at('← read_file')).toBeLessThan(at('I looked around'));
      // The foreground view of the hall saw the run.
      await eventually(() => expect(demo.out).toMatch(/raider\.done bjorn-\S+ completed: I looked around/));
    } finally {
      demo.child.kill('SIGINT');
    }
    expect(await demoEnded(demo, 10_000)).toEqual({ code: 0, signal: null });
    expect(demo.out).toContain('hall.stopping');
    expect(fs.existsSync(socketOf(dir))).toBe(false);
    expect(fs.existsSync(pidFileOf(dir))).toBe(false);
  });

  it('runs astrid, the built-in raider over ACP: "look at the files" completes with the scripted answer', async () => {
    const dir = path.join(hallRoot(undefined, 'demo-'), 'demo-hall');
    const demo = startDemo(['demo', dir]);
    try {
      await eventually(async () => expect(await request(socketOf(dir), { cmd: 'status' })).toMatchObject({ running: 0 }), 30_000, 50);
      expect(demo.err).toContain('raider hall spawn astrid "look at the files" --attach');
      const r = await hall(['spawn', 'astrid', 'look at the files', '--attach'], dir, { env: REAL_RAIDER });
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines[0]).toBe('· run started (acp)');
      expect(lines).toContain('I looked around: a README and a hall config. (look at the files)');
      expect(lines.at(-1)).toBe('■ completed');
      await eventually(() => expect(demo.out).toMatch(/raider\.done astrid-\S+ completed: I looked around/));

      // The demo serves the dashboard: its URL logs in, and the run is in the runs' API.
      expect(demo.err).toContain('raider hall dashboard');
      const url = await hall(['dashboard', '--json'], dir);
      expect(url.code, url.stderr).toBe(0);
      const login = new URL(String(JSON.parse(url.stdout).url));
      expect(login.hostname).toBe('127.0.0.1');
      const page = await fetch(login, { redirect: 'manual' });
      const cookie = page.headers.get('set-cookie')?.split(';')[0];
      expect(cookie).toMatch(/^raider_hall_dashboard_\d+=/);
      const runs = await fetch(new URL('/api/runs', login), { headers: { cookie: String(cookie) } });
      expect(runs.status).toBe(200);
      expect(JSON.stringify(await runs.json())).toMatch(/astrid-\d+/);
    } finally {
      demo.child.kill('SIGINT');
    }
    expect(await demoEnded(demo, 10_000)).toEqual({ code: 0, signal: null });
  });
});
