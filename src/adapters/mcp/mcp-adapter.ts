/**
 * The hall's MCP face (docs/mcp.md; other implementations of the hall name
 * `.raider-hall.mcp` and leave it unserved): with `mcp: { enable: true }` in .raider-hall.yml the hall
 * listens on the UNIX socket `.raider-hall.mcp` (mode 0600) and serves the
 * hall tools there, newline-delimited JSON-RPC as MCP's stdio transport
 * frames it. Every connection gets its own MCP server; `raider hall mcp DIR`
 * bridges an MCP client's stdio to this socket.
 */
import net from 'node:net';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { HallAdapter, HallAdapterFactory, HallServices } from '../../ports/hall-services.js';
import { RAIDER_VERSION } from '../../protocol/raider-version.js';
import { hallToolHandler } from './hall-tool-handlers.js';
import { LineTransport } from './line-transport.js';
import { listenUnix, type UnixListener } from '../../os/socket-path.js';
import { RecentOutcomes } from './recent-outcomes.js';
import { MCP_SERVER_NAME, registerHallTools } from './mcp-tools.js';

export function mcpSocketPath(root: string): string {
  return path.join(root, '.raider-hall.mcp');
}

export const MCP_INSTRUCTIONS =
  'Tools of a Raider Hall: a daemon that runs AI agent processes (raiders) for a project. ' +
  'spawn_raider gives a raider a mission; wait_for_raider waits for its outcome; list_raiders and hall_status show what runs; ' +
  "raider_logs reads a run's log; cancel_raider and kill_raider stop a run.";

export interface McpAdapterOptions {
  /** How often a long wait_for_raider reports progress to a client that asked for it (default 10 s). */
  progressIntervalMs?: number;
}

/** Builds the MCP face; it serves `.raider-hall.mcp` only when the config says `mcp: { enable: true }`. */
export function createMcpAdapter(options: McpAdapterOptions = {}): HallAdapterFactory {
  return (services) => (services.config.mcp.enable ? new McpAdapter(services, options) : null);
}

/** The MCP face with its defaults, as `raider hall start` runs it. */
export const mcpAdapter: HallAdapterFactory = createMcpAdapter();

class McpAdapter implements HallAdapter {
  readonly name = 'mcp';
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly stopping = new AbortController();
  private readonly recent = new RecentOutcomes();
  private readonly socketPath: string;
  private listening = false;
  private listener: UnixListener | null = null;

  constructor(
    private readonly services: HallServices,
    private readonly options: McpAdapterOptions,
  ) {
    this.socketPath = mcpSocketPath(services.paths.root);
    this.server = net.createServer((socket) => this.serve(socket));
    this.server.on('error', (err) => services.log(`MCP listener: ${err.message}`));
  }

  status(): Record<string, unknown> {
    return { mcp: { socket: this.socketPath, listening: this.listening, clients: this.sockets.size } };
  }

  async start(): Promise<void> {
    this.recent.start(this.services.bus);
    // The hall holds its lock: a socket file left here is a previous hall's.
    this.listener = await listenUnix(this.server, this.socketPath);
    this.listening = true;
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.recent.stop();
    this.listening = false;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // Pending waits answer "the hall is stopping" before their connections go.
    await new Promise((resolve) => setImmediate(resolve));
    for (const socket of this.sockets) socket.end();
    setTimeout(() => {
      for (const socket of this.sockets) socket.destroy();
    }, 500).unref();
    this.listener?.remove();
    await closed;
  }

  private serve(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (this.stopping.signal.aborted) {
      socket.destroy();
      return;
    }
    const server = new McpServer(
      { name: MCP_SERVER_NAME, title: 'Raider Hall', version: RAIDER_VERSION },
      { instructions: MCP_INSTRUCTIONS, capabilities: { tools: {} } },
    );
    registerHallTools(server, hallToolHandler(this.services, this.stopping.signal, this.recent, this.options.progressIntervalMs));
    const transport = new LineTransport({ input: socket, output: socket, release: () => socket.destroy() });
    server.connect(transport).catch((err: Error) => {
      this.services.log(`MCP connection: ${err.message}`);
      socket.destroy();
    });
  }
}
