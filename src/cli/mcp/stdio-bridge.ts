/**
 * `raider hall mcp [DIR]`: the MCP server an MCP client launches (`claude mcp
 * add`, Codex, an editor). It speaks MCP on stdin/stdout and relays every
 * tool call to the hall's MCP socket `.raider-hall.mcp`, so the tools' logic
 * stays in the hall. It answers `initialize` and `tools/list` itself, so it
 * starts while the hall is down; a tool call then fails with an error naming
 * the hall directory, and works as soon as the hall is up (it connects per
 * call when it has no connection, so a hall restart needs no bridge restart).
 * It logs only to stderr and exits on stdin EOF.
 */
import { connectUnix } from '../../os/socket-path.js';
import type { Readable, Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LineTransport } from '../../adapters/mcp/line-transport.js';
import { MCP_INSTRUCTIONS, mcpSocketPath } from '../../adapters/mcp/mcp-adapter.js';
import {
  DEFAULT_WAIT_S,
  MCP_SERVER_NAME,
  registerHallTools,
  toolError,
  type HallToolName,
  type ToolExtra,
} from '../../adapters/mcp/mcp-tools.js';
import { hallPaths } from '../../ports/hall-paths.js';
import { RAIDER_VERSION } from '../../protocol/raider-version.js';
import { socketAnswers } from '../../adapters/os/unix-socket.js';
import { errorMessage } from '../../domain/error-message.js';

/** Tool calls other than wait_for_raider get this long from the hall. */
const CALL_TIMEOUT_MS = 150_000;
/** wait_for_raider gets its own timeout plus this margin. */
const WAIT_MARGIN_MS = 30_000;

export interface McpBridgeOptions {
  root: string;
  input: Readable;
  output: Writable;
  log: (line: string) => void;
}

export async function runMcpBridge(options: McpBridgeOptions): Promise<number> {
  const bridge = new McpBridge(options);
  return bridge.run();
}

interface Upstream {
  client: Client;
  transport: LineTransport;
}

class McpBridge {
  private readonly socketPath: string;
  private upstream: Upstream | null = null;
  private connecting: Promise<Upstream | string> | null = null;
  private closed = false;

  constructor(private readonly options: McpBridgeOptions) {
    this.socketPath = mcpSocketPath(options.root);
  }

  async run(): Promise<number> {
    const server = new McpServer(
      { name: MCP_SERVER_NAME, title: 'Raider Hall', version: RAIDER_VERSION },
      { instructions: MCP_INSTRUCTIONS, capabilities: { tools: {} } },
    );
    registerHallTools(server, (name, args, extra) => this.call(name, args, extra));
    const transport = new LineTransport({ input: this.options.input, output: this.options.output });
    const ended = new Promise<void>((resolve) => {
      server.server.onclose = () => resolve();
    });
    await server.connect(transport);
    await ended;
    this.closed = true;
    await this.upstream?.client.close().catch(() => {});
    this.upstream = null;
    return 0;
  }

  private async call(name: HallToolName, args: Record<string, unknown>, extra: ToolExtra): Promise<CallToolResult> {
    const upstream = await this.ensureUpstream();
    if (typeof upstream === 'string') return toolError(upstream);
    const token = extra._meta?.progressToken;
    const waitS = typeof args.timeout_s === 'number' ? args.timeout_s : DEFAULT_WAIT_S;
    try {
      const result = await upstream.client.callTool({ name, arguments: args }, undefined, {
        signal: extra.signal,
        timeout: name === 'wait_for_raider' ? Math.round(waitS * 1000) + WAIT_MARGIN_MS : CALL_TIMEOUT_MS,
        // The hall reports progress on long waits; the client hears it when it asked.
        onprogress: (progress) => {
          if (token === undefined) return;
          extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken: token } }).catch(() => {});
        },
      });
      return result as CallToolResult;
    } catch (err) {
      if (upstream.transport.isClosed) return toolError(`the hall in ${this.options.root} went away during ${name}: ${errorMessage(err)}`);
      return toolError(`${name} failed: ${errorMessage(err)}`);
    }
  }

  private ensureUpstream(): Promise<Upstream | string> {
    if (this.upstream && !this.upstream.transport.isClosed) return Promise.resolve(this.upstream);
    this.connecting ??= this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  /** Connects and initializes; a string says why the hall cannot be reached. */
  private async connect(): Promise<Upstream | string> {
    const socket = connectUnix(this.socketPath);
    const failure = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      socket.once('connect', () => resolve(null));
      socket.once('error', (err) => resolve(err));
    });
    if (failure) {
      socket.destroy();
      return this.whyUnreachable(failure);
    }
    const transport = new LineTransport({ input: socket, output: socket, release: () => socket.destroy() });
    const client = new Client({ name: 'raider-hall-mcp-bridge', version: RAIDER_VERSION });
    try {
      await client.connect(transport, { timeout: 15_000 });
    } catch (err) {
      socket.destroy();
      return `the hall in ${this.options.root} did not answer on ${this.socketPath}: ${errorMessage(err)}`;
    }
    if (this.closed) {
      await client.close().catch(() => {});
      return 'the bridge is closing';
    }
    const upstream = { client, transport };
    client.onclose = () => {
      if (this.upstream !== upstream) return;
      this.upstream = null;
      if (!this.closed) this.options.log(`lost the hall at ${this.socketPath}; tool calls fail until it is back`);
    };
    this.upstream = upstream;
    this.options.log(`connected to the hall at ${this.socketPath}`);
    return upstream;
  }

  private async whyUnreachable(err: NodeJS.ErrnoException): Promise<string> {
    const root = this.options.root;
    const controlSocket = hallPaths(root).socket;
    if (await socketAnswers(controlSocket)) {
      return (
        `the hall in ${root} is running but does not serve MCP (no socket at ${this.socketPath}): ` +
        `add "mcp: { enable: true }" to ${root}/.raider-hall.yml and restart the hall (raider hall stop ${root}; raider hall start ${root})`
      );
    }
    const how = err.code === 'ENOENT' ? `no MCP socket at ${this.socketPath}` : `${this.socketPath}: ${err.message}`;
    return `the hall in ${root} is not running (${how}); start it with: raider hall start ${root}`;
  }
}
