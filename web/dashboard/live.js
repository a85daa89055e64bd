// What every view of the dashboard shares: JSON requests to the hall's API,
// and the bus as live events handed out in batches (a frame's worth; on a
// busy bus at most ten a second), so a burst costs a few renders a second.
// In a burst the page stops streaming and asks for what came once a second.
import { useEffect, useRef, useState } from 'preact/hooks';

/** A failed request leaves the view as it was; the console says why. */
export function reportFailure(err) {
  console.warn(`dashboard: ${err}`);
}

export async function getJson(path) {
  const res = await fetch(path, { credentials: 'same-origin' });
  return res.json();
}

export async function postJson(path, body) {
  const res = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.json();
}

// ------------------------------------------------------------ live events

/** Events a frozen page holds at most; older ones are summed up as one `resync` (the views load anew). */
const HELD_MAX = 5000;
/**
 * How long the views wait between two hand-outs, by how many events a second
 * the bus carried over the last RATE_WINDOW_MS: a calm bus (a few runs a
 * second) at the next frame; a busy one every BUSY_INTERVAL_MS; a burst of missions (hundreds
 * of events a second) every BURST_INTERVAL_MS. A frame's layout and paint of
 * the views, not the events' handling, were most of a page's work in a
 * burst, and that work competes with the hall for the machine: with three
 * pages open, a 500-mission burst took 2.86x as long as with none when they
 * drew every frame, ~1.8x at ten draws a second, ~1.5x at two
 * (bench/RESULTS.md).
 */
const BUSY_RATE = 40;
const BUSY_INTERVAL_MS = 100;
const BURST_RATE = 100;
const BURST_INTERVAL_MS = 500;
/**
 * From BURST_RATE the page closes its event stream and asks the hall for what
 * came (`/api/events?poll=1`) every POLL_MS, until the bus is back under
 * BUSY_RATE: a streamed event costs the browser its own delivery, parse and
 * dispatch, which in a burst (hundreds a second, on each open page) was as
 * much of the page's work as its renders; a poll costs one request and one
 * parse.
 */
const POLL_MS = 1000;
/** Events waiting for their hand-out that make a burst: BURST_RATE's worth of BURST_INTERVAL_MS. */
const BURST_QUEUE = (BURST_RATE * BURST_INTERVAL_MS) / 1000;
/**
 * A calm bus's events wait CALM_WAIT_MS for their hand-out (then the next
 * frame). SUDDEN_BURST coming during that wait (a few hundred a second) may
 * be the start of a burst, or a few runs started at once: the page looks
 * once more, and if as many come during a second wait it is a burst, and
 * the page polls before it has drawn any of it. A burst's first frames,
 * drawn from the stream before its rate said burst, were most of a page's
 * work in one (a trace of a 500-mission burst: three or four frames of
 * 30-200 ms each in its first 250 ms, then one a second).
 */
const CALM_WAIT_MS = 30;
const SUDDEN_BURST = 10;

/** The bus's rate is taken over this window: a frame that happens to carry two events is no burst. */
const RATE_WINDOW_MS = 1000;

/**
 * The feed opens when the first view listens, and with no view listening for
 * this long it closes: a statechart page follows its actor on a stream of its
 * own, and the hall then serves it no bus events, nor does its browser take
 * any in. A view that listens again opens it from the hall's present, and is
 * told to load anew (`raider.resync`) once the stream is open, so nothing
 * that came meanwhile is missed.
 */
const UNHEARD_MS = 2000;

/** A set of views that tells the feed when it changes (`live.heard`), so the feed runs only while someone listens. */
class Listeners extends Set {
  add(listener) {
    super.add(listener);
    live.heard?.();
    return this;
  }

  delete(listener) {
    const had = super.delete(listener);
    live.heard?.();
    return had;
  }
}

function intervalAt(rate) {
  if (rate >= BURST_RATE) return BURST_INTERVAL_MS;
  return rate >= BUSY_RATE ? BUSY_INTERVAL_MS : 0;
}

/**
 * Bus events, handed to listeners in one batch at an animation frame (on a
 * busy bus, after the wait `intervalAt` gives; while the feed polls, once per
 * poll). While frozen they are held; `heldListeners` hear how many, at each
 * hand-out.
 */
export const live = {
  queue: [],
  held: 0,
  listeners: new Listeners(),
  heldListeners: new Listeners(),
  frozen: false,
  scheduled: false,
  /** The pending hand-out's timer and frame (cancelled when the feed begins to poll). */
  pending: { timer: null, frame: null },
  /** True while the feed polls: each poll hands out what it brought, nothing else does. */
  polling: false,
  /** [time, events] of the hand-outs of the last RATE_WINDOW_MS: their sum is the bus's rate a second, the last one when the views last got a batch. */
  recent: [],
  push(event) {
    this.queue.push(event);
    if (this.frozen) this.held++;
    if (this.queue.length > HELD_MAX) this.queue = [{ type: 'raider.resync' }, ...this.queue.slice(-HELD_MAX / 2)];
    // As many waiting as a burst brings between two hand-outs: a burst, known before the next hand-out's rate says so.
    if (this.queue.length === BURST_QUEUE) this.onBurst?.();
    this.schedule();
  },
  /** A hand-out after the wait the bus's rate gives; `secondLook`: the last calm wait saw SUDDEN_BURST come. */
  schedule(secondLook = false) {
    if (this.scheduled || this.polling) return;
    this.scheduled = true;
    const queued = this.queue.length;
    const now = performance.now();
    const rate = this.rate(now);
    const last = this.recent.at(-1)?.[0];
    // Older than the window, the last hand-out is gone from `recent`, and no wait is left anyway.
    const calm = rate < BUSY_RATE || last === undefined;
    const wait = calm ? CALM_WAIT_MS : last + intervalAt(rate) - now;
    const atFrame = () => {
      this.pending.timer = null;
      this.pending.frame = requestAnimationFrame(() => {
        this.scheduled = false;
        this.pending.frame = null;
        if (calm && !this.frozen && this.queue.length - queued >= SUDDEN_BURST) {
          if (!secondLook) return this.schedule(true);
          // Still coming: a burst, which the feed polls for (when it can: it knows a seq).
          if (this.onBurst?.()) return undefined;
        }
        return this.handOut();
      });
    };
    if (wait > 0) this.pending.timer = setTimeout(atFrame, wait);
    else atFrame();
  },
  /** Forgets the pending hand-out: the feed polls now, and each poll hands out. */
  cancelPending() {
    clearTimeout(this.pending.timer);
    cancelAnimationFrame(this.pending.frame);
    this.pending = { timer: null, frame: null };
    this.scheduled = false;
  },
  /** Gives the views what waits (the frozen page: how much waits). */
  handOut() {
    const now = performance.now();
    if (this.frozen) {
      this.recent.push([now, 0]);
      for (const tell of this.heldListeners) tell(this.held);
      return;
    }
    const batch = this.queue;
    this.queue = [];
    this.recent.push([now, batch.length]);
    if (batch.length > 0) for (const listen of this.listeners) listen(batch);
    if (this.rate(now) >= BURST_RATE) this.onBurst?.();
  },
  /** A poll's hand-out: at the next frame, whatever the rate. */
  handOutPolled() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      this.handOut();
    });
  },
  /** Events a second over the last RATE_WINDOW_MS: those handed out, and those waiting. */
  rate(now) {
    while (this.recent.length > 0 && this.recent[0][0] < now - RATE_WINDOW_MS) this.recent.shift();
    let events = this.queue.length;
    for (const [, n] of this.recent) events += n;
    return (events * 1000) / RATE_WINDOW_MS;
  },
  /**
   * Told when the bus is in a burst (BURST_RATE at a hand-out, BURST_QUEUE
   * events waiting, or SUDDEN_BURST coming during each of two calm waits):
   * the feed polls from then on. Returns whether it does (it cannot before
   * it knows a seq).
   */
  onBurst: null,
  /** Told when views start or stop listening: the feed opens or closes (connectEvents). */
  heard: null,
  /** Whether any view listens, for batches or for how many are held. */
  listened() {
    return this.listeners.size + this.heldListeners.size > 0;
  },
  setFrozen(frozen) {
    this.frozen = frozen;
    this.held = 0;
    if (this.polling) this.handOutPolled();
    else this.schedule();
  },
};

/**
 * Feeds `live` from the hall: an event stream while the bus is calm or busy,
 * polls every POLL_MS in a burst, nothing while no view listens (UNHEARD_MS).
 * `since`: the seq of the newest event in the data the page was drawn from;
 * the feed starts after it (a stream's reconnects say what they saw in
 * Last-Event-ID).
 */
export function connectEvents(since) {
  let last = Number.isInteger(since) ? since : null;
  let source = null;
  let received = false;
  let pollTimer = null;
  // Opened when the first view listens (after the page's first render), from `since`; after a close, from the present.
  let closed = true;
  let opened = false;
  let unheard = null;
  const take = (event) => {
    if (Number.isInteger(event.seq)) last = event.seq;
    live.push(event);
  };
  const stream = (reopened = false) => {
    live.polling = false;
    source = new EventSource(last !== null ? `/api/events?since=${last}` : '/api/events');
    source.onmessage = (message) => {
      received = true;
      try {
        take(JSON.parse(message.data));
      } catch {
        /* not an event */
      }
    };
    source.addEventListener('reload', () => {
      // More happened since the page was drawn than the hall keeps: its views ask again (a reload would only meet the same).
      if (!received) live.push({ type: 'raider.resync' });
      // The hall no longer has what we missed (or restarted): start from its present.
      else location.reload();
    });
    // Open, the stream has every event from now on: what the views drew while it was closed, they draw anew.
    if (reopened) source.addEventListener('open', () => live.push({ type: 'raider.resync' }), { once: true });
    // What waited when the polls ended.
    if (live.queue.length > 0) live.schedule();
  };
  const poll = async () => {
    pollTimer = null;
    let reply;
    try {
      reply = await getJson(`/api/events?poll=1&since=${last}`);
    } catch (err) {
      if (closed) return;
      // The hall is away: the stream's own reconnects wait for it.
      reportFailure(err);
      stream();
      return;
    }
    if (closed) return;
    if (reply.reload === true) live.push({ type: 'raider.resync' });
    else for (const event of reply.events) take(event);
    if (Number.isInteger(reply.latest)) last = reply.latest;
    // Calm again: stream (the rate counts what this poll brought, and hands it out).
    if (live.rate(performance.now()) < BUSY_RATE) stream();
    else {
      live.handOutPolled();
      pollTimer = setTimeout(poll, POLL_MS);
    }
  };
  live.onBurst = () => {
    if (live.polling) return true;
    if (last === null) return false;
    live.cancelPending();
    live.polling = true;
    source?.close();
    source = null;
    pollTimer = setTimeout(poll, POLL_MS);
    return true;
  };
  const close = () => {
    unheard = null;
    closed = true;
    source?.close();
    source = null;
    clearTimeout(pollTimer);
    pollTimer = null;
    live.cancelPending();
    live.polling = false;
    live.queue = [];
  };
  live.heard = () => {
    if (!live.listened()) {
      if (!closed) unheard ??= setTimeout(close, UNHEARD_MS);
      return;
    }
    clearTimeout(unheard);
    unheard = null;
    if (!closed) return;
    closed = false;
    if (!opened) {
      opened = true;
      stream();
      return;
    }
    // From the hall's present (what came meanwhile is told by the resync): a replay of it all would be a burst to draw.
    last = null;
    received = false;
    stream(true);
  };
  // A page whose views never listen (a statechart's) never opens it.
  live.heard();
}

/** The data the hall drew the page from (a JSON block in it), once: later views ask for theirs. */
export function takeFirstData() {
  const block = document.getElementById('initial');
  if (!block) return {};
  block.remove();
  try {
    return JSON.parse(block.textContent) ?? {};
  } catch {
    return {};
  }
}

export function useLiveBatch(onBatch, deps) {
  useEffect(() => {
    live.listeners.add(onBatch);
    return () => live.listeners.delete(onBatch);
  }, deps);
}

/**
 * The JSON at `path` (null until it comes), asked again whenever a batch of
 * bus events holds one that `concerns` it, and when the returned `again` is
 * called: a page about one run or one session.
 */
export function useJsonFollowing(path, concerns) {
  const [data, setData] = useState(null);
  const [stamp, setStamp] = useState(0);
  useEffect(() => {
    let current = true;
    getJson(path)
      .then((reply) => current && setData(reply))
      .catch(reportFailure);
    return () => {
      current = false;
    };
  }, [path, stamp]);
  useLiveBatch(
    (batch) => {
      if (batch.some(concerns)) setStamp((n) => n + 1);
    },
    [path],
  );
  return [data, () => setStamp((n) => n + 1)];
}

/**
 * A function that calls `fn` at once, then at most once every `ms`: calls in
 * between are folded into one at the end of the wait. A page that asks the
 * hall again on every change would, on a busy bus, ask once a frame.
 */
export function every(ms, fn) {
  let last = 0;
  let timer = null;
  return () => {
    if (timer !== null) return;
    const wait = last + ms - Date.now();
    if (wait <= 0) {
      last = Date.now();
      fn();
      return;
    }
    timer = setTimeout(() => {
      timer = null;
      last = Date.now();
      fn();
    }, wait);
  };
}

/** `every` for a component: one throttle for its whole life, calling the newest `fn`. */
export function useEvery(ms, fn) {
  const latest = useRef(fn);
  latest.current = fn;
  const throttled = useRef(null);
  throttled.current ??= every(ms, () => latest.current());
  return throttled.current;
}
