/**
 * `raider acp-agent [flags]`: the built-in raider as an ACP agent on stdio
 * (docs/agents.md, "The built-in raider over ACP"), so an editor runs it
 * directly and a hall runs it like any ACP agent, through the bridge.
 *
 * One process serves one client. The engine, packs and tools come from the
 * flags and the configuration as for `raider -- MISSION`; each
 * `session/prompt` is one run of the same mission loop (run.ts) in the
 * session's `cwd`, its events sent as `session/update`s, its permission
 * questions asked with `session/request_permission`, and `session/cancel`
 * as the cancel a first SIGINT is to a one-shot run. Sessions are journals
 * as the one-shot raider's (`--no-session`: kept in memory only), so
 * `session/load` and `session/resume` continue them, also in a later process.
 */
import { existsSync, realpathSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import {
  agent,
  type AgentConnection,
  methods,
  ndJsonStream,
  type PermissionOption,
  RequestError,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionModeState,
  type SessionUpdate,
} from '@agentclientprotocol/sdk';
import { type AnnouncedCalls, permissionToolCall, promptText, replayUpdates, updatesForEvent } from '../domain/acp-mapping.js';
import { errorMessage } from '../domain/error-message.js';
import { PERMISSION_MODES, type PermissionMode } from '../domain/permission.js';
import type { AnswerWord, Asker, PermissionAnswer, PermissionQuestion } from '../protocol/permission-channel.js';
import { RAIDER_VERSION } from '../protocol/raider-version.js';
import { journalPath, SESSION_ID_RE } from '../protocol/session-journal.js';
import { parseRaiderArgs, type RaiderArgs } from './args.js';
import { checkRoot, keepStdoutClean, prepareRaider, type RaiderSetup, raiderSystemPrompt } from './cli.js';
import type { RunDocument } from './document.js';
import type { HistoryEntry } from './engines/engine.js';
import { RaiderExit, UsageError } from './errors.js';
import type { JournalWriter } from './journal.js';
import { PermissionGate } from './permissions/gate.js';
import { loadPermissionSettings } from './permissions/settings.js';
import { conversationFromJournal, readJournal, sessionRulesFromJournal } from './replay.js';
import { performRun } from './run.js';
import { openSession } from './session.js';
import { RunSignals } from './signals.js';
import type { EventSink } from './stream.js';
import { ProcessGroups } from './tools/process-groups.js';

export const ACP_AGENT_USAGE = `Usage: raider acp-agent [flags]

Serves the built-in raider as an ACP agent on stdin/stdout (docs/agents.md):
an editor, or a hall entry with acp: { command: raider, args: [acp-agent, ...] },
talks to it. Each session/prompt is one run in the session's cwd.

Flags, as for raider -- MISSION (raider --help):
  -e, --engine NAME, -m, --model NAME, --provider ALIAS, -o KEY=VALUE
  -r, --root DIR              where the engine's configuration is read (default: .)
      --pack NAME             repeatable
      --permission-mode MODE  the sessions' first mode (session/set_mode changes it)
      --max-iterations N      cap on tool rounds of one prompt
      --no-session            keep sessions in memory: no journals, no session/load`;

const MODE_NAMES: Record<PermissionMode, { name: string; description: string }> = {
  default: { name: 'Default', description: 'Ask before writing files, running commands or using the network' },
  acceptEdits: { name: 'Accept edits', description: 'Write files without asking; ask before commands' },
  plan: { name: 'Plan', description: 'Read and plan only; change nothing' },
  auto: { name: 'Auto', description: 'Decide by the rules; ask only what they leave open' },
  bypassPermissions: { name: 'Bypass permissions', description: 'Run every tool without asking' },
};

function modeState(current: PermissionMode): SessionModeState {
  return { currentModeId: current, availableModes: PERMISSION_MODES.map((id) => ({ id, ...MODE_NAMES[id] })) };
}

function isMode(id: string): id is PermissionMode {
  return PERMISSION_MODES.some((m) => m === id);
}

interface AgentSession {
  id: string;
  root: string;
  mode: PermissionMode;
  /** Its journal; undefined with --no-session (or when it could not be created). */
  writer: JournalWriter | undefined;
  /** The conversation so far, without the next mission. */
  history: HistoryEntry[];
  /** Rules granted for the session by `session` answers. */
  sessionRules: string[];
  turns: number;
  /** The prompt running now: its signals (a cancel aborts them) and its end. */
  running: { signals: RunSignals; ended: Promise<unknown> } | undefined;
}

/** The hall's answers as the options of a permission question; `session` only where the gate can keep a rule. */
function permissionOptions(rule: string | undefined): PermissionOption[] {
  return [
    { optionId: 'once', name: 'Allow once', kind: 'allow_once' },
    ...(rule !== undefined ? [{ optionId: 'session', name: `Allow ${rule} for this session`, kind: 'allow_always' as const }] : []),
    { optionId: 'no', name: 'Refuse', kind: 'reject_once' },
  ];
}

/** How long the end of the process waits for its running prompts to end. */
const SHUTDOWN_WAIT_MS = 5000;

const ANSWERS: Record<string, AnswerWord> = { once: 'once', session: 'session', no: 'no' };

function invalid(message: string): RequestError {
  return new RequestError(-32602, message);
}

/** A run that failed, or a configuration the session cannot run with: a JSON-RPC error with the reason. */
function runError(message: string): RequestError {
  return new RequestError(-32603, message);
}

function parseAgentArgs(argv: string[]): RaiderArgs {
  const args = parseRaiderArgs(argv);
  if (args.words.length > 0) throw new UsageError(`raider acp-agent takes no mission (its missions are prompts): ${args.words.join(' ')}`);
  if (args.machine !== undefined)
    throw new UsageError('raider acp-agent: stdout is the ACP connection; --json and --stream-json do not apply');
  if (args.session.kind !== 'new' && args.session.kind !== 'none')
    throw new UsageError(
      'raider acp-agent: sessions are chosen by the client (session/load, session/resume); --session and --continue do not apply',
    );
  if (args.permissionChannel !== undefined)
    throw new UsageError(
      'raider acp-agent: permission questions go to the client (session/request_permission); --permission-channel does not apply',
    );
  return args;
}

function say(text: string): void {
  process.stderr.write(`${text}\n`);
}

export async function runRaiderAcpAgent(argv: string[]): Promise<number> {
  keepStdoutClean();
  let args: RaiderArgs;
  let setup: RaiderSetup;
  try {
    args = parseAgentArgs(argv);
    if (args.help) {
      process.stdout.write(`${ACP_AGENT_USAGE}\n`);
      return 0;
    }
    setup = await prepareRaider(args, checkRoot(args.root), (m) => say(`raider acp-agent: ${m}`));
  } catch (err) {
    if (err instanceof RaiderExit) {
      say(err.message);
      return err.exitCode;
    }
    throw err;
  }
  return serve(args, setup);
}

async function serve(args: RaiderArgs, setup: RaiderSetup): Promise<number> {
  const sessions = new Map<string, AgentSession>();
  const journals = args.session.kind !== 'none';

  const known = (id: string): AgentSession => {
    const session = sessions.get(id);
    if (session === undefined) throw invalid(`unknown session: ${id}`);
    return session;
  };
  const sessionRoot = (cwd: string): string => {
    try {
      return checkRoot(cwd);
    } catch (err) {
      throw invalid(errorMessage(err));
    }
  };
  /** An existing journal of ROOT, opened for this process (its lock held until the end). */
  const reopen = async (id: string, cwd: string): Promise<AgentSession> => {
    const open = sessions.get(id);
    if (open !== undefined) return open;
    const root = sessionRoot(cwd);
    if (!journals || !SESSION_ID_RE.test(id) || !existsSync(journalPath(root, id))) throw RequestError.resourceNotFound(id);
    try {
      const opened = await openSession({ id }, root, say);
      const session: AgentSession = { id, root, mode: setup.permissions.mode, ...opened, turns: 0, running: undefined };
      sessions.set(id, session);
      return session;
    } catch (err) {
      throw runError(`cannot open session ${id}: ${errorMessage(err)}`);
    }
  };

  const app = agent({ name: 'raider' })
    .onRequest(methods.agent.initialize, () => ({
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: journals,
        promptCapabilities: { image: false, audio: false, embeddedContext: false },
        sessionCapabilities: journals ? { resume: {} } : {},
      },
      authMethods: [],
      agentInfo: { name: 'raider', title: 'Raider (built-in)', version: RAIDER_VERSION },
    }))
    .onRequest(methods.agent.session.new, async ({ params }) => {
      const root = sessionRoot(params.cwd);
      const opened = await openSession(journals ? 'new' : undefined, root, say);
      const id = opened.writer?.id ?? randomUUID();
      sessions.set(id, { id, root, mode: setup.permissions.mode, ...opened, turns: 0, running: undefined });
      return { sessionId: id, modes: modeState(setup.permissions.mode) };
    })
    .onRequest(methods.agent.session.resume, async ({ params }) => {
      const session = await reopen(params.sessionId, params.cwd);
      return { modes: modeState(session.mode) };
    })
    .onRequest(methods.agent.session.load, async ({ params, client }) => {
      const session = await reopen(params.sessionId, params.cwd);
      if (session.writer !== undefined) {
        for (const update of replayUpdates(readJournal(session.writer.path).records))
          await client.notify(methods.client.session.update, { sessionId: session.id, update });
      }
      return { modes: modeState(session.mode) };
    })
    .onRequest(methods.agent.session.setMode, ({ params }) => {
      const session = known(params.sessionId);
      if (!isMode(params.modeId)) throw invalid(`unknown mode ${params.modeId}; modes: ${PERMISSION_MODES.join(', ')}`);
      session.mode = params.modeId;
      return {};
    })
    .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
      const session = known(params.sessionId);
      if (session.running !== undefined) throw invalid('a prompt of this session is still running');
      const mission = promptText(params.prompt);
      if (mission === '') throw invalid('empty prompt');
      const signals = new RunSignals();
      const sent: Promise<void>[] = [];
      const send = (update: SessionUpdate): void => {
        sent.push(client.notify(methods.client.session.update, { sessionId: session.id, update }).catch(() => {}));
      };
      const run = promptRun(args, setup, session, mission, signals, send, (request, signal) =>
        client.request(methods.client.session.requestPermission, { sessionId: session.id, ...request }, { cancellationSignal: signal }),
      );
      session.running = { signals, ended: run.catch(() => {}) };
      let doc: RunDocument;
      try {
        doc = await run;
      } finally {
        session.running = undefined;
      }
      // Every update of the turn reaches the client before the turn's answer.
      await Promise.all(sent);
      if (doc.status === 'completed') return { stopReason: 'end_turn' as const };
      if (doc.status === 'cancelled' || doc.status === 'interrupted') return { stopReason: 'cancelled' as const };
      throw runError(`raider run failed: ${doc.error ?? 'no reason given'}`);
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => sessions.get(params.sessionId)?.running?.signals.cancel());

  const conn: AgentConnection = app.connect(
    ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>),
  );
  // stdin's end (the client is gone) or SIGINT/SIGTERM: running turns are cancelled, their tools ended, journals closed.
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  const ending = await Promise.race([conn.closed.then(() => undefined), signalled]);
  const ended: Promise<unknown>[] = [];
  for (const { running } of sessions.values()) {
    running?.signals.cancel();
    if (running !== undefined) ended.push(running.ended);
  }
  // A cancelled run ends at once, and its tools' groups within their grace; the bound is for a tool that will not end.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(ended), new Promise((resolve) => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS)))]);
  clearTimeout(timer);
  for (const s of sessions.values()) s.writer?.close();
  conn.close();
  if (ending !== undefined) {
    process.removeAllListeners(ending);
    process.kill(process.pid, ending);
  }
  return 0;
}

type RequestPermission = (request: Omit<RequestPermissionRequest, 'sessionId'>, signal: AbortSignal) => Promise<RequestPermissionResponse>;

/** One prompt as one run of the mission loop, its events as updates of the session. */
async function promptRun(
  args: RaiderArgs,
  setup: RaiderSetup,
  session: AgentSession,
  mission: string,
  signals: RunSignals,
  send: (update: SessionUpdate) => void,
  requestPermission: RequestPermission,
): Promise<RunDocument> {
  const turn = `t${++session.turns}`;
  const announced: AnnouncedCalls = new Map();
  const events: EventSink = {
    emit(type, payload) {
      for (const update of updatesForEvent(turn, { ...payload, type }, announced)) send(update);
    },
  };
  const asker: Asker = {
    async ask(question: PermissionQuestion, signal: AbortSignal): Promise<PermissionAnswer> {
      const { sessionUpdate: _shown, ...toolCall } = permissionToolCall(turn, { ...question, id: question.call });
      try {
        const answer = await requestPermission({ toolCall, options: permissionOptions(question.rule) }, signal);
        const word = answer.outcome.outcome === 'selected' ? ANSWERS[answer.outcome.optionId] : undefined;
        if (word !== undefined) return { answer: word, reason: 'answered by the client' };
        return { answer: 'no', reason: 'the client cancelled the question' };
      } catch (err) {
        return { answer: 'no', reason: `the client did not answer: ${errorMessage(err)}` };
      }
    },
    close() {},
  };

  let permissions: ReturnType<typeof loadPermissionSettings>;
  try {
    permissions = loadPermissionSettings(session.root, session.mode);
  } catch (err) {
    throw runError(errorMessage(err));
  }
  const processes = new ProcessGroups();
  let doc: RunDocument;
  try {
    doc = await performRun({
      engine: setup.engine,
      tools: setup.tools,
      root: session.root,
      mission,
      history: session.history,
      maxIterations: args.maxIterations,
      signals,
      events,
      journal: session.writer,
      system: raiderSystemPrompt(setup, session.root, permissions.mode),
      makeGate: (onEvent) =>
        new PermissionGate({
          mode: permissions.mode,
          rules: permissions,
          sessionRules: session.sessionRules,
          ctx: { root: realpathSync(session.root), home: setup.home },
          asker,
          onEvent: (event) => {
            if (event.answer === 'session' && event.rule !== undefined) session.sessionRules.push(event.rule);
            onEvent(event);
          },
        }),
      processes,
      toolEnv: setup.toolEnv,
    });
  } finally {
    // Whatever a tool started is gone before the turn is answered (docs/raider.md, "Tools").
    await processes.terminateAll();
  }
  // The next prompt goes on from this one: as the journal replays it, else from this run's answer.
  if (session.writer !== undefined) {
    const { records } = readJournal(session.writer.path);
    session.history = conversationFromJournal(records);
    session.sessionRules = sessionRulesFromJournal(records);
  } else if (doc.status === 'completed') {
    session.history.push({ role: 'user', content: mission }, { role: 'assistant', content: doc.response ?? '' });
  }
  return doc;
}
