/**
 * The one client of the control socket: a command and its reply on a fresh
 * connection, or a subscription that hands over events until it is closed.
 * Used by the CLI, the built-in raider's hall tools and the tests; each says
 * a transport failure in its own words, from the failure's kind.
 *
 * Only types come from the schemas: a client command stays a small process.
 */
import { connectUnix } from '../os/socket-path.js';
import type { CommandInput, CommandName } from './commands.js';
import { describeLineFault, LineReader, MAX_MESSAGE_BYTES } from './line-reader.js';
import type { Answer, ErrorReply, ReplyTo } from './replies.js';
import { errorMessage } from '../domain/error-message.js';
import { definedFields } from '../domain/defined-fields.js';

/** Why a command got no reply. */
export type HallFailure =
  /** No socket file: no hall runs there. */
  | { kind: 'no-socket'; detail: string }
  /** `code`: the system's error code (ECONNREFUSED: a socket file nobody listens on, what a killed hall leaves). */
  | { kind: 'connect'; detail: string; code?: string }
  /** The connection failed after it stood. */
  | { kind: 'io'; detail: string }
  /** The hall closed the connection without a reply. */
  | { kind: 'closed' }
  | { kind: 'timeout' }
  | { kind: 'cancelled' }
  /** The reply is not a JSON object. */
  | { kind: 'invalid'; detail: string; line: string };

export class HallClientError extends Error {
  constructor(
    readonly failure: HallFailure,
    message: string,
  ) {
    super(message);
  }
}

/** How a failure reads; the CLI's words unless a caller brings its own. */
export type FailureWords = (failure: HallFailure, socketPath: string) => string;

export const cliWords: FailureWords = (failure, socketPath) => {
  switch (failure.kind) {
    case 'no-socket':
      return 'Hall not running (no socket found)';
    case 'connect':
      return failure.code === 'ECONNREFUSED'
        ? 'Hall not running (nothing answers on its socket)'
        : `Cannot connect to ${socketPath}: ${failure.detail}`;
    case 'io':
      return `Cannot talk to ${socketPath}: ${failure.detail}`;
    case 'invalid':
      return `Invalid reply from hall: ${failure.line.slice(0, 200)}`;
    case 'closed':
    case 'timeout':
      return 'No response from hall';
    case 'cancelled':
      return 'cancelled';
  }
};

export interface RequestOptions {
  signal?: AbortSignal;
  /** No reply within this many ms is a `timeout` failure; none by default. */
  timeoutMs?: number;
  words?: FailureWords;
}

/** The command's payload without `cmd`, as a client writes it. */
export type CommandArgs<C extends CommandName> = Omit<CommandInput<C>, 'cmd'>;

/** Sends one command and resolves with its reply; rejects with a HallClientError when there is none. */
export function hallRequest<C extends CommandName>(
  socketPath: string,
  cmd: C,
  args: CommandArgs<C>,
  options: RequestOptions = {},
): Promise<ReplyTo<C>> {
  const words = options.words ?? cliWords;
  return new Promise((resolve, reject) => {
    const socket = connectUnix(socketPath);
    const reader = new LineReader({ maxBytes: MAX_MESSAGE_BYTES });
    let connected = false;
    let done = false;
    const finish = (outcome: { reply: ReplyTo<C> } | { failure: HallFailure }): void => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      if ('reply' in outcome) resolve(outcome.reply);
      else reject(new HallClientError(outcome.failure, words(outcome.failure, socketPath)));
    };
    const onAbort = (): void => finish({ failure: { kind: 'cancelled' } });
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const timer =
      options.timeoutMs !== undefined ? setTimeout(() => finish({ failure: { kind: 'timeout' } }), options.timeoutMs) : undefined;
    socket.on('connect', () => {
      connected = true;
      socket.write(`${JSON.stringify({ type: 'command', payload: { cmd, ...args } })}\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      const first = reader.push(chunk)[0];
      if (!first) return;
      if ('fault' in first) return finish({ failure: { kind: 'invalid', detail: describeLineFault(first, 'reply'), line: '' } });
      const reply = parseReply<C>(first.line);
      finish('failure' in reply ? reply : { reply: reply.reply });
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (connected) return finish({ failure: { kind: 'io', detail: err.message } });
      finish({ failure: connectFailure(err) });
    });
    socket.on('close', () => finish({ failure: { kind: 'closed' } }));
  });
}

function parseReply<C extends CommandName>(line: string): { reply: ReplyTo<C> } | { failure: HallFailure } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return { failure: { kind: 'invalid', detail: errorMessage(err), line } };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { failure: { kind: 'invalid', detail: line.slice(0, 200), line } };
  // Typed by the command asked, not checked field by field: a hall of another version may add fields.
  return { reply: value as ReplyTo<C> };
}

/** An event as it comes off the bus: its envelope and its own fields. */
export interface BusEnvelope {
  type: string;
  version: number;
  seq: number;
  time: number;
  ts: number;
  [field: string]: unknown;
}

/** Subscribes to events whose type starts with `filter`; resolves, once connected, with a function that ends it. */
export function hallSubscribe(
  socketPath: string,
  filter: string,
  onEvent: (event: BusEnvelope) => void,
  onClose: () => void,
  words: FailureWords = cliWords,
): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const socket = connectUnix(socketPath);
    const reader = new LineReader({ maxBytes: MAX_MESSAGE_BYTES });
    socket.once('connect', () => {
      socket.on('error', () => socket.destroy());
      socket.on('close', onClose);
      socket.write(`${JSON.stringify({ type: 'subscribe', payload: { filter } })}\n`);
      resolve(() => socket.destroy());
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      const failure: HallFailure = connectFailure(err);
      reject(new HallClientError(failure, words(failure, socketPath)));
    });
    socket.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        if ('fault' in frame) continue;
        const event = parseEvent(frame.line);
        if (event) onEvent(event);
      }
    });
  });
}

function parseEvent(line: string): BusEnvelope | null {
  try {
    const value: unknown = JSON.parse(line);
    return isEnvelope(value) ? value : null;
  } catch {
    return null;
  }
}

function isEnvelope(value: unknown): value is BusEnvelope {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return 'type' in value && typeof value.type === 'string' && 'seq' in value && typeof value.seq === 'number';
}

/** A reply that says the command failed (a refused spawn has its own shape, with a status). */
export function isErrorReply(reply: object): reply is ErrorReply {
  return 'error' in reply && typeof reply.error === 'string' && !('status' in reply);
}

export function isAnswer<C extends CommandName>(reply: ReplyTo<C>): reply is Answer<C> {
  return !isErrorReply(reply);
}

function connectFailure(err: NodeJS.ErrnoException): HallFailure {
  if (err.code === 'ENOENT') return { kind: 'no-socket', detail: err.message };
  return { kind: 'connect', detail: err.message, ...definedFields({ code: err.code }) };
}
