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
  private readonly listeners: Array<{ type: string; listen: () => void }> = [];
  constructor(readonly url: string) {
    TestEventSource.opened.push(this);
  }
  addEventListener(type: string, listen: () => void): void {
    this.listeners.push({ type, listen });
  }
  close(): void {
    this.closed = true;
  }
  message(event: Record<string, unknown>): void {
    this.onmessage?.({ data: JSON.stringify(event) });
  }
  /** The browser's `open`: the hall answered, and sends every event from now on. */
  open(): void {
    for (const { type, listen } of this.listeners) if (type === 'open') listen();
  }
}

interface PollReply {
  events?: Array<Record<string, unknown>>;
  latest: number;
  reload?: true;
}

interface Feed {
  connectEvents(since: number): void;
  live: {
    listeners: Set<(batch: Array<Record<string, unknown>>) => void>;
    heldListeners: Set<(held: number) => void>;
    setFrozen(frozen: boolean): void;
  };
}

const spawned = (seq: number) => ({ seq, type: 'raider.spawned', id: `bjorn-1000.${seq}`, slot: 'bjorn', time: 1000 });

let asked: string[];
/** What the next polls answer, in turn; `away`: the request fails, as when the hall is gone. */
let pollReplies: Array<PollReply | 'away'>;
let batches: Array<Array<Record<string, unknown>>>;
let latestGiven: number;

/** A fresh copy of live.js (its state is the module's), connected after seq `since`; `listening`: a view listens from the start. */
async function connect(since: number, listening = true): Promise<Feed> {
  vi.resetModules();
  // @ts-expect-error: the page's own JavaScript, without types.
  const feed: Feed = await import('../../web/dashboard/live.js');
  if (listening) feed.live.listeners.add(view);
  feed.connectEvents(since);
  return feed;
}

/** The views' batches, kept in `batches`. */
function view(batch: Array<Record<string, unknown>>): void {
  batches.push(batch);
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
  vi.stubGlobal('cancelAnimationFrame', (frame: ReturnType<typeof setTimeout> | null) => clearTimeout(frame ?? undefined));
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

/** The start of a burst on the stream: `n` events from seq `from`, one every 2 ms (500 a second). */
async function burstStart(source: TestEventSource, from: number, n: number): Promise<void> {
  for (let seq = from; seq < from + n; seq++) {
    source.message(spawned(seq));
    await vi.advanceTimersByTimeAsync(2);
  }
}

const seqs = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

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
    // Forty events in 80 ms: as many come during a second look as during the first.
    await burstStart(first, 6, 40);
    await vi.advanceTimersByTimeAsync(100);
    expect(first.closed).toBe(true);
    expect(batches).toEqual([]);
    // A second later the page asks for what came since the last event it has, and draws it all at once.
    pollReplies.push({ events: seqs(46, 85).map(spawned), latest: 85 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(asked).toEqual(['/api/events?poll=1&since=45']);
    expect(batches).toHaveLength(1);
    expect(batches[0]?.map((e) => e.seq)).toEqual(seqs(6, 85));
    // Still busy (80 events in the last second): it polls on, until a poll finds the bus calm; then it streams after what it has.
    pollReplies.push({ events: [spawned(86)], latest: 86 });
    await vi.advanceTimersByTimeAsync(3000);
    expect(asked[1]).toBe('/api/events?poll=1&since=85');
    expect(asked.slice(2).every((path) => path === '/api/events?poll=1&since=86')).toBe(true);
    expect(TestEventSource.opened).toHaveLength(2);
    expect(stream().url).toBe('/api/events?since=86');
    // What the polls brought after the first was handed out too, once.
    expect(batches.flat().map((e) => e.seq)).toEqual(seqs(6, 86));
  });

  it('takes a few runs started at once for what they are, not a burst', async () => {
    await connect(5);
    // Three runs started and ended together: six events at once, drawn after the calm wait.
    for (let seq = 6; seq <= 11; seq++) stream().message(spawned(seq));
    await vi.advanceTimersByTimeAsync(50);
    expect(batches.flat().map((e) => e.seq)).toEqual(seqs(6, 11));
    // Eight at once: twelve events, more than a calm wait's share; nothing follows them, so they are drawn after a second look.
    for (let seq = 12; seq <= 23; seq++) stream().message(spawned(seq));
    await vi.advanceTimersByTimeAsync(100);
    expect(batches.flat().map((e) => e.seq)).toEqual(seqs(6, 23));
    expect(stream().closed).toBe(false);
    expect(asked).toEqual([]);
  });

  it('streams again when a poll fails, after the last event it has', async () => {
    await connect(5);
    await burstStart(stream(), 6, 40);
    await vi.advanceTimersByTimeAsync(20);
    expect(stream().closed).toBe(true);
    pollReplies.push('away');
    const warned = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    await vi.advanceTimersByTimeAsync(1100);
    expect(warned).toHaveBeenCalledWith('dashboard: TypeError: Failed to fetch');
    expect(TestEventSource.opened).toHaveLength(2);
    expect(stream().url).toBe('/api/events?since=45');
    // What waited is drawn from there.
    await vi.advanceTimersByTimeAsync(200);
    expect(batches.flat().map((e) => e.seq)).toEqual(seqs(6, 45));
  });

  it('tells the views to load anew when a poll says the hall no longer has what the page missed', async () => {
    await connect(5);
    await burstStart(stream(), 6, 40);
    pollReplies.push({ latest: 5000, reload: true });
    await vi.advanceTimersByTimeAsync(1100);
    expect(batches.flat().at(-1)).toEqual({ type: 'raider.resync' });
    // Busy still (41 events in the last second): the next poll goes on from the hall's present.
    await vi.advanceTimersByTimeAsync(1000);
    expect(asked.at(-1)).toBe('/api/events?poll=1&since=5000');
  });

  it('tells a frozen page how many updates it holds at each poll, and draws them when it is released', async () => {
    const feed = await connect(5);
    const held: number[] = [];
    feed.live.heldListeners.add((n) => held.push(n));
    feed.live.setFrozen(true);
    await burstStart(stream(), 6, 40);
    // Frozen, the feed does not tell a burst by its first waits: fifty waiting make it one.
    await burstStart(stream(), 46, 10);
    expect(stream().closed).toBe(true);
    pollReplies.push({ events: seqs(56, 60).map(spawned), latest: 60 });
    await vi.advanceTimersByTimeAsync(1100);
    expect(held.at(-1)).toBe(55);
    expect(batches).toEqual([]);
    feed.live.setFrozen(false);
    await vi.advanceTimersByTimeAsync(20);
    expect(batches.flat().map((e) => e.seq)).toEqual(seqs(6, 60));
  });

  it('closes the stream when no view has listened for two seconds (a statechart page), and asks nothing while closed', async () => {
    const feed = await connect(5);
    feed.live.listeners.delete(view);
    stream().message(spawned(6));
    await vi.advanceTimersByTimeAsync(1900);
    expect(stream().closed).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    expect(stream().closed).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(TestEventSource.opened).toHaveLength(1);
    expect(asked).toEqual([]);
    expect(batches).toEqual([]);
  });

  it('opens it when the first view listens, after the seq of the data the page was drawn from; a page whose views never listen never opens it', async () => {
    const feed = await connect(5, false);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(TestEventSource.opened).toHaveLength(0);
    feed.live.listeners.add(view);
    expect(stream().url).toBe('/api/events?since=5');
    stream().open();
    stream().message(spawned(6));
    await vi.advanceTimersByTimeAsync(50);
    // Its first opening replays what came after the page's data: the views load nothing anew.
    expect(batches).toEqual([[spawned(6)]]);
  });

  it('stops polling in a burst when no view listens any more', async () => {
    const feed = await connect(5);
    await burstStart(stream(), 6, 40);
    await vi.advanceTimersByTimeAsync(1100);
    expect(asked).toEqual(['/api/events?poll=1&since=45']);
    feed.live.listeners.delete(view);
    pollReplies.push({ events: seqs(46, 145).map(spawned), latest: 145 });
    // Two seconds after its last view left, the feed is closed: the polls of those seconds, then none.
    await vi.advanceTimersByTimeAsync(2100);
    const polled = asked.length;
    expect(polled).toBeLessThanOrEqual(3);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(asked).toHaveLength(polled);
    expect(TestEventSource.opened).toHaveLength(1);
  });

  it('keeps the stream while one view follows another (a new page of the dashboard)', async () => {
    const feed = await connect(5);
    feed.live.listeners.delete(view);
    await vi.advanceTimersByTimeAsync(500);
    feed.live.listeners.add(view);
    await vi.advanceTimersByTimeAsync(5000);
    expect(TestEventSource.opened).toHaveLength(1);
    expect(stream().closed).toBe(false);
  });

  it("opens it again from the hall's present when a view listens, and tells the views to load anew once it is open", async () => {
    const feed = await connect(5);
    feed.live.listeners.delete(view);
    await vi.advanceTimersByTimeAsync(2100);
    expect(stream().closed).toBe(true);
    feed.live.listeners.add(view);
    expect(TestEventSource.opened).toHaveLength(2);
    // No replay of what came while it was closed: that would be a burst to draw, of events the views' own requests have.
    expect(stream().url).toBe('/api/events');
    await vi.advanceTimersByTimeAsync(100);
    expect(batches).toEqual([]);
    stream().open();
    stream().message(spawned(90));
    await vi.advanceTimersByTimeAsync(50);
    expect(batches.flat()).toEqual([{ type: 'raider.resync' }, spawned(90)]);
  });
});
