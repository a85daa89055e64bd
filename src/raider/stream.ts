/**
 * The `--stream-json` v1 writer: one canonical JSON object per line, each
 * event's fields as protocol/raider-stream.ts types them, and
 * `version`/`type`/`seq`/`time` on every event, written synchronously (so
 * flushed) one event at a time. The common fields are set last so a payload
 * key of the same name can never override them.
 */
import { canonicalLine, epochSeconds, writeAllSync } from '../protocol/canonical-line.js';
import { STREAM_VERSION, type StreamEventType, type StreamPayload } from '../protocol/raider-stream.js';

export interface EventSink {
  emit<T extends StreamEventType>(type: T, payload: StreamPayload<T>): void;
}

export class StreamJsonWriter implements EventSink {
  private seq = 0;

  constructor(
    private readonly fd: number,
    private readonly clock: () => number = epochSeconds,
  ) {}

  emit<T extends StreamEventType>(type: T, payload: StreamPayload<T>): void {
    const event = { ...payload, version: STREAM_VERSION, type, seq: ++this.seq, time: this.clock() };
    writeAllSync(this.fd, `${canonicalLine(event)}\n`);
  }
}

/** For `--json` and plain output: the events go nowhere. */
export const nullSink: EventSink = { emit() {} };
