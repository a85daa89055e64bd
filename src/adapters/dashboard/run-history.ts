/**
 * Runs as the dashboard lists them: the live ones from the hall's queries,
 * the past ones from the events files under `.raider-hall/logs/`, so the
 * history survives a restart (as far as `logs.keep_events` keeps files).
 */
import type { RunUsage } from '../../domain/run-usage.js';
import fs from 'node:fs';
import { z } from 'zod';
import { raiderLineText, resultOf } from '../../domain/log-lines.js';
import { runOutcome, type RunDocument } from '../../domain/outcome.js';
import { compareRunIds, isSafeRunId, parseRunId } from '../../domain/run-id.js';
import type { HallQueries } from '../../ports/hall-queries.js';
import { readDocumentOrNull } from '../storage/events-file.js';
import { eventsPath, slotLogPath, type HallPaths } from '../../ports/hall-paths.js';
import { runLog } from '../storage/slot-logs.js';
import { readJsonLinesTail } from './json-lines-tail.js';
import { definedFields } from '../../domain/defined-fields.js';
import { type BranchDiff, runBranchDiff } from '../os/worktree-admin.js';

const SUFFIX = '.events.jsonl';
/** A run's page shows at most this much of its events file: the newest part. */
const DETAIL_TAIL_BYTES = 2 * 1024 * 1024;
/** Missions the dashboard remembers for runs that ended (events files do not hold them). */
const MISSIONS_KEPT = 5000;
/** A run's page shows at most this many of the run's slot-log lines: the newest. */
const LOG_LINES_SHOWN = 500;
/** How much of an events file's head is read for its `run.started` time. */
const HEAD_BYTES = 4096;

export interface RunRow {
  id: string;
  slot: string;
  status: string;
  /** Epoch milliseconds, to the millisecond when the hall or the raider noted it (else to the second of the run id). */
  started_at: number;
  /** Seconds; null while it runs. */
  duration: number | null;
  /** Epoch milliseconds, when it ended (its `raider.done`, else the last write of its events file); absent while it runs. */
  ended_at?: number;
  mission?: string;
  pid?: number;
  error?: string;
  /** In a shared cluster: the hall that runs (or ran) it. */
  hall?: string;
  /** Tokens, context and cost its raider reported (an ACP agent's), for the charts. */
  usage?: RunUsage;
}

/** In a shared cluster: this hall's id, and the runs of the other halls. */
export interface ClusterRuns {
  hall: string;
  remote: RunRow[];
}

export const runFilterSchema = z.object({
  raider: z.string().optional(),
  status: z.string().optional(),
  text: z.string().optional(),
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});
export type RunFilter = z.infer<typeof runFilterSchema>;

const liveRunSchema = z.object({ id: z.string(), slot: z.string(), mission: z.string(), pid: z.number() });
const liveAgeSchema = z.object({ id: z.string(), age: z.number() });
const startedEventSchema = z.object({ type: z.literal('run.started'), time: z.number() });
/** What `raider.done` tells of a worktree run (docs/worktrees.md): the fields the run page shows. */
const doneWorktreeSchema = z.object({
  worktree: z.string(),
  branch: z.string(),
  base: z.string(),
  commits: z.number(),
  changed: z.array(z.string()),
  wip_commit: z.boolean().optional(),
  worktree_kept: z.boolean().optional(),
});
type DoneWorktree = z.infer<typeof doneWorktreeSchema>;

/** A worktree run's branch on its page: what its `raider.done` said (when this hall saw it), and what git says now. */
export interface RunBranchView extends Partial<DoneWorktree> {
  /** The branch against its base now; null when the branch is gone (the run changed nothing, or it was removed). */
  diff: BranchDiff | null;
}

interface PastRun {
  mtimeMs: number;
  size: number;
  row: RunRow;
}

/** When a run started and ended as the bus told this hall process (epoch ms). */
interface NotedTimes {
  spawned?: number;
  done?: number;
}

export class RunHistory {
  private readonly missions = new Map<string, string>();
  private readonly times = new Map<string, NotedTimes>();
  private readonly worktrees = new Map<string, DoneWorktree>();
  /** Past runs read before, by id; an events file that did not change is not read again. */
  private readonly past = new Map<string, PastRun>();
  /**
   * The past runs as last listed, newest first, and the runs that were live
   * then (left out of it); null once a run started or ended (`changed`).
   * Between those a request lists no directory and stats no file, unless a
   * run live then is no longer: a run leaves the live ones just after its
   * `raider.done`, and a list made in between would lack it for good.
   */
  private pastList: { rows: RunRow[]; live: ReadonlySet<string> } | null = null;

  constructor(
    private readonly paths: HallPaths,
    private readonly queries: Pick<HallQueries, 'ps' | 'status'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** A run started or ended: the past runs are listed anew at the next request. */
  changed(): void {
    this.pastList = null;
  }

  /** Remembers the missions of the runs going now, for when they have ended. */
  noteLiveMissions(): void {
    this.liveRuns();
  }

  /**
   * Notes the bus's time (epoch seconds) of a run's `raider.spawned` or
   * `raider.done`: the run's start and end to the millisecond, where its id
   * holds only the second and a raider that failed early wrote no times.
   */
  noteTime(id: string, kind: keyof NotedTimes, epochSeconds: number): void {
    const noted = this.times.get(id) ?? {};
    noted[kind] = Math.round(epochSeconds * 1000);
    this.times.set(id, noted);
    if (this.times.size > MISSIONS_KEPT) this.times.delete(this.times.keys().next().value ?? '');
    // A row read before its end was noted is read again.
    if (kind === 'done') this.past.delete(id);
  }

  /** Notes what a worktree run's `raider.done` said of its branch; other runs' are left alone. */
  noteWorktree(id: string, done: unknown): void {
    const fields = doneWorktreeSchema.safeParse(done);
    if (!fields.success) return;
    this.worktrees.set(id, fields.data);
    if (this.worktrees.size > MISSIONS_KEPT) this.worktrees.delete(this.worktrees.keys().next().value ?? '');
  }

  /** The missions of the runs `ids` that go now or ended while this hall process ran, by run id; the others are left out. */
  missionsOf(ids: readonly string[]): Record<string, string> {
    this.liveRuns();
    const missions: Record<string, string> = {};
    for (const id of ids) {
      const mission = this.missions.get(id);
      if (mission !== undefined) missions[id] = mission;
    }
    return missions;
  }

  /** The `ps` view of the live runs; their missions are remembered on the way. */
  private liveRuns(): Array<z.infer<typeof liveRunSchema>> {
    const runs = z.array(liveRunSchema).catch([]).parse(answerField(this.queries.ps(), 'raiders'));
    for (const run of runs) {
      if (this.missions.has(run.id)) continue;
      this.missions.set(run.id, run.mission);
      if (this.missions.size > MISSIONS_KEPT) this.missions.delete(this.missions.keys().next().value ?? '');
    }
    return runs;
  }

  live(): RunRow[] {
    const ps = this.liveRuns();
    const ages = new Map(
      z
        .array(liveAgeSchema)
        .catch([])
        .parse(answerField(this.queries.status(), 'runs'))
        .map((r) => [r.id, r.age]),
    );
    const now = this.now();
    return ps.map((r) => ({
      id: r.id,
      slot: r.slot,
      status: 'running',
      started_at: this.times.get(r.id)?.spawned ?? Math.round(now - (ages.get(r.id) ?? 0) * 1000),
      duration: null,
      mission: r.mission,
      pid: r.pid,
    }));
  }

  /** The page of runs `filter` asks for; with `cluster`, each row names its hall and the other halls' runs are in. */
  list(filter: RunFilter, cluster?: ClusterRuns): { runs: RunRow[]; total: number; offset: number; limit: number } {
    const own = (row: RunRow): RunRow => (cluster ? { ...row, hall: cluster.hall } : row);
    const live = [...this.live().map(own), ...(cluster?.remote ?? [])];
    const liveIds = new Set(live.map((r) => r.id));
    const made = this.pastList;
    const current = made !== null && [...made.live].every((id) => liveIds.has(id)) ? made : null;
    const pastList = current ?? {
      rows: this.pastRuns(liveIds).sort((a, b) => b.started_at - a.started_at || compareRunIds(b.id, a.id)),
      live: liveIds,
    };
    this.pastList = pastList;
    // A run that started since the list was made is live, not past (its raider.spawned cleared the list; this is for safety).
    const past = pastList.rows.filter((r) => !liveIds.has(r.id)).map(own);
    const all = [...live.sort((a, b) => b.started_at - a.started_at), ...past].filter((r) => matches(r, filter));
    return { runs: all.slice(filter.offset, filter.offset + filter.limit), total: all.length, offset: filter.offset, limit: filter.limit };
  }

  /**
   * A run's page: its row, its events (the newest part of the file), its end,
   * and its lines of its slot log (the raider's stderr, e.g. why it failed
   * before writing any event, and the hall's lines about it); null when unknown.
   */
  async detail(id: string): Promise<{
    run: RunRow;
    events: unknown[];
    end: RunDocument | null;
    truncated: boolean;
    log: string[];
    branch?: RunBranchView;
  } | null> {
    if (!isSafeRunId(id)) return null;
    const liveRow = this.live().find((r) => r.id === id);
    const file = eventsPath(this.paths, id);
    const row = liveRow ?? this.pastRow(id, file);
    if (!row) return null;
    const { events, truncated } = readEventsTail(file);
    const log = await runLog(this.paths, id, liveRow?.slot);
    const lines = 'log' in log ? log.log.split('\n').filter((line) => line !== '') : [];
    const branch = liveRow ? undefined : await this.branchOf(id);
    return {
      run: row,
      events,
      end: liveRow ? null : readDocumentOrNull(file),
      truncated,
      log: lines.slice(-LOG_LINES_SHOWN).map((line) => raiderLineText(line, id) ?? line),
      ...definedFields({ branch }),
    };
  }

  /** An ended run's branch, when it is a worktree run's: git runs as child processes, off the event loop. */
  private async branchOf(id: string): Promise<RunBranchView | undefined> {
    const noted = this.worktrees.get(id);
    const diff = await runBranchDiff(this.paths.root, id, noted?.branch);
    if (noted === undefined && diff === null) return undefined;
    return { ...noted, diff };
  }

  private pastRuns(liveIds: ReadonlySet<string>): RunRow[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.paths.logsDir);
    } catch {
      return [];
    }
    const rows: RunRow[] = [];
    const seen = new Set<string>();
    for (const name of names) {
      if (!name.endsWith(SUFFIX)) continue;
      const id = name.slice(0, -SUFFIX.length);
      if (liveIds.has(id) || !isSafeRunId(id)) continue;
      seen.add(id);
      const row = this.pastRow(id, eventsPath(this.paths, id));
      if (row) rows.push(row);
    }
    for (const id of this.past.keys()) if (!seen.has(id)) this.past.delete(id);
    return rows;
  }

  private pastRow(id: string, file: string): RunRow | null {
    const parsed = parseRunId(id);
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!parsed || !stat) return null;
    const cached = this.past.get(id);
    if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached.row;
    const document = readDocumentOrNull(file);
    const end: { status: string; error?: string; usage?: RunUsage } = document
      ? runOutcome({ runId: id, document, exit: { code: 0, signal: null, signalNumber: null } })
      : loggedEnd(this.paths, id, parsed.slot);
    const noted = this.times.get(id);
    const startedAt = noted?.spawned ?? startedTime(file) ?? parsed.cursor.sec * 1000;
    const elapsed = document?.elapsed;
    const duration =
      typeof elapsed === 'number'
        ? elapsed
        : Math.max(0, ((noted?.spawned !== undefined ? noted.done : undefined) ?? stat.mtimeMs) - startedAt) / 1000;
    const mission = this.missions.get(id);
    const row: RunRow = {
      id,
      slot: parsed.slot,
      status: end.status,
      started_at: startedAt,
      duration,
      // The raider.done this hall saw, else the events file's last write (its run.finished, when it has one).
      ended_at: Math.max(startedAt, noted?.done ?? Math.round(stat.mtimeMs)),
      ...definedFields({ mission, error: end.error, usage: end.usage }),
    };
    this.past.set(id, { mtimeMs: stat.mtimeMs, size: stat.size, row });
    return row;
  }
}

/**
 * How a run that left no result ended, from the hall's result line in its
 * slot log (`[hall] raider ID failed: ... (exit code 3)`): the events file
 * does not hold the exit code, the line written at its reaping does.
 */
function loggedEnd(paths: HallPaths, id: string, slot: string): { status: string; error?: string } {
  let log: string;
  try {
    log = fs.readFileSync(slotLogPath(paths, slot), 'utf8');
  } catch {
    log = '';
  }
  const result = resultOf(log, id);
  return result ? { status: result.status, error: result.text } : { status: 'failed', error: `raider ${id} ended without a result` };
}

/** The time of the `run.started` the raider wrote first in its events file (epoch ms), or null. */
function startedTime(file: string): number | null {
  let head = '';
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(HEAD_BYTES);
      head = buffer.subarray(0, fs.readSync(fd, buffer, 0, HEAD_BYTES, 0)).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
  const newline = head.indexOf('\n');
  const first = newline < 0 ? head : head.slice(0, newline);
  try {
    const event: unknown = JSON.parse(first);
    const parsed = startedEventSchema.safeParse(event);
    return parsed.success ? Math.round(parsed.data.time * 1000) : null;
  } catch {
    return null;
  }
}

function matches(row: RunRow, filter: RunFilter): boolean {
  if (filter.raider && row.slot !== filter.raider && row.slot.replace(/^\d+/, '') !== filter.raider) return false;
  if (filter.status && row.status !== filter.status) return false;
  if (filter.text) {
    const needle = filter.text.toLowerCase();
    if (![row.id, row.slot, row.mission ?? '', row.error ?? '', row.hall ?? ''].some((field) => field.toLowerCase().includes(needle)))
      return false;
  }
  return true;
}

/** The JSON objects among the last lines of an events file (none when it cannot be read). */
function readEventsTail(file: string): { events: unknown[]; truncated: boolean } {
  const tail = readJsonLinesTail(file, DETAIL_TAIL_BYTES);
  return tail === null ? { events: [], truncated: false } : { events: tail.lines, truncated: tail.truncated };
}

/** A field of a reply that may be an error (then: undefined, which the schemas read as nothing). */
function answerField(reply: object, field: string): unknown {
  return Object.getOwnPropertyDescriptor(reply, field)?.value;
}
