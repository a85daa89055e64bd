/**
 * Two halls of one shared cluster on the embedded PostgreSQL with one fake
 * Bot API, as the Telegram cluster tests use them: hall-a polls the bot and
 * its one room is held by a long run, so what comes to the cluster (a
 * chat's message, a spawn on hall-b's socket) runs on hall-b.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { telegramAdapter } from '../../src/adapters/telegram/telegram-adapter.js';
import { FakeBotApi } from '../telegram/fake-bot-api.js';
import { fast } from '../telegram/telegram-support.js';
import { eventually, startTestHall, tempRoot, type EventTap, type TestHall } from '../support/test-hall.js';

export const TOKEN = '12345:good-token';

export interface BusyPollerPair {
  api: FakeBotApi;
  hallA: TestHall;
  hallB: TestHall;
  eventsA: EventTap;
  eventsB: EventTap;
  /** Ends hall-a's long run, stops both halls and the fake Bot API. */
  stop(): Promise<void>;
}

/** Starts the pair; `config` is a hall's config (its `max_running` must be 1) for the fake Bot API's root. */
export async function startBusyPollerPair(config: (apiRoot: string, hallId: 'hall-a' | 'hall-b') => string): Promise<BusyPollerPair> {
  const api = await FakeBotApi.start([TOKEN]);
  const release = path.join(tempRoot(), 'release');
  let hallA: TestHall | undefined;
  let hallB: TestHall | undefined;
  let eventsA: EventTap | undefined;
  let eventsB: EventTap;
  try {
    hallA = await startTestHall({ config: config(api.url, 'hall-a'), adapters: [telegramAdapter(fast)] });
    const polling = hallA;
    eventsA = await hallA.events('');
    // hall-a is alone: it polls the bot and takes the long run, and has no room left.
    await eventually(async () => expect((await polling.request({ cmd: 'status' })).telegram.ops.state).toBe('polling'));
    const busy = await hallA.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${release}` });
    await eventsA.waitFor((e) => e.type === 'raider.spawned' && e.mission_id === busy.mission_id);
    hallB = await startTestHall({ config: config(api.url, 'hall-b'), adapters: [telegramAdapter(fast)] });
    eventsB = await hallB.events('');
  } catch (err) {
    // Half started, the caller gets no pair to stop: the long run would wait for ever.
    eventsA?.close();
    fs.writeFileSync(release, '');
    await Promise.all([hallA?.stop(), hallB?.stop()]);
    await api.close();
    throw err;
  }
  return {
    api,
    hallA,
    hallB,
    eventsA,
    eventsB,
    async stop() {
      eventsA.close();
      eventsB.close();
      fs.writeFileSync(release, '');
      await Promise.all([hallA.stop(), hallB.stop()]);
      await api.close();
    },
  };
}
