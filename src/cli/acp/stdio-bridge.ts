/**
 * `raider acp --stdio [DIR]`: the ACP agent an editor launches (Zed
 * `agent_servers`). It speaks JSON-RPC on stdin/stdout and relays to the
 * hall's ACP socket, so the agent's logic stays in the hall. It answers
 * `initialize` at once, stays up while the hall restarts (requests meanwhile
 * fail with an error naming the hall), re-binds its sessions when the hall is
 * back, logs only to stderr, and exits on stdin EOF.
 */
import type net from 'node:net';
import { connectUnix } from '../../os/socket-path.js';
import readline from 'node:readline';
import { acpSocketPath } from '../../adapters/acp/acp-adapter.js';
import { initializeResult } from '../../adapters/acp/acp-agent.js';
import { hallNotRunning } from './hall-down.js';
import { isRecord } from '../../domain/records.js';
import { z } from 'zod';
import { definedFields } from '../../domain/defined-fields.js';
import { parseJsonLine } from '../../protocol/json-line.js';

/** A JSON-RPC message as the bridge relays it: only its id and method are read, the rest passes as it came. */
const MessageSchema = z.looseObject({
  id: z.union([z.string(), z.number()]).nullable().optional(),
  method: z.string().optional(),
});
type Message = z.infer<typeof MessageSchema>;
type Id = NonNullable<Message['id']>;

const HALL_DOWN = -32000;
/** The words of the MCP bridge for the same mistake (adapters/mcp/line-transport.ts). */
const INVALID_REQUEST = 'Invalid Request: not a JSON-RPC 2.0 message';

/** A response to a request: an id, and a result or an error. */
function isResponse(m: Message): boolean {
  return m.id !== undefined && m.id !== null && ('result' in m || 'error' in m);
}

export interface BridgeOptions {
  root: string;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  log: (line: string) => void;
}

export async function runStdioBridge(options: BridgeOptions): Promise<number> {
  const bridge = new AcpBridge(options);
  return bridge.run();
}

class AcpBridge {
  private readonly socketPath: string;
  private upstream: net.Socket | null = null;
  private connecting: Promise<boolean> | null = null;
  private counter = 0;
  /** Our upstream id → the client's id (for requests the client sent). */
  private readonly fromClient = new Map<string, { id: Id; method: string; cwd?: string }>();
  /** Our downstream id → the hall's id (for requests the hall sent, e.g. permission questions). */
  private readonly fromHall = new Map<string, Id>();
  /** Upstream ids of the bridge's own requests (initialize, resume after a restart). */
  private readonly own = new Set<string>();
  private initializeParams: unknown = { protocolVersion: 1, clientCapabilities: {} };
  private readonly sessions = new Map<string, string>();
  /** stdin ended: the editor is gone, and so is the bridge. */
  private closed = false;

  constructor(private readonly options: BridgeOptions) {
    this.socketPath = acpSocketPath(options.root);
  }

  run(): Promise<number> {
    const lines = readline.createInterface({ input: this.options.input, crlfDelay: Infinity });
    // Lines still being handled when stdin ends: a request sent just before the end is still answered.
    const handling = new Set<Promise<void>>();
    lines.on('line', (line) => {
      const done = this.fromStdin(line).finally(() => handling.delete(done));
      handling.add(done);
    });
    return new Promise((resolve) => {
      lines.on('close', () => {
        void Promise.allSettled([...handling]).then(() => {
          this.closed = true;
          this.upstream?.destroy();
          resolve(0);
        });
      });
    });
  }

  private write(message: Message): void {
    this.options.output.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  }

  private error(id: Id | null, code: number, message: string): void {
    this.write({ id, error: { code, message } });
  }

  private async fromStdin(line: string): Promise<void> {
    if (line.trim() === '') return;
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.error(null, -32700, 'Parse error');
      return;
    }
    const read = MessageSchema.safeParse(msg);
    // Neither a request, a notification nor a response (`{"a":1}`): JSON-RPC 2.0 answers it, with the id when it has one.
    if (!read.success || (read.data.method === undefined && !isResponse(read.data))) {
      const id = read.success ? (read.data.id ?? null) : null;
      this.error(id, -32600, INVALID_REQUEST);
      return;
    }
    const m = read.data;
    if (m.method === undefined) {
      // A response to a request the hall sent (a permission question).
      const hallId = m.id !== undefined && m.id !== null ? this.fromHall.get(String(m.id)) : undefined;
      if (hallId === undefined) return;
      this.fromHall.delete(String(m.id));
      this.send({ ...m, id: hallId });
      return;
    }
    if (m.method === 'initialize' && m.id !== undefined && m.id !== null) {
      this.initializeParams = m.params ?? this.initializeParams;
      this.write({ id: m.id, result: initializeResult() });
      void this.ensureUpstream();
      return;
    }
    const id = m.id ?? null;
    if (!(await this.ensureUpstream())) {
      // After stdin's end nobody waits for an answer (and the hall was not down: the bridge let go of it).
      if (id !== null && !this.closed) this.error(id, HALL_DOWN, hallNotRunning(this.options.root, this.socketPath));
      return;
    }
    if (id === null) {
      this.send(m);
      return;
    }
    const upId = `c${++this.counter}`;
    const cwd = isRecord(m.params) && typeof m.params.cwd === 'string' ? m.params.cwd : undefined;
    this.fromClient.set(upId, { id, method: m.method, ...definedFields({ cwd }) });
    if (m.method === 'session/close' && isRecord(m.params)) this.sessions.delete(String(m.params.sessionId));
    if ((m.method === 'session/load' || m.method === 'session/resume') && isRecord(m.params)) {
      this.sessions.set(String(m.params.sessionId), String(m.params.cwd ?? this.options.root));
    }
    this.send({ ...m, id: upId });
  }

  private send(message: Message): void {
    this.upstream?.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  }

  private ensureUpstream(): Promise<boolean> {
    // While connecting, the socket is there but the hall has not yet answered the bridge's
    // initialize: a request sent then (a client's session/new right after its initialize's
    // answer) would reach the hall first and be refused as uninitialised. It waits instead.
    if (this.connecting !== null) return this.connecting;
    if (this.upstream && !this.upstream.destroyed) return Promise.resolve(true);
    this.connecting = this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async connect(): Promise<boolean> {
    const socket = connectUnix(this.socketPath);
    const ok = await new Promise<boolean>((resolve) => {
      socket.once('connect', () => resolve(true));
      socket.once('error', () => resolve(false));
    });
    if (!ok || this.closed) {
      socket.destroy();
      return false;
    }
    this.upstream = socket;
    const lines = readline.createInterface({ input: socket, crlfDelay: Infinity });
    lines.on('line', (line) => this.fromHallLine(line));
    socket.on('close', () => this.lost(socket));
    socket.on('error', () => socket.destroy());
    // The hall gets the client's initialize, then every session is bound again (after a hall restart).
    await this.ownRequest('initialize', this.initializeParams);
    for (const [sessionId, cwd] of this.sessions) {
      await this.ownRequest('session/resume', { sessionId, cwd, mcpServers: [] });
    }
    this.options.log(`connected to the hall at ${this.socketPath}`);
    return true;
  }

  private ownRequest(method: string, params: unknown): Promise<void> {
    const id = `b${++this.counter}`;
    this.own.add(id);
    this.send({ id, method, params });
    return new Promise((resolve) => this.ownWaiters.set(id, resolve));
  }
  private readonly ownWaiters = new Map<string, () => void>();

  private fromHallLine(line: string): void {
    const msg = parseJsonLine(line, MessageSchema);
    // The hall's side speaks JSON-RPC; anything else is not relayed.
    if (msg === null) return;
    if (msg.method !== undefined) {
      if (msg.id === undefined || msg.id === null) {
        this.write(msg);
        return;
      }
      const downId = `h${++this.counter}`;
      this.fromHall.set(downId, msg.id);
      this.write({ ...msg, id: downId });
      return;
    }
    const id = String(msg.id);
    if (this.own.delete(id)) {
      this.ownWaiters.get(id)?.();
      this.ownWaiters.delete(id);
      return;
    }
    const original = this.fromClient.get(id);
    if (!original) return;
    this.fromClient.delete(id);
    if (original.method === 'session/new' && isRecord(msg.result) && typeof msg.result.sessionId === 'string') {
      this.sessions.set(msg.result.sessionId, original.cwd ?? this.options.root);
    }
    this.write({ ...msg, id: original.id });
  }

  /** The hall went away: every request it owed an answer fails now; the next one reconnects. */
  private lost(socket: net.Socket): void {
    if (this.upstream !== socket) return;
    this.upstream = null;
    for (const [, original] of this.fromClient) {
      this.error(original.id, HALL_DOWN, `the hall in ${this.options.root} went away during ${original.method}`);
    }
    this.fromClient.clear();
    this.fromHall.clear();
    for (const resolve of this.ownWaiters.values()) resolve();
    this.ownWaiters.clear();
    this.own.clear();
    // After stdin's end the bridge let go of the hall itself: nothing was lost, nothing to say.
    if (!this.closed) this.options.log(`lost the hall at ${this.socketPath}; requests fail until it is back`);
  }
}
