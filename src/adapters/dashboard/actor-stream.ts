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

export class ActorStreams {
  private readonly open = new Set<ServerResponse>();

  constructor(private readonly actors: ActorWatching) {}

  get count(): number {
    return this.open.size;
  }

  /** Answers 404 when no live actor has the id (it ended, or never was). */
  serve(res: ServerResponse, id: string): void {
    let ended = false;
    // The messages of one turn of the event loop go out in one write: a busy actor (a slot under a burst
    // sends several a mission) costs the hall, and the page's browser, one write and one read a turn, not one each.
    let waiting = '';
    const flush = () => {
      // closeAll may have ended the response meanwhile.
      if (res.destroyed || res.writableEnded) return;
      if (waiting !== '') res.write(waiting);
      waiting = '';
      if (ended) res.end();
    };
    const send = (message: ActorWatchMessage) => {
      if (res.destroyed || ended) return;
      if (waiting === '') setImmediate(flush);
      waiting += `data: ${JSON.stringify(message)}\n\n`;
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
      this.open.delete(res);
    });
    if (ended) off();
  }

  closeAll(): void {
    for (const res of this.open) res.end();
  }
}
