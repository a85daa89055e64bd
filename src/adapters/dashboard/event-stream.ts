/**
 * `GET /api/events`: the bus as Server-Sent Events. Each message's `data:` is
 * one bus event exactly as the socket's subscribe sends it, its `id:` the
 * event's `seq`. The newest events are kept in a ring, so a page that
 * reconnects with `Last-Event-ID` gets what it missed; when that is gone
 * (or the hall restarted and its seq began again) it gets a `reload` event.
 * A reader that stops reading is dropped by the bus, never buffered without bound.
 */
import type { ServerResponse } from 'node:http';
import type { Envelope, EventBus } from '../control/event-bus.js';

/** At least the last 1,000 events can be replayed. */
export const RING_SIZE = 1024;

function message(line: string, seq: number): string {
  return `id: ${seq}\ndata: ${line.endsWith('\n') ? line.slice(0, -1) : line}\n\n`;
}

export class EventRing {
  private readonly lines: Array<{ seq: number; text: string; event: Envelope }> = [];
  private readonly unsubscribe: () => void;

  constructor(
    bus: EventBus,
    private readonly size: number = RING_SIZE,
  ) {
    this.unsubscribe = bus.subscribe({ filter: '', deliver: (line, event: Envelope) => this.keep(event, line) });
  }

  private keep(event: Envelope, line: string): void {
    this.lines.push({ seq: event.seq, text: message(line, event.seq), event });
    if (this.lines.length > this.size) this.lines.shift();
  }

  /** The messages after `lastSeq`, or null when some of them are no longer kept. */
  since(lastSeq: number): string[] | null {
    const newest = this.lines.at(-1)?.seq ?? 0;
    const oldest = this.lines[0]?.seq ?? newest + 1;
    if (lastSeq > newest || lastSeq < oldest - 1) return null;
    return this.lines.filter((l) => l.seq > lastSeq).map((l) => l.text);
  }

  /** The kept events about one run (its spawn, the dashboard's cancel and kill, its end), oldest first. */
  about(runId: string): Envelope[] {
    return this.lines.filter((l) => l.event.id === runId).map((l) => l.event);
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
