/**
 * `raider hall logs ID` shows that run's lines only, also on a plain slot
 * whose parallel runs share the slot log, and also with no hall running:
 * every raider stderr line in the slot log starts with its run id (issue 14,
 * item 8). The hall copies stderr line by line: a last line without
 * newline, a very long line and bytes that are not UTF-8 arrive, and none is
 * lost when the raider exits.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  doneOf,
  doneTap,
  eventually,
  hall,
  hallRoot,
  removeRoots,
  request,
  socketOf,
  startHallProcess,
  type HallProcess,
} from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

// A test that fails half-way must not leave its hall running.
const halls: HallProcess[] = [];
afterEach(async () => {
  for (const h of halls.splice(0)) await h.stop();
});

async function startHall(root: string): Promise<HallProcess> {
  const h = await startHallProcess(root);
  halls.push(h);
  return h;
}

function slotLog(root: string, slot: string): string {
  return fs.readFileSync(path.join(root, '.raider-hall', 'logs', `${slot}.log`), 'latin1');
}

describe('logs ID on a plain slot', () => {
  it("prints the run's own lines, not those of a parallel run; the same from the files when no hall runs", async () => {
    // mcp on the entry: the first run notes in the log that the hall ignores it, a line about the entry that stays the run's.
    const root = hallRoot('raiders: { bjorn: { mcp: true } }\n');
    const h = await startHall(root);
    const tap = await doneTap(root);
    const go = path.join(root, 'go');
    const a = await request(socketOf(root), { cmd: 'spawn', name: 'bjorn', mission: `chatter ${go} alpha` });
    const b = await request(socketOf(root), { cmd: 'spawn', name: 'bjorn', mission: `chatter ${go} beta` });
    // Both runs wrote their first line before either ends: their parts of the log interleave.
    await eventually(() => {
      expect(slotLog(root, 'bjorn')).toContain(`[${a.id}] alpha before\n`);
      expect(slotLog(root, 'bjorn')).toContain(`[${b.id}] beta before\n`);
    });
    fs.writeFileSync(go, '');
    await doneOf(tap, a.id);
    await doneOf(tap, b.id);
    tap.close();
    const log = slotLog(root, 'bjorn');
    expect(log.indexOf(`[hall] raider ${b.id} started`)).toBeLessThan(log.indexOf(`[hall] raider ${a.id} completed`));

    const expectedA = [
      `[hall] raider ${a.id} started`,
      '[hall] raider bjorn: mcp in .raider-hall.yml ignored',
      `[${a.id}] alpha before`,
      `[${a.id}] alpha after`,
      `[hall] raider ${a.id} completed: alpha done`,
    ];
    const running = await hall(['logs', a.id], root);
    expect(running.code).toBe(0);
    expect(running.stdout).toBe(`${expectedA.join('\n')}\n`);
    const logsB = await hall(['logs', b.id], root);
    expect(logsB.stdout).not.toContain('alpha');
    expect(logsB.stdout).toContain(`[${b.id}] beta after\n`);

    expect((await h.stop()).code).toBe(0);
    const stopped = await hall(['logs', a.id], root);
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toBe(running.stdout);
    const followStopped = await hall(['logs', '--follow', a.id], root);
    expect(followStopped.stdout).toBe(running.stdout);
    const unknown = await hall(['logs', 'bjorn-123'], root);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('raider bjorn-123 not found');
  });

  it('carries odd stderr whole: a last line without newline, a long line cut with a note, bytes that are not UTF-8', async () => {
    const root = hallRoot('raiders: { bjorn: {} }\n');
    const h = await startHall(root);
    const tap = await doneTap(root);
    const run = await request(socketOf(root), { cmd: 'spawn', name: 'bjorn', mission: 'stderr-odd' });
    expect(await doneOf(tap, run.id)).toMatchObject({ status: 'completed', response: 'odd stderr written' });
    tap.close();
    const lines = slotLog(root, 'bjorn').split('\n');
    const mine = lines.filter((l) => l.startsWith(`[${run.id}] `)).map((l) => l.slice(run.id.length + 3));
    // latin1 shows each byte as one character: the bytes arrived as the raider wrote them.
    expect(mine[0]).toBe('plain line');
    expect(mine[1]).toBe('\x00\xff\xfeA');
    // 16383 y, then the 3-byte character that crosses the 16 KiB mark is cut whole, with the rest of the line.
    expect(mine[2]).toBe(`${'y'.repeat(16383)} [... ${3 + 120_000} more bytes of this line cut]`);
    expect(mine[3]).toBe('last words without newline');
    expect(mine).toHaveLength(4);
    // Every stderr line is in the log before the run's result line.
    const result = lines.findIndex((l) => l.startsWith(`[hall] raider ${run.id} completed`));
    expect(result).toBe(lines.findIndex((l) => l.startsWith(`[${run.id}] last words`)) + 1);
    expect((await hall(['logs', run.id], root)).stdout).toContain(
      `[${run.id}] last words without newline\n[hall] raider ${run.id} completed`,
    );
    expect((await h.stop()).code).toBe(0);
  });
});
