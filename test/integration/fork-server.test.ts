/**
 * The hall starts its raiders through a fork server (libexec/raider-spawner.cjs):
 * a small child process that forks for it and reports the exits. These tests
 * hit that process from outside: a Ctrl-C meant for the hall, and its death.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startTestHall, type Json, type TestHall } from '../support/test-hall.js';

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

const CONFIG = 'raiders: { bjorn: {} }\n';

function parentOf(pid: number): number {
  // The command name in /proc/PID/stat may hold spaces and parentheses: the fields start after the last ')'.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

function commandLine(pid: number): string {
  return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function runStarted(reply: Json): Promise<void> {
  await eventually(() => expect(fs.readFileSync(reply.events_path as string, 'utf8')).toContain('run.started'), 10_000, 10);
}

describe('the fork server', () => {
  it('starts each raider, in a process group of its own, and is not the hall', async () => {
    hall = await startTestHall({ config: CONFIG });
    const reply = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${path.join(hall.root, 'go')}` });
    await runStarted(reply);
    const server = parentOf(reply.pid as number);
    expect(server).not.toBe(process.pid);
    expect(commandLine(server)).toContain('libexec/raider-spawner.cjs');
    expect(parentOf(server)).toBe(process.pid);
    // The raider leads its own process group (SIGKILL at the end goes to the group).
    const stat = fs.readFileSync(`/proc/${reply.pid as number}/stat`, 'utf8');
    expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])).toBe(reply.pid);
    fs.writeFileSync(path.join(hall.root, 'go'), '');
  });

  it('ignores the Ctrl-C meant for the hall: exits are still reported as they happened', async () => {
    hall = await startTestHall({ config: CONFIG });
    const tap = await hall.events('raider.done');
    const flag = path.join(hall.root, 'go');
    const a = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${flag}` });
    await runStarted(a);
    const server = parentOf(a.pid as number);
    process.kill(server, 'SIGINT');
    process.kill(server, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(server)).toBe(true);
    fs.writeFileSync(flag, '');
    expect(await tap.waitFor((e) => e.id === a.id)).toMatchObject({ status: 'completed', response: `saw ${flag}` });
    // A failing raider's exit code still comes through it.
    const b = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'fail on purpose' });
    expect(await tap.waitFor((e) => e.id === b.id)).toMatchObject({ status: 'failed', exit_code: 1, error: 'on purpose' });
    expect(hall.logs.filter((l) => l.includes('spawner'))).toEqual([]);
    tap.close();
  });

  it('dies: its raiders run on and their runs end normally, and the next run gets a new fork server', async () => {
    hall = await startTestHall({ config: CONFIG });
    const tap = await hall.events('raider.done');
    const flag = path.join(hall.root, 'go');
    const a = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${flag}` });
    await runStarted(a);
    const server = parentOf(a.pid as number);
    process.kill(server, 'SIGKILL');
    await eventually(() => expect(hall!.logs).toContainEqual(expect.stringMatching(/^raider spawner ended \(signal SIGKILL\)/)));
    expect(alive(a.pid as number)).toBe(true);
    expect(await hall.request({ cmd: 'ps' })).toMatchObject({ raiders: [{ id: a.id }] });

    fs.writeFileSync(flag, '');
    expect(await tap.waitFor((e) => e.id === a.id)).toMatchObject({ status: 'completed', response: `saw ${flag}` });

    const b = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${flag}` });
    await runStarted(b);
    const next = parentOf(b.pid as number);
    expect(next).not.toBe(server);
    expect(commandLine(next)).toContain('libexec/raider-spawner.cjs');
    expect(await tap.waitFor((e) => e.id === b.id)).toMatchObject({ status: 'completed' });
    tap.close();
  });

  it('ends when its hall has stopped', async () => {
    hall = await startTestHall({ config: CONFIG });
    const a = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${path.join(hall.root, 'go')}` });
    await runStarted(a);
    const server = parentOf(a.pid as number);
    fs.writeFileSync(path.join(hall.root, 'go'), '');
    await hall.stop();
    hall = undefined;
    // Reaped by this process (its parent) once it exited: nothing left in /proc.
    await eventually(() => expect(fs.existsSync(`/proc/${server}`)).toBe(false), 5000);
  });
});

