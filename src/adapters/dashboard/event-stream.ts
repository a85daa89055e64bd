/**
 * `GET /api/events`: the bus as Server-Sent Events. Each message's `data:` is
 * one bus event exactly as the socket's subscribe sends it, its `id:` the
 * event's `seq`. The newest events are kept in a ring, so a page that
 * reconnects with `Last-Event-ID` gets what it missed; when that is gone
 * (or the hall restarted and its seq began again) it gets a `reload` event.
 * A reader that stops reading is dropped by the bus, never buffered without bound.
 */
import type { ServerResponse } from 'node:http';
import type { Envelope, EventBus } from '../../ports/bus.js';

/** At least the last 1,000 events can be replayed... */
export const RING_SIZE = 1024;
/** ...unless they are huge (a `raider.done` carries the whole response): the ring never holds more than this. */
export const RING_BYTES = 16 * 1024 * 1024;

function message(line: string, seq: number): string {
  return `id: ${seq}\ndata: ${line.endsWith('\n') ? line.slice(0, -1) : line}\n\n`;
}

export class EventRing {
  /**
   * Kept as the bus's line only (its SSE text is made when a page asks for it,
   * which is rare; every event is kept); `run` is the run an event is about,
   * to find it without parsing.
   */
  private readonly lines: Array<{ seq: number; line: string; run: string | undefined }> = [];
  private bytes = 0;
  /** The newest seq no longer kept (0: nothing dropped yet). Seq has gaps: inspect.* events are not sent. */
  private droppedThrough = 0;
  private newest = 0;
  private readonly unsubscribe: () => void;

  constructor(
    bus: EventBus,
    private readonly size: number = RING_SIZE,
    private readonly maxBytes: number = RING_BYTES,
  ) {
    this.unsubscribe = bus.subscribe({ filter: '', deliver: (line, event: Envelope) => this.keep(event, line) });
  }

  private keep(event: Envelope, line: string): void {
    this.lines.push({ seq: event.seq, line, run: 'id' in event ? event.id : undefined });
    this.bytes += line.length;
    this.newest = event.seq;
    while (this.lines.length > this.size || (this.bytes > this.maxBytes && this.lines.length > 1)) {
      const gone = this.lines.shift();
      if (!gone) break;
      this.bytes -= gone.line.length;
      this.droppedThrough = gone.seq;
    }
  }

  /** The seq of the newest event (0 before the first): what a page drawn now has seen. */
  get latest(): number {
    return this.newest;
  }

  /** The messages after `lastSeq`, or null when some of them are no longer kept (or it is not a seq of this hall). */
  since(lastSeq: number): string[] | null {
    return this.after(lastSeq)?.map((l) => message(l.line, l.seq)) ?? null;
  }

  /**
   * The same as one JSON text, for a page that polls instead of streaming
   * (under a burst: one request and one parse a second instead of an event
   * each): `{"events": [EVENT...], "latest": SEQ}`, the events as the bus
   * sends them; `{"latest": SEQ, "reload": true}` when some of them are gone.
   */
  batchSince(lastSeq: number): string {
    const kept = this.after(lastSeq);
    if (kept === null) return `{"latest":${this.newest},"reload":true}`;
    return `{"events":[${kept.map((l) => l.line.trimEnd()).join(',')}],"latest":${this.newest}}`;
  }

  private after(lastSeq: number): Array<{ seq: number; line: string }> | null {
    if (lastSeq > this.newest || lastSeq < this.droppedThrough) return null;
    return this.lines.filter((l) => l.seq > lastSeq);
  }

  /** The kept events about one run (its spawn, the dashboard's cancel and kill, its end), oldest first. */
  about(runId: string): unknown[] {
    return this.lines.filter((l) => l.run === runId).map((l) => JSON.parse(l.line));
  }

  close(): void {
    this.unsubscribe();
  }
}

/** Serves one event stream until the client goes, the bus drops it or `closeAll` runs. */
export class EventStreams {
  private readonly open = new Set<ServerResponse>();

  constructor(
    private readonly bus: EventBus,
    private readonly ring: EventRing,
  ) {}

  get count(): number {
    return this.open.size;
  }

  serve(res: ServerResponse, lastEventId: string | undefined): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    // Replay and subscription happen in one turn: no event falls between them.
    if (lastEventId !== undefined && /^\d+$/.test(lastEventId.trim())) {
      const missed = this.ring.since(Number(lastEventId.trim()));
      if (missed === null) res.write('event: reload\ndata: {"reason":"events were missed; reload the page"}\n\n');
      else for (const text of missed) res.write(text);
    } else res.write(': welcome\n\n');
    const off = this.bus.subscribe({
      filter: '',
      deliver: (line, event) => {
        if (!res.destroyed) res.write(message(line, event.seq));
      },
      backlog: () => res.writableLength,
      drop: () => res.destroy(),
    });
    this.open.add(res);
    res.on('close', () => {
      off();
      this.open.delete(res);
    });
  }

  closeAll(): void {
    for (const res of this.open) res.end();
  }
}
