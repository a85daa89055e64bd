/**
 * The hall starts its raiders itself (posix_spawn, no fork server), and
 * each raider's stderr goes through a spool file that the hall copies into
 * the slot log with the run id in front: live, and across a kill -9 of the
 * hall, every line once.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commandLine, parentOf, processGroupOf } from '../support/processes.js';
import { eventually, request, runStarted, spawnHallProcess, tapEvents, tempRoot } from '../support/hall-client.js';
import { startTestHall, type TestHall } from '../support/test-hall.js';

const CONFIG = 'raiders: { bjorn: {} }\n';

let hall: TestHall | undefined;
let halls: ChildProcess[] = [];
/** Raiders that outlive their hall on purpose; whatever a failed test leaves of them goes. */
let raiders: number[] = [];
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
  for (const h of halls) h.kill('SIGKILL');
  halls = [];
  for (const pid of raiders) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  raiders = [];
});

/** Child processes of `pid` whose command line holds `text`. */
function childrenRunning(pid: number, text: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((child) => {
      try {
        return parentOf(child) === pid && commandLine(child).includes(text);
      } catch {
        return false; // gone meanwhile
      }
    });
}

function slotLog(root: string, slot: string): string {
  return fs.readFileSync(path.join(root, '.raider-hall/logs', `${slot}.log`), 'utf8');
}

function countOf(text: string, line: string): number {
  return text.split('\n').filter((l) => l === line).length;
}

describe('the hall starts its raiders itself', () => {
  it('as its own children, each leading its own process group, with no fork server', async () => {
    hall = await startTestHall({ config: CONFIG });
    const flag = path.join(hall.root, 'go');
    const reply = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${flag}` });
    await runStarted(reply.events_path);
    expect(parentOf(reply.pid as number)).toBe(process.pid);
    expect(processGroupOf(reply.pid as number)).toBe(reply.pid);
    expect(childrenRunning(process.pid, 'raider-spawner.cjs')).toEqual([]);
    const tap = await hall.events('raider.done');
    fs.writeFileSync(flag, '');
    expect(await tap.waitFor((e) => e.id === reply.id)).toMatchObject({ status: 'completed', response: `saw ${flag}` });
    tap.close();
  });

  it('with every signal at its default and none blocked, whatever the hall ignores or catches (it starts them from a worker thread)', async () => {
    // A raider in sh, which keeps the signals it was given: Node would ignore SIGPIPE itself. It reads its
    // own status with builtins only: dash blocks every signal around the start of a command (a grep of
    // /proc/$$/status would race with the shell unblocking them, and see a full mask under load).
    const dir = tempRoot('hall-spawner-bin-');
    const raider = path.join(dir, 'signals-raider.sh');
    const out = path.join(dir, 'signals');
    fs.writeFileSync(
      raider,
      `#!/bin/sh\nwhile read -r line; do case $line in SigBlk:*|SigIgn:*) printf '%s\\n' "$line" ;; esac; done < /proc/$$/status > '${out}'\nprintf '%s\\n' '{"elapsed":0,"response":"ok","seq":1,"status":"completed","time":0,"type":"run.finished","version":1}'\n`,
      { mode: 0o755 },
    );
    hall = await startTestHall({ config: CONFIG, env: { RAIDER_HALL_RAIDER_BIN: raider } });
    const tap = await hall.events('raider.done');
    const reply = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'go' });
    expect(await tap.waitFor((e) => e.id === reply.id)).toMatchObject({ status: 'completed' });
    tap.close();
    expect(fs.readFileSync(out, 'utf8')).toBe('SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n');
  });

  it('copies stderr into the slot log while the raider runs, and removes the spool once it ended', async () => {
    hall = await startTestHall({ config: CONFIG });
    const flag = path.join(hall.root, 'go');
    const reply = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `chatter ${flag} L` });
    const root = hall.root;
    await eventually(() => expect(slotLog(root, 'bjorn')).toContain(`[${reply.id}] L before\n`));
    const spool = path.join(root, '.raider-hall/logs', `${reply.id}.stderr`);
    expect(fs.existsSync(spool)).toBe(true);
    const tap = await hall.events('raider.done');
    fs.writeFileSync(flag, '');
    expect(await tap.waitFor((e) => e.id === reply.id)).toMatchObject({ status: 'completed', response: 'L done' });
    tap.close();
    const log = slotLog(root, 'bjorn');
    expect(log.indexOf(`[${reply.id}] L after\n`)).toBeGreaterThan(log.indexOf(`[${reply.id}] L before\n`));
    expect(log.indexOf(`[${reply.id}] L after\n`)).toBeLessThan(log.indexOf(`[hall] raider ${reply.id} completed`));
    expect(fs.existsSync(spool)).toBe(false);
    expect(fs.existsSync(`${spool}.copied`)).toBe(false);
  });

  it('a kill -9 of the hall loses no stderr line and copies none twice: of a run that ended while no hall ran, and of one adopted', async () => {
    const root = tempRoot();
    fs.writeFileSync(path.join(root, '.raider-hall.yml'), CONFIG);
    const socket = path.join(root, '.raider-hall.socket');
    const first = await spawnHallProcess(root);
    halls.push(first);
    const flagA = path.join(root, 'go-a');
    const flagB = path.join(root, 'go-b');
    const a = await request(socket, { cmd: 'spawn', name: '1bjorn', mission: `chatter ${flagA} A` });
    const b = await request(socket, { cmd: 'spawn', name: '2bjorn', mission: `chatter ${flagB} B` });
    raiders.push(a.pid, b.pid);
    expect(parentOf(a.pid)).toBe(first.pid);
    await eventually(() => expect(slotLog(root, '1bjorn')).toContain(`[${a.id}] A before\n`));
    await eventually(() => expect(slotLog(root, '2bjorn')).toContain(`[${b.id}] B before\n`));
    await new Promise<void>((resolve) => {
      first.once('exit', () => resolve());
      first.kill('SIGKILL');
    });
    // A writes its last line and ends while no hall runs: only its spool holds the line.
    fs.writeFileSync(flagA, '');
    await eventually(() => expect(fs.readFileSync(a.events_path, 'utf8')).toContain('run.finished'));
    expect(slotLog(root, '1bjorn')).not.toContain('A after');

    const second = await spawnHallProcess(root);
    halls.push(second);
    const tap = await tapEvents(socket, 'raider.');
    const logA = slotLog(root, '1bjorn');
    expect(countOf(logA, `[${a.id}] A before`)).toBe(1);
    expect(countOf(logA, `[${a.id}] A after`)).toBe(1);
    expect(logA.indexOf(`[${a.id}] A after\n`)).toBeLessThan(logA.indexOf(`[hall] raider ${a.id} completed`));
    // B, adopted, writes on: its line reaches the log through the new hall.
    fs.writeFileSync(flagB, '');
    expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === b.id)).toMatchObject({ status: 'completed' });
    tap.close();
    const logB = slotLog(root, '2bjorn');
    expect(countOf(logB, `[${b.id}] B before`)).toBe(1);
    expect(countOf(logB, `[${b.id}] B after`)).toBe(1);
    expect(fs.readdirSync(path.join(root, '.raider-hall/logs')).filter((f) => f.includes('.stderr'))).toEqual([]);
  });
});
