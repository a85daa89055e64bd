/**
 * Preparing a run before its process starts: refuse the raider entry if the
 * hall must, make the run's git worktree when its raider has one
 * (docs/worktrees.md), rotate the slot log, create the events file, write
 * the start line, get the binding's session and build the raider's command. Recording
 * the run in the ledger is the hall's (run.machine.ts: `run.prepared`), through
 * the same store channel as every other durable write.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fromPromise } from 'xstate';
import { eventsPath, slotLogPath, worktreeRecordsDir } from '../ports/hall-paths.js';
import { reachableSocketPath } from '../os/socket-path.js';
import { appendToLogSync, rotateSlotLog } from '../adapters/storage/slot-logs.js';
import { ignoredKeysLine, refusedLine, resultLine, startLine } from '../domain/log-lines.js';
import { refusalOf } from '../domain/refusal.js';
import { acpBridgeArgv, raiderArgv, raiderEnv } from '../domain/raider-argv.js';
import { type AcpAgentCommand, acpAgentCommand } from '../domain/acp-agents.js';
import { expandVariables, missingVariablesText } from '../domain/env-variables.js';
import type { PrepareOutput, RunInput } from '../machines/run.machine.js';
import { createSession, journalPath } from '../protocol/session-journal.js';
import { AGENT_SESSIONS_NS, agentSessionOf } from '../protocol/agent-session.js';
import type { RunEnvironment } from './run-environment.js';
import { ownEntry } from '../domain/own-entry.js';
import type { Refusal } from '../domain/refusal.js';
import type { RunWorktree, WorktreeSettings } from '../domain/worktree.js';
import { makeRunWorktree, settleRunWorktree, worktreeHead } from '../adapters/os/git-worktree.js';
import { errorMessage } from '../domain/error-message.js';
import { definedFields } from '../domain/defined-fields.js';

export function prepareRunLogic(env: RunEnvironment) {
  // The ignored-keys note goes into the slot log once per raider name and hall process.
  const noted = new Set<string>();
  // A plain copy: reading process.env goes through a native getter for every variable, on every run.
  const baseEnv = { ...env.baseEnv };

  return fromPromise<PrepareOutput, RunInput>(async ({ input }) => {
    const { paths, config } = env;
    const entry = ownEntry(config.raiders, input.baseName) ?? { packs: [], ignoredKeys: [] };
    const logPath = slotLogPath(paths, input.slot);
    // Small local file operations are done synchronously: each asynchronous
    // one costs a thread-pool round trip, and they add up on every run.
    let refusal = refusalOf(input.entry.name, entry, env.providerStore);
    let worktree: RunWorktree | undefined;
    // True when the worktree was made for this run (not a binding's it goes on in).
    let fresh = false;
    if (!refusal && entry.worktree !== undefined) {
      const made = await worktreeOf(input, env, entry.worktree);
      if (made.ok) ({ worktree, fresh } = made);
      else refusal = made.refusal;
    }
    if (refusal) {
      appendToLogSync(logPath, refusedLine(input.entry.name, refusal.error));
      return { kind: 'refused', reason: refusal.reason, error: refusal.error, at: Date.now() };
    }

    if (!fresh) return ready();
    try {
      return await ready();
    } catch (err) {
      // The run ends before its raider starts: a worktree made for it is settled as any ended run's
      // (nothing ran in it, so it goes); should git fail too, the run's own error is the one to tell.
      if (worktree !== undefined) {
        if (worktree.binding !== undefined) env.bindingWorktrees.unset(worktree.binding);
        await settleRunWorktree(endedWorktree(worktree)).catch(() => undefined);
      }
      throw err;
    }

    async function ready(): Promise<PrepareOutput> {
      if (input.rotateLog) rotateSlotLog(logPath, config.logs.max_log_size);
      const events = eventsPath(paths, input.runId);
      env.eventsFiles.create(events);
      if (!appendToLogSync(logPath, startLine(input.runId))) throw new Error(`cannot write ${logPath}`);
      try {
        if (!noted.has(input.baseName)) {
          noted.add(input.baseName);
          if (entry.ignoredKeys.length > 0) appendToLogSync(logPath, ignoredKeysLine(input.baseName, entry.ignoredKeys));
        }

        let session: string | undefined;
        let sessionCreated = false;
        let sessionError: string | undefined;
        if (input.binding !== undefined) {
          try {
            if (input.session !== undefined && fs.existsSync(journalPath(paths.root, input.session))) {
              session = input.session;
            } else {
              session = createSession(paths.root, { raiderVersion: env.raiderVersion }).id;
              sessionCreated = true;
            }
          } catch (err) {
            sessionError = errorMessage(err).trim();
          }
        }

        if (worktree?.binding !== undefined) {
          // The binding goes on in its worktree with this session; a run that lost its session runs as a plain one.
          if (session !== undefined) env.bindingWorktrees.set(worktree.binding, { session, worktree: definedWorktree(worktree) });
          else worktree = endedWorktree(worktree);
        }
        // A worktree run works in its worktree: the raider's root and cwd, never the hall root.
        const runRoot = worktree?.cwd ?? paths.root;
        const cwd = runDirectory(runRoot, input.entry.cwd);
        // An entry with an ACP agent runs the ACP bridge, with the agent's variables over the hall's;
        // a variable that is not set fails the run here, before its permission channel is opened.
        const agent = acpAgentCommand(entry);
        const program = agent !== undefined ? env.acpBridge : env.raider;
        const runBaseEnv = agent !== undefined ? { ...baseEnv, ...agentVariables(input.baseName, agent.env, baseEnv) } : baseEnv;
        // A run of a plain slot has no binding (and no session) but may still ask (dashboard.questions).
        const channel =
          session !== undefined || input.binding === undefined ? await env.permissionChannels.open(input.runId, input.binding) : null;
        const permissionMode = input.entry.permission_mode ?? entry.permission_mode;
        // A bound run of an agent goes on with the agent session the hall recorded for its hall session.
        const recorded =
          agent !== undefined && session !== undefined ? agentSessionOf(env.kept(AGENT_SESSIONS_NS, session), agent.command) : undefined;
        const runArgs = {
          root: runRoot,
          ...definedFields({ session, permissionMode }),
          ...(channel !== null ? { permissionChannel: channel } : {}),
          mission: input.entry.mission,
        };
        const bridgeArgs =
          agent !== undefined
            ? acpBridgeArgv({
                agent,
                ...definedFields({
                  model: entry.model,
                  hallMcp: hallMcpServer(env, agent),
                  agentSession: recorded?.session,
                  agentSessionCost: recorded?.cost,
                }),
                ...runArgs,
              })
            : undefined;
        const args = bridgeArgs ?? raiderArgv({ entry, libTarget: env.libTarget, ...runArgs });
        // Taken last, when nothing else here can fail: a warm bridge, loaded ahead, that the run is handed to.
        const spare = bridgeArgs !== undefined ? env.warmBridges?.take(input.baseName) : undefined;
        return {
          kind: 'ready',
          eventsPath: events,
          logPath,
          ...(session !== undefined ? { session, sessionCreated } : {}),
          ...definedFields({ sessionError }),
          startedAt: Date.now(),
          spawn: {
            command: program.command,
            args: [...program.prefixArgs, ...args],
            env: raiderEnv(runBaseEnv, {
              root: paths.root,
              slot: input.slot,
              entry: input.baseName,
              configPath: paths.config,
              runId: input.runId,
              // The raider connects to the path as given: the short one when the root is long.
              socketPath: reachableSocketPath(paths.socket),
              libTarget: env.libTarget,
              longhouse: config.longhouse,
              ...definedFields({ telegram: input.entry.telegram }),
            }),
            cwd,
            ...(spare !== undefined && bridgeArgs !== undefined ? { spare: { ...spare, args: bridgeArgs } } : {}),
          },
          ...definedFields({ worktree }),
        };
      } catch (err) {
        // The start line is written: close the run's section of the log.
        appendToLogSync(logPath, resultLine(input.runId, 'failed', `could not be started: ${errorMessage(err)}`));
        throw err;
      }
    }
  });
}

/**
 * The run's worktree, or the refusal of a run that cannot have one (nothing
 * then runs in the root instead). A bound run goes on in its binding's
 * worktree while the binding keeps its session; otherwise it gets a new one,
 * and a worktree the binding left behind (a `session reset`) is settled first.
 */
async function worktreeOf(
  input: RunInput,
  env: RunEnvironment,
  settings: WorktreeSettings,
): Promise<{ ok: true; worktree: RunWorktree; fresh: boolean } | { ok: false; refusal: Refusal }> {
  const { paths } = env;
  const binding = input.binding;
  if (binding !== undefined) {
    const current = env.bindingWorktrees.get(binding);
    if (
      current !== undefined &&
      current.session === input.session &&
      fs.existsSync(journalPath(paths.root, current.session)) &&
      fs.existsSync(current.worktree.path)
    ) {
      return { ok: true, worktree: { ...current.worktree, start: await worktreeHead(current.worktree) }, fresh: false };
    }
    if (current !== undefined) {
      env.bindingWorktrees.unset(binding);
      await settleRunWorktree(endedWorktree(current.worktree)).catch((err: unknown) =>
        env.warn(`the worktree ${current.worktree.path} of binding ${binding} was left as it is: ${errorMessage(err)}`),
      );
    }
  }
  const made = await makeRunWorktree(
    paths.root,
    input.runId,
    settings,
    { records: worktreeRecordsDir(paths), ...(binding !== undefined ? { binding, sessions: paths.sessionsDir } : {}) },
    env.config.worktree.max_disk,
  );
  if (made.ok) return { ...made, fresh: true };
  return { ok: false, refusal: { reason: made.reason, error: `raider ${input.entry.name}: ${made.error}` } };
}

/** A binding's worktree as one that ends with its run: settled (committed, removed) rather than gone on in. */
function endedWorktree(wt: RunWorktree): RunWorktree {
  const { binding: _binding, start: _start, ...ended } = wt;
  return ended;
}

/** A binding's worktree as the binding keeps it: without the start of one run. */
function definedWorktree(wt: RunWorktree): RunWorktree {
  const { start: _start, ...kept } = wt;
  return kept;
}

/** An agent's `acp.env`, each `${VAR}` expanded from the hall's environment; a variable that is not set fails the run. */
function agentVariables(
  name: string,
  variables: Readonly<Record<string, string>>,
  hallEnv: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(variables)) {
    const expanded = expandVariables(value, hallEnv);
    if (!expanded.ok) throw new Error(`raiders.${name}.acp.env.${key}: ${missingVariablesText(expanded.missing)}`);
    out[key] = expanded.text;
  }
  return out;
}

/** The hall's MCP server for an agent's sessions: with `mcp.enable`, unless the entry says `acp.hall_tools: false`. */
function hallMcpServer(env: RunEnvironment, agent: AcpAgentCommand): { command: string; args: string[] } | undefined {
  if (!env.config.mcp.enable || agent.hall_tools === false) return undefined;
  return { command: env.hallMcp.command, args: [...env.hallMcp.prefixArgs, env.paths.root] };
}

/** A run works in the hall root, or in a directory inside it that its mission asked for. */
function runDirectory(root: string, cwd: string | undefined): string {
  if (cwd === undefined) return root;
  const resolved = path.resolve(root, cwd);
  const rel = path.relative(root, resolved);
  return rel.startsWith('..') || path.isAbsolute(rel) ? root : resolved;
}
