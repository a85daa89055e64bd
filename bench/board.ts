/**
 * What the dashboard's benches share (bench/dashboard.ts, bench/statechart.ts):
 * a `raider hall start` process with its dashboard, and a burst of missions.
 */
import fs from 'node:fs';
import { readDashboardFile } from '../src/adapters/dashboard/dashboard-file.js';
import { Client, nowMs, startHall, Subscription, tempRoot, type HallProcess, type Json } from './lib.js';

export interface Board {
  url: string;
  token: string;
}

/** A hall process in a new temp root with `config`, its raiders the script `writeRaider` leaves in that root. */
export async function startBoardHall(
  label: string,
  config: string,
  writeRaider: (dir: string) => string,
): Promise<{ hall: HallProcess; board: Board }> {
  const root = tempRoot(label);
  fs.writeFileSync(`${root}/.raider-hall.yml`, config);
  const { hall } = await startHall(root, writeRaider(root));
  const file = readDashboardFile(root);
  if ('error' in file) throw new Error(file.error);
  return { hall, board: { url: file.url, token: file.token } };
}

/** Spawns `n` missions `go` to the slot bjorn, pipelined on ten connections, and waits for every raider.done. */
export async function burstRuns(hall: HallProcess, n: number): Promise<{ ms: number; ids: string[] }> {
  const sub = await Subscription.open(hall.socket);
  const clients = await Promise.all(Array.from({ length: 10 }, () => Client.connect(hall.socket)));
  const t0 = nowMs();
  // Mission k goes on connection k % 10.
  const shares = clients.map((_c, i) => Math.floor(n / 10) + (i < n % 10 ? 1 : 0));
  const replies = (
    await Promise.all(
      clients.map((c, i) => c.pipeline(Array.from({ length: shares[i] ?? 0 }, () => ({ cmd: 'spawn', name: 'bjorn', mission: 'go' })))),
    )
  ).flat();
  await Promise.all(replies.map((r: Json) => sub.done(String(r.id), 120_000)));
  const ms = nowMs() - t0;
  for (const c of clients) c.close();
  sub.close();
  return { ms, ids: replies.map((r: Json) => String(r.id)) };
}
