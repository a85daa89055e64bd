/**
 * The bridge's `--stream-json` events (version 1, docs/raider.md "Events"),
 * written as the built-in raider writes its own (protocol/canonical-line.ts):
 * one canonical JSON object per line with `version`, `type`, `seq`, `time`,
 * synchronously, so each is out before the next thing happens.
 */
import { canonicalLine, epochSeconds, writeAllSync } from '../protocol/canonical-line.js';
import { STREAM_VERSION } from '../protocol/raider-stream.js';

export type AcpStreamEventType =
  | 'run.started'
  | 'run.state'
  | 'message.chunk'
  | 'thought.chunk'
  | 'plan'
  | 'usage'
  | 'message'
  | 'tool.call'
  | 'tool.result'
  | 'permission'
  | 'note'
  | 'session'
  | 'run.finished';

export interface EventSink {
  emit(type: AcpStreamEventType, payload: Record<string, unknown>): void;
}

export class StreamJsonSink implements EventSink {
  private seq = 0;

  constructor(private readonly fd: number) {}

  emit(type: AcpStreamEventType, payload: Record<string, unknown>): void {
    const event = { ...payload, version: STREAM_VERSION, type, seq: ++this.seq, time: epochSeconds() };
    writeAllSync(this.fd, `${canonicalLine(event)}\n`);
  }
}

/** Without `--stream-json`: no events (the answer or the error is printed at the end). */
export const silentSink: EventSink = { emit() {} };
