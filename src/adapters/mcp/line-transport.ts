/**
 * An MCP transport over a byte stream: newline-delimited JSON-RPC, the framing
 * of MCP's stdio transport, on any pair of streams (a UNIX socket connection,
 * or stdin and stdout). Used on both ends: the hall's `.raider-hall.mcp`
 * server, the clients that connect to it, and the `raider hall mcp` bridge.
 *
 * A line that is not JSON is answered with a JSON-RPC parse error (-32700),
 * a JSON value that is not a JSON-RPC message with -32600; neither ends the
 * connection. The transport closes once when the input ends or the stream
 * closes, and calls `onclose` then.
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describeLineFault, LineReader } from '../../protocol/line-reader.js';
import { errorMessage } from '../../domain/error-message.js';

/** A message may hold a whole slot log; a line longer than this is refused. */
export const MCP_MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface LineTransportOptions {
  /** Where messages come from. */
  input: Readable;
  /** Where messages go (the same object as `input` for a socket). */
  output: Writable;
  /** Called once after the transport closed, to release the streams (destroy a socket). */
  release?: () => void;
  maxLineBytes?: number;
}

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private readonly reader: LineReader;
  private started = false;
  private closed = false;

  constructor(private readonly options: LineTransportOptions) {
    this.reader = new LineReader({ maxBytes: options.maxLineBytes ?? MCP_MAX_LINE_BYTES });
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('LineTransport already started');
    this.started = true;
    const { input, output } = this.options;
    input.on('data', this.onData);
    input.on('end', this.onEnd);
    input.on('close', this.onEnd);
    input.on('error', this.onStreamError);
    if (!sameStream(input, output)) output.on('error', this.onStreamError);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error('the connection is closed');
    const { output } = this.options;
    const line = `${JSON.stringify(message)}\n`;
    await new Promise<void>((resolve, reject) => {
      output.write(line, (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    this.finish();
  }

  /** True once the transport has closed. */
  get isClosed(): boolean {
    return this.closed;
  }

  private readonly onData = (chunk: Buffer | string) => {
    const frames = this.reader.push(chunk);
    for (const frame of frames) {
      if (this.closed) return;
      if (!('line' in frame)) {
        this.reject(-32700, `Parse error: ${describeLineFault(frame, 'frame')}`);
        continue;
      }
      if (frame.line.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(frame.line);
      } catch (err) {
        this.reject(-32700, `Parse error: ${errorMessage(err)}`);
        continue;
      }
      const parsed = JSONRPCMessageSchema.safeParse(value);
      if (!parsed.success) {
        this.reject(-32600, 'Invalid Request: not a JSON-RPC 2.0 message');
        continue;
      }
      try {
        this.onmessage?.(parsed.data);
      } catch (err) {
        this.onerror?.(err instanceof Error ? err : new Error(String(err)));
      }
    }
  };

  private readonly onEnd = () => this.finish();

  private readonly onStreamError = (err: Error) => {
    this.onerror?.(err);
    this.finish();
  };

  private reject(code: number, message: string): void {
    // JSON-RPC 2.0 answers a request it could not read with `id: null`; the SDK's message type has no null id.
    this.send({ jsonrpc: '2.0', id: null, error: { code, message } } as unknown as JSONRPCMessage).catch(() => {});
    this.onerror?.(new Error(message));
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    const { input, output } = this.options;
    input.off('data', this.onData);
    input.off('end', this.onEnd);
    input.off('close', this.onEnd);
    // Errors after the close are expected (EPIPE on a gone peer); keep them from becoming uncaught.
    input.off('error', this.onStreamError);
    input.on('error', () => {});
    if (!sameStream(input, output)) {
      output.off('error', this.onStreamError);
      output.on('error', () => {});
    }
    this.options.release?.();
    this.onclose?.();
  }
}

function sameStream(input: Readable, output: Writable): boolean {
  return (input as unknown) === (output as unknown);
}
