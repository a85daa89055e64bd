/**
 * The agent's stdout as the ACP connection reads it: one JSON-RPC message a
 * line. A line that is not a JSON object is skipped and counted (agents and
 * the tools they start sometimes print to stdout by mistake; the run goes
 * on). A line longer than the limit ends the reading at once, without keeping
 * more than the limit in memory (docs/agents.md).
 */
import type { Readable } from 'node:stream';
import { isRecord } from '../domain/records.js';

/** The longest message the bridge takes from its agent. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** How much of the first skipped line the note at the end quotes. */
const SAMPLE_CHARS = 120;
const NEWLINE = 0x0a;

export class AgentLines {
  /** The JSON object lines, each ending in a newline. */
  readonly readable: ReadableStream<Uint8Array>;
  /** Resolves if a line passes the limit; the input is destroyed then. */
  readonly overLimit: Promise<void>;
  #skipped = 0;
  #sample = '';
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** Past the limit, or the reader cancelled: nothing more is read. */
  #done = false;

  constructor(input: Readable, limit: number = MAX_MESSAGE_BYTES) {
    let over: () => void = () => {};
    this.overLimit = new Promise<void>((resolve) => (over = resolve));
    this.readable = new ReadableStream<Uint8Array>({
      start: (controller) => {
        const tooLong = () => {
          this.#done = true;
          this.#pending = [];
          this.#pendingBytes = 0;
          input.destroy();
          over();
        };
        input.on('data', (chunk: Buffer) => {
          if (this.#done) return;
          let from = 0;
          for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, from)) {
            if (this.#pendingBytes + (at - from) > limit) return tooLong();
            this.#line(Buffer.concat([...this.#pending, chunk.subarray(from, at)]), controller);
            this.#pending = [];
            this.#pendingBytes = 0;
            from = at + 1;
          }
          if (this.#pendingBytes + (chunk.length - from) > limit) return tooLong();
          if (from < chunk.length) {
            this.#pending.push(chunk.subarray(from));
            this.#pendingBytes += chunk.length - from;
          }
        });
        input.once('end', () => {
          if (this.#done) return;
          if (this.#pendingBytes > 0) this.#line(Buffer.concat(this.#pending), controller);
          this.#done = true;
          controller.close();
        });
        input.once('error', (err) => {
          if (!this.#done) controller.error(err);
        });
      },
      // The connection closed: what the agent still writes is nobody's to read.
      cancel: () => {
        this.#done = true;
        this.#pending = [];
        input.destroy();
      },
    });
  }

  /** The lines skipped so far, and the start of the first one. */
  skipped(): { count: number; first: string } {
    return { count: this.#skipped, first: this.#sample };
  }

  #line(bytes: Buffer, controller: ReadableStreamDefaultController<Uint8Array>): void {
    const text = bytes.toString('utf8').trim();
    if (text === '') return;
    if (isJsonObject(text)) {
      controller.enqueue(Buffer.from(`${text}\n`));
      return;
    }
    if (this.#skipped === 0) this.#sample = text.length > SAMPLE_CHARS ? `${text.slice(0, SAMPLE_CHARS)}...` : text;
    this.#skipped++;
  }
}

function isJsonObject(text: string): boolean {
  if (!text.startsWith('{')) return false;
  try {
    return isRecord(JSON.parse(text));
  } catch {
    return false;
  }
}
