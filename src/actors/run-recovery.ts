/**
 * What a starting hall does with the runs a previous hall left in its ledger:
 * a raider process that still lives is adopted and watched to its end; a run
 * whose process is gone is reported from its events file, or as failed when
 * it left no result (its git worktree, if it had one, settled).
 */
import fs from 'node:fs';
import { readDocumentOrNull } from '../adapters/storage/events-file.js';
import type { LedgerRun } from '../ports/durable-state.js';
import { appendToLog } from '../adapters/storage/slot-logs.js';
import { raiderLinePrefix, resultLine, resultText } from '../domain/log-lines.js';
import { StderrSpool, stderrSpoolPath } from '../adapters/os/stderr-spool.js';
import { adoptedOutcome } from '../domain/outcome.js';
import type { EndedRun } from '../machines/hall-payloads.js';
import type { AdoptedRun } from '../machines/slot.machine.js';
import { processAlive } from '../adapters/os/process-alive.js';
import { definedFields } from '../domain/defined-fields.js';
import { withOpenedAgentSession, withWorktree } from './reap-run.actor.js';
import { SPARE_RUN_ID_PREFIX } from '../protocol/bridge-handover.js';

const RUN_ID_VAR = 'RAIDER_HALL_RUN_ID=';
const ROOT_VAR = 'RAIDER_HALL_ROOT=';

/**
 * The pid of the live raider of `run`, found by its environment: the one
 * started for it, or the warm bridge it was handed to (docs/agents.md, "Warm bridges").
 */
function findRaiderPid(run: Pick<LedgerRun, 'id' | 'pid' | 'spare'>): number | undefined {
  const marks = raiderIdsOf(run).map((id) => `${RUN_ID_VAR}${id}`);
  const marked = (pid: number): boolean => {
    if (!processAlive(pid)) return false;
    const vars = environOf(pid);
    return vars !== null && marks.some((mark) => vars.includes(mark));
  };
  if (run.pid !== undefined && marked(run.pid)) return run.pid;
  // The record's pid is the warm bridge's until the run's own pid is recorded: a run whose bridge was
  // gone at the hand-over started one of its own, which a crash before that record finds only by its id.
  if (run.pid !== undefined && run.spare === undefined) return undefined;
  return listPids().find(marked);
}

/** The RAIDER_HALL_RUN_ID a run's raider may have: the run's id, or its warm bridge's. */
function raiderIdsOf(run: Pick<LedgerRun, 'id' | 'spare'>): string[] {
  return run.spare !== undefined ? [run.id, `${SPARE_RUN_ID_PREFIX}${run.spare}`] : [run.id];
}

/** The RAIDER_HALL_RUN_ID of each raider the ledger's runs account for, for orphanRaiders. */
export function knownRaiderIds(runs: Iterable<Pick<LedgerRun, 'id' | 'spare'>>): Set<string> {
  const known = new Set<string>();
  for (const run of runs) for (const id of raiderIdsOf(run)) known.add(id);
  return known;
}

/**
 * The live raiders started by a hall in `root` whose runs are not in `known`:
 * on a shared cluster, those a previous hall process left running and the
 * cluster took over while it was gone (they were reported failed there).
 */
export function orphanRaiders(root: string, known: ReadonlySet<string>): Array<{ pid: number; runId: string }> {
  const found: Array<{ pid: number; runId: string }> = [];
  for (const pid of listPids()) {
    if (pid === process.pid) continue;
    const vars = environOf(pid);
    if (!vars?.includes(`${ROOT_VAR}${root}`)) continue;
    const runId = vars.find((v) => v.startsWith(RUN_ID_VAR))?.slice(RUN_ID_VAR.length);
    if (runId !== undefined && !known.has(runId)) found.push({ pid, runId });
  }
  return found;
}

/** A process's environment as `NAME=value` strings; null when it is gone or not ours to read. */
function environOf(pid: number): string[] | null {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
  } catch {
    return null;
  }
}

function listPids(): number[] {
  try {
    return fs
      .readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

export async function recoverRuns(runs: Iterable<LedgerRun>): Promise<{ adopted: AdoptedRun[]; ended: EndedRun[] }> {
  const adopted: AdoptedRun[] = [];
  const ended: EndedRun[] = [];
  for (const run of runs) {
    const pid = findRaiderPid(run);
    const bound = run.binding !== undefined && run.session !== undefined ? { binding: run.binding, session: run.session } : {};
    if (pid !== undefined) {
      adopted.push({
        runId: run.id,
        entry: run.entry,
        ...bound,
        pid,
        startedAt: run.started_at,
        eventsPath: run.events_path,
        logPath: run.log_path,
        ...definedFields({ worktree: run.worktree }),
      });
      continue;
    }
    // What it wrote on stderr since the last hall copied its spool goes in before its result line.
    new StderrSpool(stderrSpoolPath(run.events_path), run.log_path, raiderLinePrefix(run.id)).finishNow();
    const document = readDocumentOrNull(run.events_path);
    const reported = withOpenedAgentSession(adoptedOutcome({ runId: run.id, document, ...bound }), run.events_path, {
      document,
      session: run.binding !== undefined ? run.session : undefined,
    });
    // A worktree run that ended while no hall ran: its worktree is settled now, as at any run's end.
    const outcome = run.worktree === undefined ? reported : await withWorktree(reported, run.worktree);
    await appendToLog(run.log_path, resultLine(run.id, outcome.status, resultText(outcome))).catch(() => {});
    ended.push({ runId: run.id, slot: run.slot, pid: run.pid ?? 0, entry: run.entry, ...bound, outcome });
  }
  return { adopted, ended };
}
