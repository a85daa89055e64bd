/**
 * Which agent session a run's prompt goes to (docs/agents.md, "Sessions
 * across runs"). A bound run (the hall passes `--session`) goes on with the
 * agent session recorded for its hall session: `session/resume` when the
 * agent advertises it, else `session/load` (its replay of the conversation is
 * not the run's output). Only when the agent cannot or will not open it
 * (no capability, or `-32002`/`-32601` to both) does the run start a new
 * session, and says why. A run without a binding always starts a new one.
 */
import {
  type AgentCapabilities,
  type ClientConnection,
  type McpServer,
  methods,
  type NewSessionResponse,
  RequestError,
} from '@agentclientprotocol/sdk';

/** The agent session the prompt goes to, with the modes and options it offers. */
export interface OpenedSession {
  sessionId: string;
  offer: NewSessionResponse;
  how: 'new' | 'resumed' | 'loaded';
  /** Why a recorded session was not continued. */
  fallback?: string;
}

export interface OpenInput {
  conn: ClientConnection;
  capabilities: AgentCapabilities | undefined;
  cwd: string;
  mcpServers: McpServer[];
  /** The agent session recorded for the binding, if any. */
  recorded: string | undefined;
  /** Called as each request goes out, so an error names it. */
  step(name: string): void;
  /** While session/load runs, the agent replays the conversation: those updates are discarded. */
  replaying(on: boolean): void;
}

/** ACP's error for a session the agent does not know (Resource not found). */
const NOT_FOUND = -32002;
const METHOD_NOT_FOUND = -32601;

export async function openSession(input: OpenInput): Promise<OpenedSession> {
  const { conn, capabilities, cwd, mcpServers, recorded } = input;
  let fallback: string | undefined;
  if (recorded !== undefined) {
    const refusals: string[] = [];
    if (capabilities?.sessionCapabilities?.resume != null) {
      input.step('session/resume');
      const resumed = await refused(conn.agent.request(methods.agent.session.resume, { sessionId: recorded, cwd, mcpServers }));
      if (resumed.ok) return { sessionId: recorded, offer: { sessionId: recorded, ...resumed.value }, how: 'resumed' };
      refusals.push(`session/resume: ${resumed.reason}`);
    }
    if (capabilities?.loadSession === true) {
      input.step('session/load');
      input.replaying(true);
      const loaded = await refused(conn.agent.request(methods.agent.session.load, { sessionId: recorded, cwd, mcpServers })).finally(() =>
        input.replaying(false),
      );
      if (loaded.ok) return { sessionId: recorded, offer: { sessionId: recorded, ...loaded.value }, how: 'loaded' };
      refusals.push(`session/load: ${loaded.reason}`);
    }
    fallback =
      refusals.length === 0
        ? `the agent can neither resume nor load a session, so its session ${recorded} was not continued; a new session was started`
        : `the agent did not open its session ${recorded} (${refusals.join('; ')}); a new session was started`;
  }
  input.step('session/new');
  const created = await conn.agent.request(methods.agent.session.new, { cwd, mcpServers });
  return { sessionId: created.sessionId, offer: created, how: 'new', ...(fallback !== undefined ? { fallback } : {}) };
}

/** The agent's answer, or the reason it refused: a session it does not know, or a method it does not have. Other errors are the run's. */
async function refused<T>(request: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; reason: string }> {
  try {
    return { ok: true, value: await request };
  } catch (err) {
    if (err instanceof RequestError && (err.code === NOT_FOUND || err.code === METHOD_NOT_FOUND))
      return { ok: false, reason: `${err.message} (code ${err.code})` };
    throw err;
  }
}
