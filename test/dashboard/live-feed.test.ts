/**
 * The page's live feed (web/dashboard/live.js, a plain module the browser
 * loads as it is), in Node with a simulated clock and a stand-in for the
 * browser's EventSource, fetch and animation frames: a calm bus is streamed
 * and handed out a moment after it comes; the sudden start of a burst is not
 * drawn at all before the page polls (docs/dashboard.md, "A burst").
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/** An EventSource that the test feeds: `message` plays the hall's one event. */
class TestEventSource {
  static opened: TestEventSource[] = [];
  closed = false;
  onmessage: ((message: { data: string }) => void) | null = null;
  constructor(readonly url: string) {
    TestEventSource.opened.push(this);
  }
  addEventListener(): void {}
  close(): void {
    this.closed = true;
  }
  message(event: Record<string, unknown>): void {
    this.onmessage?.({ data: JSON.stringify(event) });
  }
}

interface PollReply {
  events?: Array<Record<string, unknown>>;
  latest: number;
  reload?: true;
}

interface Feed {
  connectEvents(since: number): void;
  live: { listeners: Set<(batch: Array<Record<string, unknown>>) => void> };
}

const spawned = (seq: number) => ({ seq, type: 'raider.spawned', id: `bjorn-1000.${seq}`, slot: 'bjorn', time: 1000 });

let asked: string[];
/** What the next polls answer, in turn; `away`: the request fails, as when the hall is gone. */
let pollReplies: Array<PollReply | 'away'>;
let batches: Array<Array<Record<string, unknown>>>;
let latestGiven: number;

/** A fresh copy of live.js (its state is the module's), connected after seq `since`. */
async function connect(since: number): Promise<Feed> {
  vi.resetModules();
  // @ts-expect-error: the page's own JavaScript, without types.
  const feed: Feed = await import('../../web/dashboard/live.js');
  feed.live.listeners.add((batch) => batches.push(batch));
  feed.connectEvents(since);
  return feed;
}

function stream(): TestEventSource {
  const source = TestEventSource.opened.at(-1);
  if (source === undefined) throw new Error('no event stream was opened');
  return source;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
  TestEventSource.opened = [];
  asked = [];
  pollReplies = [];
  batches = [];
  latestGiven = 0;
  // A frame every 16 ms of the simulated clock.
  vi.stubGlobal('requestAnimationFrame', (draw: (t: number) => void) => setTimeout(() => draw(performance.now()), 16));
  vi.stubGlobal('EventSource', TestEventSource);
  vi.stubGlobal('fetch', async (path: string) => {
    asked.push(path);
    // After the replies the test gave: nothing new, as the hall says it.
    const reply = pollReplies.shift() ?? { events: [], latest: latestGiven };
    if (reply === 'away') throw new TypeError('Failed to fetch');
    latestGiven = reply.latest;
    return { json: async () => reply };
  });
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe("the page's live feed", () => {
  it('hands a calm bus to the views a moment after it comes, from the stream', async () => {
    await connect(5);
    expect(stream().url).toBe('/api/events?since=5');
    stream().message(spawned(6));
    await vi.advanceTimersByTimeAsync(20);
    expect(batches).toEqual([]);
    await vi.advanceTimersByTimeAsync(30);
    expect(batches).toEqual([[spawned(6)]]);
    expect(stream().closed).toBe(false);
    expect(asked).toEqual([]);
  });

  it("draws nothing of a burst's sudden start: it polls, and hands out what waited with the poll's events", async () => {
    await connect(5);
    const first = stream();
    // Twelve events within 12 ms: hundreds a second.
    for (let seq = 6; seq <= 17; seq++) {
      first.message(spawned(seq));
      await vi.advanceTimersByTimeAsync(1);
    }
    await vi.advanceTimersByTimeAsync(100);
    expect(first.closed).toBe(true);
    expect(batches).toEqual([]);
    // A second later the page asks for what came since the last event it has, and draws it all at once.
    pollReplies.push({ events: Array.from({ length: 40 }, (_, i) => spawned(18 + i)), latest: 57 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(asked).toEqual(['/api/events?poll=1&since=17']);
    expect(batches).toHaveLength(1);
    expect(batches[0]?.map((e) => e.seq)).toEqual(Array.from({ length: 52 }, (_, i) => 6 + i));
    // Still busy (52 events in the last second): it polls on, until a poll finds the bus calm; then it streams after what it has.
    pollReplies.push({ events: [spawned(58)], latest: 58 });
    await vi.advanceTimersByTimeAsync(3000);
    expect(asked[1]).toBe('/api/events?poll=1&since=57');
    expect(asked.slice(2).every((path) => path === '/api/events?poll=1&since=58')).toBe(true);
    expect(TestEventSource.opened).toHaveLength(2);
    expect(stream().url).toBe('/api/events?since=58');
    // What the polls brought after the first was handed out too, once.
    expect(batches.flat().map((e) => e.seq)).toEqual(Array.from({ length: 53 }, (_, i) => 6 + i));
  });

  it('streams again when a poll fails, after the last event it has', async () => {
    await connect(5);
    for (let seq = 6; seq <= 17; seq++) stream().message(spawned(seq));
    await vi.advanceTimersByTimeAsync(100);
    expect(stream().closed).toBe(true);
    pollReplies.push('away');
    const warned = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    await vi.advanceTimersByTimeAsync(1000);
    expect(warned).toHaveBeenCalledWith('dashboard: TypeError: Failed to fetch');
    expect(TestEventSource.opened).toHaveLength(2);
    expect(stream().url).toBe('/api/events?since=17');
    // What waited is drawn from there.
    await vi.advanceTimersByTimeAsync(100);
    expect(batches.flat().map((e) => e.seq)).toEqual(Array.from({ length: 12 }, (_, i) => 6 + i));
  });

  it('tells the views to load anew when a poll says the hall no longer has what the page missed', async () => {
    await connect(5);
    for (let seq = 6; seq <= 17; seq++) stream().message(spawned(seq));
    await vi.advanceTimersByTimeAsync(100);
    pollReplies.push({ latest: 5000, reload: true });
    await vi.advanceTimersByTimeAsync(1100);
    expect(batches.flat().at(-1)).toEqual({ type: 'raider.resync' });
    // Calm (thirteen events in the last second): the stream goes on from the hall's present.
    expect(stream().url).toBe('/api/events?since=5000');
  });

  it('takes a few runs at once for what they are, not a burst', async () => {
    await connect(5);
    // Three runs started and ended together: six events at once.
    for (let seq = 6; seq <= 11; seq++) stream().message(spawned(seq));
    await vi.advanceTimersByTimeAsync(100);
    expect(batches).toHaveLength(1);
    expect(stream().closed).toBe(false);
    expect(asked).toEqual([]);
  });
});
