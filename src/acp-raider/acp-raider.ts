/**
 * `raider acp-client`: the ACP bridge, a raider of its own (docs/agents.md).
 * To the hall it speaks the raider contract (argv, `--stream-json` events,
 * exit codes: docs/raider.md); to the agent it starts as its child it speaks
 * the client role of ACP over stdio. One run is one prompt turn: initialize,
 * session/new in the root, session/prompt with the mission, and the turn's
 * stop reason (or the agent's error, or its crash) is the run's end.
 */
import './zod-jitless.js';
import fs from 'node:fs';
import { Writable } from 'node:stream';
import {
  type AuthMethod,
  client,
  type ClientConnection,
  type McpServer,
  methods,
  ndJsonStream,
  RequestError,
  type PermissionOptionKind,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type StopReason,
} from '@agentclientprotocol/sdk';
import { errorMessage } from '../domain/error-message.js';
import { isRecord } from '../domain/records.js';
import { type Asker, PermissionChannel, type PermissionAnswer } from '../protocol/permission-channel.js';
import { ACP_RAIDER_USAGE, ACP_SPARE_USAGE, type AcpRaiderArgs, parseAcpRaiderArgs, spareIdleSeconds } from './args.js';
import { rehearseTurn } from './rehearsal.js';
import { awaitHandOver, sayExit, warmUp } from './spare.js';
import { writeAllSync } from '../protocol/canonical-line.js';
import { AgentLines, MAX_MESSAGE_BYTES } from './agent-lines.js';
import { type AgentExit, type AgentProcess, exitText, startAgent, within } from './agent-process.js';
import { type EventSink, silentSink, StreamJsonSink } from './event-stream.js';
import { planSessionConfig } from './session-config.js';
import { promptUsage, type ToolSeen, TurnUpdates } from './turn-updates.js';
import { type OpenedSession, openSession } from './open-session.js';
import { definedFields } from '../domain/defined-fields.js';
import { type Cost, runCostOf, type RunUsage } from '../domain/run-usage.js';

/** How long a closed connection waits for the agent's exit status, to say how it ended. */
const EXIT_WAIT_MS = 2000;

type RunEnd =
  | { status: 'completed'; response: string }
  | { status: 'failed'; error: string }
  | { status: 'cancelled' }
  | { status: 'interrupted'; signal: 'INT' | 'TERM' };

export async function runAcpRaider(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') && !argv.slice(0, argv.indexOf('--help')).includes('--')) {
    process.stdout.write(
      `${ACP_RAIDER_USAGE}\n${ACP_SPARE_USAGE}\n\nRuns MISSION as one prompt turn of the ACP agent CMD (docs/agents.md);\n` +
        'with --spare, waits for the run a hall hands it on stdin (docs/agents.md, "Warm bridges").\n',
    );
    return 0;
  }
  if (argv[0] === '--spare') return runSpare(argv.slice(1));
  const parsed = parseAcpRaiderArgs(argv, process.cwd());
  if (!parsed.ok) {
    process.stderr.write(`raider acp-client: ${parsed.error}\n${ACP_RAIDER_USAGE}\n`);
    return 2;
  }
  const args = parsed.args;
  return runBridge(args, { events: args.streamJson ? new StreamJsonSink(1) : silentSink, log: writeStderr });
}

/**
 * A warm bridge (`--spare [--warm-idle SECONDS]`, docs/agents.md "Warm
 * bridges"): loaded ahead, it waits for the run the hall hands it, then runs
 * it exactly as a bridge started for the run would, with the run's arguments,
 * environment and working directory, its events into the run's events file
 * and its stderr into the run's stderr spool. Without a run it ends, 0.
 */
async function runSpare(argv: readonly string[]): Promise<number> {
  const idle = spareIdleSeconds(argv);
  if (typeof idle === 'string') {
    process.stderr.write(`raider acp-client: ${idle}\n${ACP_SPARE_USAGE}\n`);
    return 2;
  }
  warmUp();
  try {
    await rehearseTurn();
  } catch (err) {
    // Only a run's speed depends on it: the bridge takes its run all the same.
    process.stderr.write(`raider acp-client: a warm bridge's rehearsal failed: ${errorMessage(err)}\n`);
  }
  const wait = await awaitHandOver(idle * 1000);
  if (wait.kind === 'ended') {
    process.stderr.write(`raider acp-client: a warm bridge ends unused: ${wait.why}\n`);
    return 0;
  }
  const handOver = wait.handOver;
  // Whatever goes wrong from here is the run's, and is said where its stderr goes.
  const errFd = fs.openSync(handOver.stderr_path, 'a');
  const log = (text: string) => writeAllSync(errFd, text);
  process.chdir(handOver.cwd);
  replaceEnvironment(process.env, handOver.env);
  const parsed = parseAcpRaiderArgs(handOver.argv, handOver.cwd);
  if (!parsed.ok) {
    log(`raider acp-client: ${parsed.error}\n${ACP_RAIDER_USAGE}\n`);
    return 2;
  }
  const eventsFd = fs.openSync(handOver.events_path, 'a');
  return runBridge(parsed.args, { events: parsed.args.streamJson ? new StreamJsonSink(eventsFd) : silentSink, log, ending: sayExit });
}

/** The environment of a bridge started for the run: the hand-over's, in place of the one the spare was started with. */
function replaceEnvironment(env: NodeJS.ProcessEnv, wanted: Readonly<Record<string, string>>): void {
  for (const key of Object.keys(env)) if (!(key in wanted)) delete env[key];
  Object.assign(env, wanted);
}

function writeStderr(text: string): void {
  process.stderr.write(text);
}

/** Where the run's events go, and its stderr: the bridge's own, or (a warm bridge's run) the run's files. */
interface BridgeOutput {
  events: EventSink;
  log: (text: string) => void;
  /** A warm bridge's word to its hall, at the last moment, that it exits with `code`. */
  ending?: (code: number) => void;
}

async function runBridge(args: AcpRaiderArgs, out: BridgeOutput): Promise<number> {
  const { events } = out;
  const warn = (message: string) => out.log(`${message}\n`);
  const started = performance.now();
  // The agent first: its start is the run's longest wait, and what follows goes on beside it.
  // Started here, not inside the race: whatever ends the run (a signal may, while the agent
  // is still starting), the agent this run started is known below and stopped.
  const starting = startAgent({ command: args.command, args: args.args, cwd: args.root, env: agentEnv(process.env), stderr: out.log });
  events.emit('run.started', { engine: 'acp', agent: args.command, ...definedFields({ model: args.model }) });
  events.emit('run.state', { state: 'running' });
  const signals = watchSignals();
  let toolCalls = 0;
  // After the end is fixed (a signal may fix it mid-turn), the turn adds no events.
  let open = true;
  const turnEvents: EventSink = {
    emit(type, payload) {
      if (!open) return;
      if (type === 'tool.call') toolCalls++;
      events.emit(type, payload);
    },
  };
  const updates = new TurnUpdates(turnEvents);

  // SIGINT cancels: a turn in flight gets session/cancel and ends as the agent says (a deaf
  // agent gets the hall's escalation); before the prompt there is nothing to wait for.
  const control: TurnControl = { cancelled: false, questions: new AbortController() };
  const channel = args.permissionChannel !== undefined ? new PermissionChannel(args.permissionChannel, warn) : undefined;
  const cancelled = signals.cancelled.then((): Promise<RunEnd> => {
    control.cancelled = true;
    // Open questions are withdrawn: the agent hears `cancelled`, and the hall, whose channel closes, takes them back.
    control.questions.abort();
    channel?.close();
    if (control.cancel === undefined) return Promise.resolve({ status: 'cancelled' });
    control.cancel();
    return new Promise<RunEnd>(() => {});
  });
  const end = await Promise.race([
    cancelled,
    signals.interrupted.then((signal): RunEnd => ({ status: 'interrupted', signal })),
    (async (): Promise<RunEnd> => {
      const start = await starting;
      if (!start.ok) return { status: 'failed', error: startError(args, start.code, start.error) };
      return promptTurn(args, start.agent, updates, turnEvents, control, channel, warn);
    })(),
  ]);
  signals.settle();
  control.questions.abort();
  open = false;

  const elapsedMs = performance.now() - started;
  // The agent never outlives its run: its turn is over, whatever it was doing. Told to stop
  // (unless its answer already did) before the run's last events are written, so that its
  // exit and theirs overlap.
  const agent = await starting;
  const stopped = agent.ok ? agent.agent.stop() : Promise.resolve();
  if (end.status === 'completed') events.emit('message', { role: 'assistant', content: end.response });
  events.emit('run.state', { state: end.status });
  const usage: RunUsage = { ...control.tokens, ...updates.usage };
  events.emit('run.finished', { ...runDocument(end, elapsedMs, toolCalls, documentFields(args, control, usage)) });
  await stopped;
  signals.release();
  channel?.close();

  if (!args.streamJson) {
    if (end.status === 'completed') process.stdout.write(`${end.response}\n`);
    else if (end.status === 'failed') warn(`raider acp-client: ${end.error}`);
  }
  const code = end.status === 'completed' ? 0 : 1;
  if (end.status === 'cancelled' || end.status === 'interrupted') {
    // Die by the signal, as the raider contract says a cancelled or interrupted raider does.
    const signal = end.status === 'cancelled' ? 'SIGINT' : `SIG${end.signal}`;
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else if (args.streamJson) {
    // Everything the run says went out synchronously and the agent is gone: the bridge ends
    // now, not after Node has taken its heap apart, which the hall would wait for. A warm
    // bridge says so first to the hall that handed it the run, which need not wait for the
    // kernel to take the process apart either (docs/agents.md, "Warm bridges").
    out.ending?.(code);
    process.exit(code);
  }
  return code;
}

/** The agent's environment: ours, without the variable by which a restarted hall finds its raiders (the bridge is the raider). */
function agentEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { RAIDER_HALL_RUN_ID: _runId, ...rest } = env;
  return rest;
}

function startError(args: AcpRaiderArgs, code: string | undefined, error: string): string {
  if (code === 'ENOENT') {
    const install = args.package !== undefined ? `; it comes with the npm package ${args.package} (npm install -g ${args.package})` : '';
    return `agent command ${args.command} not found (not on PATH nor a file)${install}`;
  }
  if (code === 'EACCES') return `agent command ${args.command} cannot be run (not executable)`;
  return `agent command ${args.command} could not be started: ${error}`;
}

/** A line for the slot log (the bridge's stderr, or the run's stderr spool). */
type Warn = (message: string) => void;

/** A turn as the signal handling sees it: whether a cancel was asked for, and how to send it once the prompt is in flight. */
interface TurnControl {
  cancelled: boolean;
  cancel?: () => void;
  /** Aborted at a cancel or the run's end: questions still open are withdrawn. */
  questions: AbortController;
  /** Why the binding's agent session was not continued, for the run document (the hall says it as `hall.session_error`). */
  sessionError?: string;
  /** The turn's tokens, as the prompt result said them. */
  tokens?: RunUsage;
  /** The agent session the prompt went to, once the agent opened one. */
  agentSession?: string;
  /** Whether that session is the one the hall recorded for the binding (resumed or loaded), not a new one. */
  continued?: boolean;
}

async function promptTurn(
  args: AcpRaiderArgs,
  agent: AgentProcess,
  updates: TurnUpdates,
  events: EventSink,
  control: TurnControl,
  channel: Asker | undefined,
  warn: Warn,
): Promise<RunEnd> {
  // The conversation an agent replays while it loads a session is history, not this run's output.
  let replaying = false;
  const app = client({ name: 'raider-hall' })
    .onNotification(methods.client.session.update, ({ params }) => {
      if (!replaying) updates.apply(params.update);
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) =>
      answerPermission(params, updates.asked(params.toolCall), events, channel, control.questions.signal),
    );
  const lines = new AgentLines(agent.child.stdout);
  const conn: ClientConnection = app.connect(ndJsonStream(Writable.toWeb(agent.child.stdin) as WritableStream<Uint8Array>, lines.readable));
  let step = 'initialize';
  let authMethods: readonly AuthMethod[] = [];
  // One deadline for both steps of the start: a hung agent ends the run, not the hall's patience.
  const start = deadline(args.startTimeout * 1000);
  const overLimit = lines.overLimit.then(
    (): RunEnd => ({
      status: 'failed',
      error: `the agent sent a message over ${MAX_MESSAGE_BYTES / (1024 * 1024)} MiB during ${step}; the bridge stopped reading it`,
    }),
  );
  const turn = async (): Promise<RunEnd> => {
    const init = await start.within(conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} }));
    if (init === TIMED_OUT) return startTimeoutEnd(step, args.startTimeout);
    authMethods = init.authMethods ?? [];
    const session = await start.within(
      openSession({
        conn,
        capabilities: init.agentCapabilities,
        cwd: args.root,
        mcpServers: hallTools(args),
        // The agent session the hall recorded for the binding; a run of a plain name has none.
        recorded: args.session !== undefined ? args.agentSession : undefined,
        step: (name) => (step = name),
        replaying: (on) => (replaying = on),
      }),
    );
    if (session === TIMED_OUT) return startTimeoutEnd(step, args.startTimeout);
    start.clear();
    noteOpened(session, events, control, warn);
    const plan = planSessionConfig(session.offer, args);
    if (!plan.ok) return { status: 'failed', error: plan.error };
    for (const n of plan.notes) note(events, warn, n.setting, n.text);
    for (const change of plan.steps) {
      if (change.kind === 'set_mode') {
        step = 'session/set_mode';
        await conn.agent.request(methods.agent.session.setMode, { sessionId: session.sessionId, modeId: change.modeId });
      } else {
        step = 'session/set_config_option';
        await conn.agent.request(methods.agent.session.setConfigOption, {
          sessionId: session.sessionId,
          configId: change.configId,
          value: change.value,
        });
      }
    }
    step = 'session/prompt';
    const prompt = conn.agent.request(methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: 'text', text: args.mission }],
    });
    control.cancel = () => void conn.agent.notify(methods.agent.session.cancel, { sessionId: session.sessionId }).catch(() => {});
    const result = await prompt;
    // The turn is over and nothing more is asked of the agent: it is told to stop now, so that its
    // exit, which the run's end waits for, overlaps with the bridge's last work.
    void agent.stop();
    control.tokens = promptUsage(result);
    return stopEnd(result.stopReason, updates.response, control.cancelled);
  };
  try {
    return await Promise.race([turn(), overLimit]);
  } catch (err) {
    if (err instanceof RequestError && err.code === AUTH_REQUIRED) return { status: 'failed', error: authText(step, authMethods) };
    if (err instanceof RequestError)
      return { status: 'failed', error: `the agent answered ${step} with an error: ${err.message} (code ${err.code})` };
    // The connection ended under the request: the agent is gone, or going.
    const exit = await within(agent.exited, EXIT_WAIT_MS);
    return { status: 'failed', error: crashText(step, exit, agent.stderrTail(), errorMessage(err)) };
  } finally {
    start.clear();
    conn.close();
    noteSkipped(lines, warn);
  }
}

/** The name the hall's MCP server has for the agent, as for any MCP client (docs/mcp.md). */
const HALL_MCP_NAME = 'raider-hall';

/** The hall's MCP server on stdio for the agent's session, when the hall gives one (`mcp.enable`). */
function hallTools(args: AcpRaiderArgs): McpServer[] {
  if (args.hallMcp === undefined) return [];
  return [{ name: HALL_MCP_NAME, command: args.hallMcp.command, args: [...args.hallMcp.args], env: [] }];
}

/** Says which agent session the run prompts; the hall records it with the binding from the run document (`agent_session`). */
function noteOpened(opened: OpenedSession, events: EventSink, control: TurnControl, warn: Warn): void {
  if (opened.fallback !== undefined) {
    control.sessionError = opened.fallback;
    note(events, warn, 'session', opened.fallback);
  }
  control.agentSession = opened.sessionId;
  control.continued = opened.how !== 'new';
  events.emit('session', { agent_session: opened.sessionId, opened: opened.how });
}

/** A note in the run's events and the same line in the slot log. */
function note(events: EventSink, warn: Warn, setting: 'mode' | 'model' | 'session', text: string): void {
  events.emit('note', { setting, text });
  warn(`raider acp-client: ${text}`);
}

/** ACP's error code for a request the agent refuses until the user logs in. */
const AUTH_REQUIRED = -32000;

function authText(step: string, methods: readonly AuthMethod[]): string {
  const head = `the agent needs a login: it answered ${step} with auth required (code ${AUTH_REQUIRED})`;
  if (methods.length === 0) return `${head}, and named no way to log in; log in as its documentation says`;
  const ways = methods.map((m) => `${m.name} (${m.id})${m.description ? `: ${m.description}` : ''}`);
  return `${head}; log in to it by one of its methods, then run again: ${ways.join('; ')}`;
}

const TIMED_OUT = Symbol('timed out');

/** A timer that a promise can be raced against. */
function deadline(ms: number): { within<T>(p: Promise<T>): Promise<T | typeof TIMED_OUT>; clear(): void } {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), ms)));
  return { within: (p) => Promise.race([p, expired]), clear: () => clearTimeout(timer) };
}

function startTimeoutEnd(step: string, seconds: number): RunEnd {
  return {
    status: 'failed',
    error: `the agent did not answer ${step} within ${seconds} s (acp.start_timeout); it was stopped`,
  };
}

/** Lines of the agent's stdout that were not JSON-RPC messages are skipped; the slot log says how many. */
function noteSkipped(lines: AgentLines, warn: Warn): void {
  const { count, first } = lines.skipped();
  if (count === 0) return;
  warn(
    `raider acp-client: skipped ${count} line${count === 1 ? '' : 's'} of the agent's stdout that were not JSON-RPC messages (the first: ${first})`,
  );
}

function stopEnd(reason: StopReason, response: string, cancelRequested: boolean): RunEnd {
  switch (reason) {
    case 'end_turn':
      return { status: 'completed', response };
    case 'cancelled':
      if (cancelRequested) return { status: 'cancelled' };
      return { status: 'failed', error: 'the agent ended the turn as cancelled, though nobody cancelled it (stop reason cancelled)' };
    case 'max_tokens':
      return { status: 'failed', error: 'the agent stopped: it reached its token limit (stop reason max_tokens)' };
    case 'max_turn_requests':
      return {
        status: 'failed',
        error: 'the agent stopped: it reached its limit of model requests in one turn (stop reason max_turn_requests)',
      };
    case 'refusal':
      return { status: 'failed', error: 'the agent refused to go on (stop reason refusal)' };
    default:
      return { status: 'failed', error: `the agent ended the turn with an unknown stop reason ${JSON.stringify(reason)}` };
  }
}

function crashText(step: string, exit: AgentExit | null, stderr: readonly string[], connectionError: string): string {
  const how =
    exit !== null
      ? `the agent exited during ${step} (${exitText(exit)})`
      : `the agent's connection closed during ${step} (${connectionError})`;
  return stderr.length > 0 ? `${how}; its last stderr lines:\n${stderr.join('\n')}` : `${how}; it wrote nothing on stderr`;
}

/** The hall's answers as ACP option kinds, in order of preference (`allow_always` is `session`). */
const OPTION_KINDS: Record<PermissionAnswer['answer'], readonly PermissionOptionKind[]> = {
  once: ['allow_once'],
  session: ['allow_always'],
  no: ['reject_once', 'reject_always'],
};

/**
 * The agent's permission question, asked on the run's permission channel
 * when the hall gave it one (docs/raider.md, "The permission channel"): the
 * hall's faces answer it. Without a channel, or when the agent offers no
 * option for the answer, it is refused at once with the reason in the run's
 * events: never left hanging, never allowed silently. A question still open
 * at a cancel is withdrawn: the agent gets ACP's `cancelled` outcome. The
 * question names the call as the turn knows it (`named`: what the request
 * gives over what the agent announced of the call), not by its id alone.
 */
async function answerPermission(
  params: RequestPermissionRequest,
  named: ToolSeen,
  events: EventSink,
  channel: Asker | undefined,
  signal: AbortSignal,
): Promise<RequestPermissionResponse> {
  const call = params.toolCall.toolCallId;
  const { title, kind } = named;
  const pick = (answer: PermissionAnswer['answer']) => params.options.find((o) => OPTION_KINDS[answer].includes(o.kind));
  // `session` is the agent's allow_always: the hall offers it for a question that names what it allows.
  const rule = pick('session') !== undefined ? `${kind}(${title})` : undefined;
  let answer: PermissionAnswer = { answer: 'no', reason: 'the hall gave this run no permission channel: nobody can answer' };
  if (channel !== undefined) {
    const input = named.rawInput;
    answer = await channel.ask(
      {
        tool: title,
        call,
        input: isRecord(input) ? input : {},
        title,
        kind,
        reason: 'the agent asks before this tool call',
        ...definedFields({ rule }),
      },
      signal,
    );
  }
  const asked = channel !== undefined;
  if (signal.aborted) {
    events.emit('permission', {
      call,
      name: title,
      decision: 'refused',
      asked,
      answer: 'no',
      reason: 'the run was cancelled: the question was withdrawn',
      withdrawn: true,
      ...definedFields({ rule }),
    });
    return { outcome: { outcome: 'cancelled' } };
  }
  let option = pick(answer.answer);
  if (option === undefined && answer.answer !== 'no') {
    const offered = params.options.map((o) => o.kind).join(', ');
    answer = {
      answer: 'no',
      reason: `the agent offers no option for the answer ${answer.answer} (it offers ${offered}); refused`,
    };
    option = pick('no');
  }
  events.emit('permission', {
    call,
    name: title,
    decision: answer.answer === 'no' ? 'refused' : 'allowed',
    asked,
    ...(asked ? { answer: answer.answer } : {}),
    reason: answer.reason,
    ...definedFields({ rule }),
  });
  return option !== undefined ? { outcome: { outcome: 'selected', optionId: option.optionId } } : { outcome: { outcome: 'cancelled' } };
}

interface RunDocument {
  version: 1;
  status: RunEnd['status'];
  response?: string;
  error?: string;
  signal?: 'INT' | 'TERM';
  metrics?: { tool_calls: number; time_ms: number };
  elapsed: number;
  session_error?: string;
  usage?: RunUsage;
  agent_session?: { id: string; agent: string };
}

/** What the bridge adds to its run document: why the binding's agent session was not continued, usage, the agent session. */
type BridgeFields = Pick<RunDocument, 'session_error' | 'usage' | 'agent_session'>;

function documentFields(args: AcpRaiderArgs, control: TurnControl, usage: RunUsage): BridgeFields {
  return definedFields({
    session_error: control.sessionError,
    usage: Object.keys(usage).length > 0 ? withRunCost(usage, control.continued === true ? args.agentSessionCost : undefined) : undefined,
    agent_session: control.agentSession !== undefined ? { id: control.agentSession, agent: args.command } : undefined,
  });
}

/**
 * The run's own share of its session's cost beside the session's cost so far (docs/agents.md, "Usage and
 * cost"): less the cost the hall recorded at the binding's run before, when this run went on in that session.
 */
function withRunCost(usage: RunUsage, earlier: Cost | undefined): RunUsage {
  return usage.cost !== undefined ? { ...usage, run_cost: runCostOf(usage.cost, earlier) } : usage;
}

function runDocument(end: RunEnd, elapsedMs: number, toolCalls: number, fields: BridgeFields): RunDocument {
  const doc: RunDocument = { version: 1, status: end.status, elapsed: Math.round(elapsedMs) / 1000, ...fields };
  if (end.status === 'completed') {
    doc.response = end.response;
    doc.metrics = { tool_calls: toolCalls, time_ms: Math.round(elapsedMs) };
  } else if (end.status === 'failed') doc.error = end.error;
  else if (end.status === 'interrupted') doc.signal = end.signal;
  return doc;
}

/**
 * The first SIGINT cancels the run; SIGTERM, or a second SIGINT, interrupts
 * it. Once the end is fixed (settle), further signals are ignored until the
 * agent is stopped (release): a signal's default action would end the bridge
 * with the agent still running. After that they have their default action again.
 */
function watchSignals(): { cancelled: Promise<void>; interrupted: Promise<'INT' | 'TERM'>; settle(): void; release(): void } {
  let cancel: () => void = () => {};
  let interrupt: (s: 'INT' | 'TERM') => void = () => {};
  const cancelled = new Promise<void>((r) => (cancel = r));
  const interrupted = new Promise<'INT' | 'TERM'>((r) => (interrupt = r));
  let ints = 0;
  const onInt = () => {
    ints++;
    if (ints === 1) cancel();
    else interrupt('INT');
  };
  const onTerm = () => interrupt('TERM');
  const ignore = () => {};
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return {
    cancelled,
    interrupted,
    settle() {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      process.on('SIGINT', ignore);
      process.on('SIGTERM', ignore);
    },
    release() {
      process.off('SIGINT', ignore);
      process.off('SIGTERM', ignore);
    },
  };
}
