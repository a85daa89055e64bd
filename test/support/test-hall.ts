/**
 * A real hall on a temporary root for integration tests: real raider
 * processes (the fake raider of test/fixtures), a real control socket, real
 * files, started in-process for speed. The helpers that need no hall in
 * this process (socket requests, event taps, the CLI, `spawnHallProcess`)
 * are in hall-client.ts and re-exported here.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { HallAdapterFactory } from '../../src/ports/hall-services.js';
import { startHall, type RunningHall } from '../../src/actors/hall-supervisor.js';
import { type EventTap, hallEnv, type Json, rawExchange, request, tapEvents, tempRoot } from './hall-client.js';

export * from './hall-client.js';

export interface TestHallOptions {
  root?: string;
  adapters?: readonly HallAdapterFactory[];
  config?: string;
  env?: Record<string, string | undefined>;
  /** Every bus event from the hall's first one (the boot's included), before any tap could subscribe. */
  onEvent?: (event: Json) => void;
}

export interface TestHall {
  root: string;
  socket: string;
  hall: RunningHall;
  logs: string[];
  request(payload: Json): Promise<Json>;
  /** Sends raw bytes and collects `count` reply lines. */
  raw(data: string | Buffer, count: number): Promise<Json[]>;
  events(filter?: string): Promise<EventTap>;
  stop(): Promise<void>;
}

export async function startTestHall(options: TestHallOptions = {}): Promise<TestHall> {
  const root = options.root ?? tempRoot();
  if (options.config !== undefined) fs.writeFileSync(path.join(root, '.raider-hall.yml'), options.config);
  const logs: string[] = [];
  const hall = await startHall({
    root,
    env: hallEnv(options.env),
    log: (line) => logs.push(line),
    ...(options.adapters ? { adapters: options.adapters } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  });
  const socket = hall.paths.socket;
  return {
    root: hall.paths.root,
    socket,
    hall,
    logs,
    request: (payload) => request(socket, payload),
    raw: (data, count) => rawExchange(socket, data, count),
    events: (filter = '') => tapEvents(socket, filter),
    async stop() {
      hall.stop();
      await hall.stopped;
    },
  };
}
