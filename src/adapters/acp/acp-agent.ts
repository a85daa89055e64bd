/**
 * The ACP agent one connection talks to (README, "Editors (ACP)"), built on the
 * SDK's app API: a fresh AgentApp per connection, its sessions kept in the
 * shared AcpHub. When the connection closes its sessions are forgotten:
 * running runs cancelled, waiting prompts dropped, journals kept.
 */
import fs from 'node:fs';
import { agent, methods, RequestError, type AgentApp, type AgentConnection, type SessionMode } from '@agentclientprotocol/sdk';
import { z } from 'zod';
import type { HallConfig } from '../../ports/hall-config.js';
import { promptText, replayUpdates } from '../../domain/acp-mapping.js';
import { slotOf } from '../../domain/names.js';
import { createSession, journalPath, SESSION_ID_RE } from '../../protocol/session-journal.js';
import { RAIDER_VERSION } from '../../protocol/raider-version.js';
import type { AcpHub, AcpClientLink, AcpSessionInfo } from './acp-hub.js';
import type { AcpSessionStore } from './acp-session-store.js';
import { ownEntry } from '../../domain/own-entry.js';
import { isRecord } from '../../domain/records.js';

export const ACP_PROTOCOL_VERSION = 1;

const MODES = [
  { id: 'default', name: 'Default', description: 'Ask before writing files, running commands or using the network' },
  { id: 'acceptEdits', name: 'Accept edits', description: 'Write files without asking; ask before commands' },
  { id: 'plan', name: 'Plan', description: 'Read and plan only; change nothing' },
  { id: 'bypassPermissions', name: 'Bypass permissions', description: 'Run every tool without asking' },
] as const;

/** Some clients (of another implementation) put raiderName at the top level of session/new; the SDK's schema would drop it. */
const newSessionParams = z.looseObject({
  cwd: z.string(),
  mcpServers: z.array(z.unknown()).optional(),
  raiderName: z.string().optional(),
  _meta: z.looseObject({ raiderName: z.string().optional() }).nullish(),
});

export interface AcpAgentDeps {
  hub: AcpHub;
  sessions: AcpSessionStore;
  config: HallConfig;
  root: string;
  log: (line: string) => void;
}

/** The answer to `initialize`: only what works. The stdio bridge answers with the same, at once. */
export function initializeResult() {
  return {
    protocolVersion: ACP_PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: false, audio: false, embeddedContext: false },
      sessionCapabilities: { list: {}, resume: {}, close: {} },
    },
    authMethods: [],
    agentInfo: { name: 'raider-hall', title: 'Raider Hall', version: RAIDER_VERSION },
  };
}

function modesFor(current: string) {
  const available: SessionMode[] = MODES.map((m) => ({ ...m }));
  if (!available.some((m) => m.id === current)) available.push({ id: current, name: current, description: 'The raider entry\u2019s mode' });
  return { currentModeId: current, availableModes: available };
}

function invalid(message: string): RequestError {
  return new RequestError(-32602, message);
}

export function createAcpAgent(deps: AcpAgentDeps): AgentApp {
  const { hub, config } = deps;
  const owned = new Set<string>();
  let connection: AgentConnection | null = null;

  const link: AcpClientLink = {
    update: async (sessionId, update) => {
      if (!connection) return;
      await connection.client.notify(methods.client.session.update, { sessionId, update });
    },
    askPermission: async (params, signal) => {
      if (!connection) return 'cancelled';
      try {
        const response = await connection.client.request(methods.client.session.requestPermission, params, {
          cancellationSignal: signal,
        });
        return response.outcome.outcome === 'selected' ? response.outcome.optionId : 'cancelled';
      } catch {
        return 'cancelled';
      }
    },
  };

  const session = (sessionId: unknown): AcpSessionInfo => {
    if (typeof sessionId !== 'string' || sessionId === '') throw invalid('missing sessionId');
    const info = hub.has(sessionId, link) ? hub.info(sessionId) : undefined;
    if (!info) throw invalid(`unknown session: ${sessionId}`);
    return info;
  };

  const pickRaider = (name: string | undefined): string => {
    const configured = Object.keys(config.raiders);
    if (name === undefined || name === '') {
      const first = configured[0];
      if (first === undefined) throw invalid('no raiders configured and none specified');
      return first;
    }
    if (!configured.includes(slotOf(name).baseName)) {
      throw invalid(`unknown raider ${name}; configured raiders: ${configured.join(', ') || '(none)'}`);
    }
    return name;
  };

  const entryMode = (raider: string) => ownEntry(config.raiders, slotOf(raider).baseName)?.permission_mode ?? 'default';

  const openExisting = async (sessionId: string, cwd: string): Promise<AcpSessionInfo> => {
    if (SESSION_ID_RE.test(sessionId)) await hub.syncJournal(sessionId);
    if (!SESSION_ID_RE.test(sessionId) || !fs.existsSync(journalPath(deps.root, sessionId))) {
      throw RequestError.resourceNotFound(sessionId);
    }
    const record = deps.sessions.get(sessionId);
    const raider =
      record?.raider !== undefined && ownEntry(config.raiders, slotOf(record.raider).baseName) ? record.raider : pickRaider(undefined);
    const info: AcpSessionInfo = { sessionId, raider, cwd: cwd || record?.cwd || deps.root, modeId: record?.mode ?? entryMode(raider) };
    await hub.open(info, link);
    owned.add(sessionId);
    return info;
  };

  const app = agent({ name: 'raider-hall' })
    .onConnect((conn) => {
      connection = conn;
      void conn.closed.then(async () => {
        for (const id of owned) await hub.close(id).catch((err: Error) => deps.log(`acp: closing ${id}: ${err.message}`));
        owned.clear();
      });
    })
    .onRequest(methods.agent.initialize, () => initializeResult())
    .onRequest('session/new', newSessionParams, async ({ params }) => {
      const raider = pickRaider(params.raiderName ?? params._meta?.raiderName);
      const sessionId = createSession(deps.root, { raiderVersion: RAIDER_VERSION }).id;
      await hub.syncJournal(sessionId);
      const modeId = entryMode(raider);
      await deps.sessions.put(sessionId, { raider, cwd: params.cwd, mode: modeId, updatedAt: new Date().toISOString() });
      await hub.open({ sessionId, raider, cwd: params.cwd, modeId }, link);
      owned.add(sessionId);
      return { sessionId, modes: modesFor(modeId) };
    })
    .onRequest(methods.agent.session.load, async ({ params }) => {
      const info = await openExisting(params.sessionId, params.cwd);
      const lines = fs.readFileSync(journalPath(deps.root, info.sessionId), 'utf8').split('\n');
      const records = lines.flatMap((line) => {
        try {
          const value: unknown = JSON.parse(line);
          return isRecord(value) ? [value] : [];
        } catch {
          return [];
        }
      });
      for (const update of replayUpdates(records)) await link.update(info.sessionId, update);
      return { modes: modesFor(info.modeId) };
    })
    .onRequest(methods.agent.session.resume, async ({ params }) => {
      const info = await openExisting(params.sessionId, params.cwd);
      return { modes: modesFor(info.modeId) };
    })
    .onRequest(methods.agent.session.list, ({ params }) => {
      const all = deps.sessions.list().filter((s) => !params.cwd || s.cwd === params.cwd);
      const start = Number(params.cursor ?? 0) || 0;
      const page = all.slice(start, start + 50);
      return {
        sessions: page.map((s) => ({ sessionId: s.sessionId, cwd: s.cwd, ...(s.title ? { title: s.title } : {}), updatedAt: s.updatedAt })),
        ...(start + 50 < all.length ? { nextCursor: String(start + 50) } : {}),
      };
    })
    .onRequest(methods.agent.session.close, async ({ params }) => {
      session(params.sessionId);
      owned.delete(params.sessionId);
      await hub.close(params.sessionId);
      return {};
    })
    .onRequest(methods.agent.session.setMode, ({ params }) => {
      const info = session(params.sessionId);
      if (!MODES.some((m) => m.id === params.modeId) && params.modeId !== entryMode(info.raider)) {
        throw invalid(`unknown mode ${params.modeId}; modes: ${MODES.map((m) => m.id).join(', ')}`);
      }
      hub.setMode(info.sessionId, params.modeId);
      const record = deps.sessions.get(info.sessionId);
      if (record) void deps.sessions.put(info.sessionId, { ...record, mode: params.modeId });
      return {};
    })
    .onRequest(methods.agent.session.prompt, async ({ params }) => {
      const info = session(params.sessionId);
      const text = promptText(params.prompt);
      if (text === '') throw invalid('empty prompt');
      const record = deps.sessions.get(info.sessionId);
      if (record) {
        await deps.sessions.put(info.sessionId, {
          ...record,
          title: record.title ?? text.replace(/\s+/g, ' ').slice(0, 80),
          updatedAt: new Date().toISOString(),
        });
      }
      const answer = await hub.prompt(info.sessionId, text);
      if ('error' in answer) throw new RequestError(-32000, answer.error);
      return { stopReason: answer.stopReason };
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      if (hub.has(params.sessionId, link)) hub.cancel(params.sessionId);
    })
    // Some clients send session/cancel as a request and wait for {}.
    .onRequest('session/cancel', z.looseObject({ sessionId: z.string() }), ({ params }) => {
      session(params.sessionId);
      hub.cancel(params.sessionId);
      return {};
    });
  return app;
}
