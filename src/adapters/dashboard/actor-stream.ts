/**
 * `GET /api/actors/stream?id=ID`: one live actor's state and events as
 * Server-Sent Events, for the statechart page (messages: protocol/actor-watch.ts).
 * Only the watched actor's changes are sent, each as it happens: a page with
 * a chart open costs the hall one actor's events, not the whole tree's.
 */
import type { ServerResponse } from 'node:http';
import type { ActorWatching } from '../../ports/actor-watching.js';
import type { ActorWatchMessage } from '../../protocol/actor-watch.js';
import { sendJson } from './http-io.js';

/**
 * A batched stream writes at most once every BATCH_GAP_MS: the first message
 * after a quiet spell goes at once, those that follow it within the gap wait
 * for its end (a run that ends a few milliseconds after it started is marked
 * idle on its slot's chart at the gap's end). Each SSE message costs the
 * page's browser its delivery, parse and dispatch.
 */
export const BATCH_GAP_MS = 25;
/**
 * After a write of FLOOD_BATCH messages or more (400 a second: a slot under
 * a burst of missions, a few events each), the next waits FLOOD_GAP_MS, until
 * a write carries fewer: a 500-mission burst (2,000 events of its slot's) is
 * then about ten messages for the page, and its marks lag the burst by a
 * quarter of a second at most. 10 runs a second are a message or two a gap.
 */
export const FLOOD_BATCH = 10;
export const FLOOD_GAP_MS = 250;

/** How a stream sends its messages: one SSE message each, or all that waited as one `event: batch`. */
interface ActorStreamOptions {
  batch: boolean;
}

function single(waiting: readonly ActorWatchMessage[]): string {
  return waiting.map((message) => `data: ${JSON.stringify(message)}\n\n`).join('');
}

function batched(waiting: readonly ActorWatchMessage[]): string {
  return `event: batch\ndata: ${JSON.stringify(waiting)}\n\n`;
}

export class ActorStreams {
  private readonly open = new Set<ServerResponse>();

  constructor(private readonly actors: ActorWatching) {}

  get count(): number {
    return this.open.size;
  }

  /** Answers 404 when no live actor has the id (it ended, or never was). */
  serve(res: ServerResponse, id: string, options: ActorStreamOptions): void {
    let ended = false;
    // The messages of one turn of the event loop (a batched stream: of one gap) go out in one write: a busy actor
    // (a slot under a burst sends several a mission) costs the hall, and the page's browser, one write and one read
    // a turn, not one each.
    let waiting: ActorWatchMessage[] = [];
    let wroteAt = Number.NEGATIVE_INFINITY;
    let gap = BATCH_GAP_MS;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const format = options.batch ? batched : single;
    const flush = () => {
      timer = null;
      // closeAll may have ended the response meanwhile.
      if (res.destroyed || res.writableEnded) return;
      if (waiting.length > 0) res.write(format(waiting));
      gap = waiting.length >= FLOOD_BATCH ? FLOOD_GAP_MS : BATCH_GAP_MS;
      waiting = [];
      wroteAt = performance.now();
      if (ended) res.end();
    };
    const schedule = () => {
      const wait = options.batch ? wroteAt + gap - performance.now() : 0;
      if (wait > 0) timer = setTimeout(flush, wait);
      else setImmediate(flush);
    };
    const send = (message: ActorWatchMessage) => {
      if (res.destroyed || ended) return;
      if (waiting.length === 0) schedule();
      waiting.push(message);
      if (message.type === 'actor.stopped') ended = true;
    };
    let started = false;
    const early: ActorWatchMessage[] = [];
    const off = this.actors.watch(id, (message) => (started ? send(message) : early.push(message)));
    if (!off) {
      sendJson(res, 404, { error: `no live actor ${id}: it ended, or the hall has none of that id (GET /api/actors lists them)` });
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    started = true;
    for (const message of early) send(message);
    this.open.add(res);
    res.on('close', () => {
      off();
      if (timer !== null) clearTimeout(timer);
      this.open.delete(res);
    });
    if (ended) off();
  }

  closeAll(): void {
    for (const res of this.open) res.end();
  }
}
