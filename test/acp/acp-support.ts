/** An SDK client connected to a test hall's ACP agent over TCP or the bridge's UNIX socket. */
import net from 'node:net';
import { Readable, Writable } from 'node:stream';
import { client, methods, ndJsonStream, type ClientConnection } from '@agentclientprotocol/sdk';
import { afterEach } from 'vitest';
import { acpAdapter } from '../../src/adapters/acp/acp-adapter.js';
import { startTestHall, type Json, type TestHall, type TestHallOptions } from '../support/test-hall.js';

export interface AcpTestClient {
  conn: ClientConnection;
  updates: Json[];
  /** Answers each session/request_permission; defaults to the first option. `signal` aborts when the agent withdraws it. */
  onPermission: (params: Json, signal: AbortSignal) => Promise<Json> | Json;
  permissions: Json[];
  socket: net.Socket;
  close(): void;
}

export async function startAcpHall(
  config: string,
  env: Record<string, string | undefined> = {},
  adapters: NonNullable<TestHallOptions['adapters']> = [acpAdapter],
): Promise<{ hall: TestHall; port: number }> {
  const hall = await startTestHall({ config, adapters, env: { RAIDER_HALL_ACP_PORT: '0', ...env } });
  const status = await hall.request({ cmd: 'status' });
  return { hall, port: status.acp.port as number };
}

/** The hall and client a test opens through it, stopped and closed after each test of the file that made it. */
export interface AcpScope {
  /** `startAcpHall`, the hall stopped after the test. */
  start(...args: Parameters<typeof startAcpHall>): Promise<{ hall: TestHall; port: number }>;
  /** `connectAcp` to the hall's port, the client closed after the test. */
  connect(port: number): Promise<AcpTestClient>;
  /** A hall started, a client connected and initialized, and a new session in the hall's root. */
  session(...args: Parameters<typeof startAcpHall>): Promise<{ hall: TestHall; acp: AcpTestClient; sessionId: string }>;
}

export function acpScope(): AcpScope {
  let hall: TestHall | undefined;
  let acp: AcpTestClient | undefined;
  afterEach(async () => {
    acp?.close();
    acp = undefined;
    await hall?.stop();
    hall = undefined;
  });
  const scope: AcpScope = {
    async start(...args) {
      const started = await startAcpHall(...args);
      hall = started.hall;
      return started;
    },
    async connect(port) {
      acp = await connectAcp({ port });
      return acp;
    },
    async session(...args) {
      const started = await scope.start(...args);
      const client = await scope.connect(started.port);
      await initialize(client);
      return { hall: started.hall, acp: client, sessionId: await newSession(client, started.hall.root) };
    },
  };
  return scope;
}

export async function connectAcp(target: { port: number } | { path: string }): Promise<AcpTestClient> {
  const socket = 'port' in target ? net.connect(target.port, '127.0.0.1') : net.connect(target.path);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  const updates: Json[] = [];
  const permissions: Json[] = [];
  const state: AcpTestClient = {
    conn: undefined as never,
    updates,
    permissions,
    socket,
    onPermission: (params) => ({ outcome: { outcome: 'selected', optionId: params.options[0].optionId } }),
    close: () => socket.destroy(),
  };
  const app = client({ name: 'test-client' })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params as Json);
    })
    .onRequest(methods.client.session.requestPermission, async ({ params, signal }) => {
      permissions.push(params as Json);
      return (await state.onPermission(params as Json, signal)) as never;
    });
  state.conn = app.connect(
    ndJsonStream(Writable.toWeb(socket) as WritableStream<Uint8Array>, Readable.toWeb(socket) as ReadableStream<Uint8Array>),
  );
  return state;
}

export async function initialize(c: AcpTestClient): Promise<Json> {
  return (await c.conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} })) as Json;
}

export async function newSession(c: AcpTestClient, cwd: string, raiderName?: string): Promise<string> {
  const res = (await c.conn.agent.request('session/new', { cwd, mcpServers: [], ...(raiderName ? { raiderName } : {}) })) as Json;
  return res.sessionId as string;
}

export function prompt(c: AcpTestClient, sessionId: string, text: string): Promise<Json> {
  return c.conn.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] }) as Promise<Json>;
}

export function updatesOf(c: AcpTestClient, sessionId: string): Json[] {
  return c.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update as Json);
}
