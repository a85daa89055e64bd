/**
 * A raider's side of the permission channel (the built-in raider's, and the
 * ACP bridge's): a UNIX socket the hall listens on, one JSON object per line.
 *
 *   raider → hall  {"type":"ask","id":"q1","tool":"bash","input":{...},"call":"c3",
 *                   "title":"...","kind":"execute","reason":"...","rule":"Bash(git status)"}
 *   hall → raider  {"type":"answer","id":"q1","answer":"once"|"session"|"no","reason":"..."}
 *
 * One connection per run, opened at the first question. Each question
 * resolves exactly once: with the hall's answer, or `no` when the channel
 * cannot be reached, closes, or the run is cancelled. Nothing here ever
 * allows by default. Lines that are not a valid answer are reported once
 * on stderr and skipped.
 */
import { connect, type Socket } from 'node:net';
import { errorMessage } from '../domain/error-message.js';
import { isRecord } from '../domain/records.js';
import { canonicalLine } from './canonical-line.js';
import { MAX_LINE_BYTES, readLines } from './line-reader.js';

export interface PermissionQuestion {
  tool: string;
  /** The stream's call id (`c3`), so the hall can tie the question to its `tool.call` event. */
  call: string;
  input: Record<string, unknown>;
  title: string;
  /** ACP's tool kind: read, edit, delete, move, search, execute, think, fetch, other. */
  kind: string;
  reason: string;
  rule?: string;
}

export type AnswerWord = 'once' | 'session' | 'no';

export interface PermissionAnswer {
  answer: AnswerWord;
  reason: string;
}

const ANSWERS: readonly AnswerWord[] = ['once', 'session', 'no'];

export interface Asker {
  ask(question: PermissionQuestion, signal: AbortSignal): Promise<PermissionAnswer>;
  close(): void;
}

export class PermissionChannel implements Asker {
  private socket: Socket | undefined;
  private connecting: Promise<Socket> | undefined;
  private closedBecause: string | undefined;
  private next = 0;
  private readonly pending = new Map<string, (a: PermissionAnswer) => void>();
  private warnedBadLine = false;

  constructor(
    readonly path: string,
    private readonly warn: (message: string) => void,
  ) {}

  async ask(question: PermissionQuestion, signal: AbortSignal): Promise<PermissionAnswer> {
    if (signal.aborted) return { answer: 'no', reason: 'the run was cancelled' };
    if (this.closedBecause) return { answer: 'no', reason: this.closedBecause };
    let socket: Socket;
    try {
      socket = await this.open();
    } catch (err) {
      return { answer: 'no', reason: this.closedBecause ?? `permission channel ${this.path}: ${errorMessage(err)}` };
    }
    const id = `q${++this.next}`;
    return new Promise<PermissionAnswer>((resolve) => {
      const settle = (a: PermissionAnswer): void => {
        if (!this.pending.delete(id)) return; // answered already: exactly one answer
        signal.removeEventListener('abort', onAbort);
        resolve(a);
      };
      const onAbort = (): void => settle({ answer: 'no', reason: 'the run was cancelled' });
      this.pending.set(id, settle);
      signal.addEventListener('abort', onAbort, { once: true });
      socket.write(`${canonicalLine({ ...question, type: 'ask', id })}\n`);
    });
  }

  close(): void {
    this.shut('the permission channel was closed');
    this.socket?.destroy();
  }

  private open(): Promise<Socket> {
    if (this.socket) return Promise.resolve(this.socket);
    this.connecting ??= new Promise<Socket>((resolve, reject) => {
      const socket = connect(this.path);
      // Kept referenced: while a question waits, this socket is what keeps the process alive.
      socket.once('connect', () => {
        this.socket = socket;
        resolve(socket);
      });
      // The longest line we keep from the hall is a control frame's; anything longer is nonsense.
      readLines(
        socket,
        (line) => {
          const trimmed = line.trim();
          if (trimmed) this.handle(trimmed);
        },
        // Bytes that are not UTF-8 are replaced, so the only fault left is length.
        { maxBytes: MAX_LINE_BYTES, utf8: 'replace', onFault: () => this.badLine('a line longer than 1 MiB') },
      );
      socket.on('error', (err) => {
        const why = `permission channel ${this.path}: ${errorMessage(err)}`;
        this.shut(why);
        reject(err);
      });
      socket.on('close', () => this.shut('the permission channel closed before an answer came'));
    });
    return this.connecting;
  }

  /** Every question still waiting is answered `no`, and so is every later one. */
  private shut(reason: string): void {
    this.closedBecause ??= reason;
    for (const settle of [...this.pending.values()]) settle({ answer: 'no', reason });
  }

  private handle(line: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.badLine('not JSON');
      return;
    }
    if (!isRecord(msg)) {
      this.badLine('not an object');
      return;
    }
    const { type, id, answer, reason } = msg;
    if (type !== 'answer' || typeof id !== 'string') {
      this.badLine('not {"type":"answer","id":...}');
      return;
    }
    const settle = this.pending.get(id);
    if (!settle) return; // a late or second answer: the question is settled already
    const word = ANSWERS.find((a) => a === answer);
    // An answer we cannot read refuses: nothing allows by default.
    if (!word) settle({ answer: 'no', reason: `unreadable answer ${JSON.stringify(answer)} from the permission channel` });
    else settle({ answer: word, reason: typeof reason === 'string' ? reason : '' });
  }

  private badLine(what: string): void {
    if (this.warnedBadLine) return;
    this.warnedBadLine = true;
    this.warn(`warning: permission channel ${this.path} sent ${what}; such lines are skipped`);
  }
}
