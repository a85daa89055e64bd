/** MCP SDK clients for the hall's MCP faces: over `.raider-hall.mcp`, or over the stdio of `raider hall mcp`. */
import net from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach } from 'vitest';
import { LineTransport } from '../../src/adapters/mcp/line-transport.js';
import { mcpAdapter } from '../../src/adapters/mcp/mcp-adapter.js';
import { hallEnv, RAIDER_BIN, startTestHall, type Json, type TestHall, type TestHallOptions } from '../support/test-hall.js';

export const MCP_CONFIG = 'mcp: { enable: true }\nraiders: { bjorn: {}, ivar: { provider: acme } }\n';

export async function startMcpHall(options: TestHallOptions = {}): Promise<TestHall> {
  return startTestHall({ config: MCP_CONFIG, adapters: [mcpAdapter], ...options });
}

/** The hall and connection a test opened, closed and stopped after each test of the file that made it. */
export interface McpScope {
  hall: TestHall | undefined;
  mcp: McpConnection | undefined;
}

export function mcpScope(): McpScope {
  const opened: McpScope = { hall: undefined, mcp: undefined };
  afterEach(async () => {
    await opened.mcp?.close().catch(() => {});
    opened.mcp = undefined;
    await opened.hall?.stop();
    opened.hall = undefined;
  });
  return opened;
}

export interface McpConnection {
  client: Client;
  /** Calls a tool; the result, with its text and structured content at hand. */
  call(name: string, args?: Record<string, unknown>, options?: { timeoutMs?: number }): Promise<ToolOutcome>;
  close(): Promise<void>;
}

export interface ToolOutcome {
  isError: boolean;
  text: string;
  json: Json | undefined;
  raw: CallToolResult;
}

function outcome(raw: CallToolResult): ToolOutcome {
  const text = raw.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  return { isError: raw.isError === true, text, json: raw.structuredContent as Json | undefined, raw };
}

function wrap(client: Client): McpConnection {
  return {
    client,
    call: async (name, args = {}, options = {}) =>
      outcome((await client.callTool({ name, arguments: args }, undefined, { timeout: options.timeoutMs ?? 30_000 })) as CallToolResult),
    close: () => client.close(),
  };
}

/** An MCP client on the hall's UNIX socket. */
export async function connectSocket(socketPath: string): Promise<McpConnection> {
  const socket = net.connect(socketPath);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(new LineTransport({ input: socket, output: socket, release: () => socket.destroy() }));
  return wrap(client);
}

/** `raider hall mcp ROOT` (the built CLI) with an MCP client on its stdio. */
export async function connectStdio(root: string, stderr: string[] = []): Promise<McpConnection & { pid: number | null }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [RAIDER_BIN, 'hall', 'mcp', root],
    env: hallEnv() as Record<string, string>,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
  const client = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
  let closing = false;
  client.onclose = () => {
    // The bridge went away on its own: show why.
    if (!closing) console.error(`raider hall mcp ended unexpectedly; its stderr:\n${stderr.join('')}`);
  };
  await client.connect(transport);
  const connection = wrap(client);
  return {
    ...connection,
    close: () => {
      closing = true;
      return connection.close();
    },
    pid: transport.pid,
  };
}
