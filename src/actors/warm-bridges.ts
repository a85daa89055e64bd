/**
 * Warm ACP bridges (docs/agents.md, "Warm bridges"): for each entry with
 * `acp.keep_warm: N`, N bridges started ahead by the hall's own spawner
 * (`raider acp-client --spare`), their modules loaded, each waiting on its
 * stdin, a socket whose other end only this hall holds. A run of the entry
 * takes a ready one (prepare-run.actor.ts, so its ledger record names it),
 * and the run's process actor hands the run over on that socket
 * (raider-process.actor.ts): from then on the bridge is the run's raider,
 * its exit the run's end (said by the bridge on that socket as it exits),
 * its stderr spool copied into the slot log as any raider's. A replacement
 * starts in the background, 2 s after the take or once the run's end is
 * told, whichever comes first. Nothing here is durable:
 * an unused bridge ends at its stdin's end, so it never outlives its hall.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { type Actor, createActor } from 'xstate';
import type { RaiderStarter, SpawnRequest, SpawnWatcher } from '../adapters/os/fork-server.js';
import { killGroup, signalGroup } from '../adapters/os/process-group.js';
import { processAlive } from '../adapters/os/process-alive.js';
import { RaiderStderr } from '../adapters/os/stderr-spool.js';
import { canonicalLine } from '../protocol/canonical-line.js';
import { readLines } from '../protocol/line-reader.js';
import {
  type BridgeHandOver,
  HANDOVER_VERSION,
  SPARE_READY_LINE,
  SPARE_RUN_ID_PREFIX,
  spareExitCode,
} from '../protocol/bridge-handover.js';
import { DEFAULT_WARM_IDLE_S } from '../domain/acp-agents.js';
import { definedFields } from '../domain/defined-fields.js';
import { inheritedEnv } from '../domain/raider-argv.js';
import { EARLY_END_MS, retryWaitMs } from '../domain/warm-retry.js';
import { type SpareEnd, type WarmSpareEffect, type WarmSpareEvent, warmSpareMachine } from '../machines/warm-spare.machine.js';
import type { HallConfig } from '../ports/hall-config.js';

/** What warm bridges need of the starter: the hall's own spawner, which can give a process a stdin socket. */
export type SpareSpawner = Pick<RaiderStarter, 'spawn'>;

/** An entry's warm bridges: how many, and how long one waits unused before the hall ends it. */
export interface WarmEntry {
  entry: string;
  keep: number;
  idleS: number;
}

/** A warm bridge a run took, as its spawn spec and ledger record name it. */
export interface TakenSpare {
  id: string;
  pid: number;
}

/** A warm bridge as `status` shows it. */
export interface SpareStatus {
  pid: number | null;
  ready: boolean;
  /** Seconds since it was started. */
  age: number;
}

/** An entry whose warm bridges fail to start, as `status` shows it. */
export interface SpareRetry {
  /** Starts that failed in a row (a bridge that ended by itself soon after it got ready is one), since the last one that got ready. */
  failed_starts: number;
  /** Seconds until the next start; absent while one is under way. */
  retry_in?: number;
}

/** The run's start as a bridge started for it would have had it, for the hand-over line. */
export interface HandOverRequest extends SpawnRequest {
  runId: string;
  /** The bridge's arguments after `acp-client`. */
  bridgeArgs: readonly string[];
}

/** Taking and handing over, as prepare-run and the process actor see them. */
export interface SparePool {
  take(entry: string): TakenSpare | undefined;
  /** Hands the run to the taken spare; null when it is no longer there (the run then starts a bridge of its own). */
  handOver(id: string, request: HandOverRequest, watcher: SpawnWatcher): (() => void) | null;
  /** A taken spare whose run will not start: it is ended. */
  release(id: string): void;
}

/** The longest line a spare says (`ready`, `exit CODE`), with room to spare. */
const MAX_LINE_BYTES = 256;
/** A spare's own limit past the hall's `warm_idle`: it ends by itself only when the hall is stuck. */
const BACKSTOP_S = 60;

/** A spare's process and what its machine (src/machines/warm-spare.machine.ts) decides for it. */
interface Spare {
  id: string;
  entry: WarmEntry;
  machine: Actor<typeof warmSpareMachine>;
  startedAt: number;
  /** The entry's failed starts in a row before it got ready: it carries them until it proves itself. */
  failedBefore: number;
  pid?: number;
  stdin?: Duplex;
  /** How its process exited, once it has. */
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  /** After a hand-over: where its exit goes (the run's watcher, once its stderr is copied). */
  exitTo?: (code: number | null, signal: NodeJS.Signals | null) => void;
}

/** An event for the spare's machine, unless it is done (a handed one gone, its replacement started). */
function tell(spare: Spare, event: WarmSpareEvent): void {
  if (spare.machine.getSnapshot().status === 'active') spare.machine.send(event);
}

/** Starting or ready: one the entry keeps (its machine says so). */
function isUnused(spare: Spare): boolean {
  return spare.machine.getSnapshot().hasTag('unused');
}

/** The entries that keep bridges warm, from the config. */
export function warmEntries(config: Pick<HallConfig, 'raiders'>): WarmEntry[] {
  const out: WarmEntry[] = [];
  for (const [entry, settings] of Object.entries(config.raiders)) {
    const keep = settings.acp?.keep_warm ?? 0;
    if (keep > 0) out.push({ entry, keep, idleS: settings.acp?.warm_idle ?? DEFAULT_WARM_IDLE_S });
  }
  return out;
}

export class WarmBridges implements SparePool {
  private readonly spares = new Map<string, Spare>();
  /** Handed spares by their run's id, until the run's end is told (its replacement starts then). */
  private readonly handedRuns = new Map<string, Spare>();
  private readonly failures = new Map<string, number>();
  /** The starts waited for after failed ones: each one's entry and when it starts. */
  private readonly retries = new Map<NodeJS.Timeout, { entry: string; at: number }>();
  private closing = false;

  constructor(
    private readonly deps: {
      spawner: SpareSpawner;
      /** The bridge's command (`raider acp-client` as resolveAcpBridgeCommand gives it). */
      bridge: { command: string; prefixArgs: readonly string[] };
      baseEnv: Readonly<Record<string, string | undefined>>;
      root: string;
      /** Where each entry's warm bridges write their own stderr (`ENTRY.log`): what they say while no run is theirs. */
      logDir: string;
      entries: readonly WarmEntry[];
      log: (line: string) => void;
    },
  ) {}

  start(): void {
    if (this.deps.entries.length === 0) return;
    fs.mkdirSync(this.deps.logDir, { recursive: true });
    for (const entry of this.deps.entries) this.fill(entry);
  }

  take(entry: string): TakenSpare | undefined {
    for (const spare of this.spares.values()) {
      if (spare.entry.entry !== entry || spare.pid === undefined || !spare.machine.getSnapshot().can({ type: 'take' })) continue;
      spare.machine.send({ type: 'take' });
      return { id: spare.id, pid: spare.pid };
    }
    return undefined;
  }

  handOver(id: string, request: HandOverRequest, watcher: SpawnWatcher): (() => void) | null {
    const spare = this.spares.get(id);
    if (spare?.pid === undefined || spare.stdin === undefined || !spare.machine.getSnapshot().can({ type: 'handed' })) return null;
    // Dead already, its exit reported on a later turn (which ends and replaces it): no bridge for the run.
    if (!processAlive(spare.pid)) return null;
    const pid = spare.pid;
    const stdin = spare.stdin;
    // The run's files as the spawner makes them for a raider it starts: its events file
    // empty, its stderr spool there (the bridge appends to both) and followed into the slot log.
    const stderr = new RaiderStderr(request);
    try {
      fs.closeSync(fs.openSync(request.stdoutPath, 'w'));
      fs.closeSync(fs.openSync(stderr.path, 'a'));
    } catch (err) {
      // The run cannot start (its starter says why); the spare is no one's.
      spare.machine.send({ type: 'release' });
      throw err;
    }
    spare.machine.send({ type: 'handed' });
    this.handedRuns.set(request.runId, spare);
    let listening = true;
    stderr.follow();
    spare.exitTo = (code, signal) =>
      stderr.finish(() => {
        if (listening) watcher.exited(code, signal);
      });
    const handOver: BridgeHandOver = {
      version: HANDOVER_VERSION,
      run_id: request.runId,
      argv: [...request.bridgeArgs],
      env: { ...request.env },
      cwd: request.cwd,
      events_path: request.stdoutPath,
      stderr_path: stderr.path,
    };
    // Not ended: the bridge says its exit code on the socket as it exits (exitSaid).
    stdin.write(`${canonicalLine(handOver)}\n`);
    // On a later turn, as the spawner reports a pid.
    setImmediate(() => {
      if (listening) watcher.spawned(pid);
    });
    return () => {
      listening = false;
    };
  }

  /**
   * A run's end has been told (its `raider.done` published). A handed bridge's replacement starts
   * then, not while the end is still being told: a bridge loading takes a core of a small machine.
   */
  runEnded(runId: string): void {
    const spare = this.handedRuns.get(runId);
    if (spare === undefined) return;
    this.handedRuns.delete(runId);
    tell(spare, { type: 'runEnded' });
  }

  release(id: string): void {
    this.spares.get(id)?.machine.send({ type: 'release' });
  }

  /**
   * `status`'s section: each entry's unused warm bridges (those starting or ready), and, only
   * while some entry's fail to start, how many failed in a row and when the next start is.
   */
  status(): { warm_bridges: Record<string, SpareStatus[]>; warm_bridge_retries?: Record<string, SpareRetry> } {
    const retrying = this.retrying();
    return {
      warm_bridges: this.unused(),
      ...definedFields({ warm_bridge_retries: Object.keys(retrying).length > 0 ? retrying : undefined }),
    };
  }

  /** Starts no more and ends the unused ones (their stdin's end, and SIGTERM); a handed one is its run's. */
  close(): void {
    this.closing = true;
    for (const timer of this.retries.keys()) clearTimeout(timer);
    this.retries.clear();
    for (const spare of [...this.spares.values(), ...this.handedRuns.values()]) tell(spare, { type: 'close' });
    this.handedRuns.clear();
  }

  private unused(): Record<string, SpareStatus[]> {
    const out: Record<string, SpareStatus[]> = {};
    const now = Date.now();
    for (const { entry } of this.deps.entries) out[entry] = [];
    for (const spare of this.spares.values()) {
      if (!isUnused(spare)) continue;
      // Every entry has its list from above.
      out[spare.entry.entry]?.push({
        pid: spare.pid ?? null,
        ready: spare.machine.getSnapshot().matches('ready'),
        age: Math.round((now - spare.startedAt) / 100) / 10,
      });
    }
    return out;
  }

  /** The entries whose last starts failed. */
  private retrying(): Record<string, SpareRetry> {
    const out: Record<string, SpareRetry> = {};
    const now = Date.now();
    for (const [entry, failed] of this.failures) {
      const next = Math.min(...[...this.retries.values()].filter((r) => r.entry === entry).map((r) => r.at));
      const retryIn = Number.isFinite(next) ? Math.max(0, Math.round((next - now) / 100) / 10) : undefined;
      out[entry] = { failed_starts: failed, ...definedFields({ retry_in: retryIn }) };
    }
    return out;
  }

  private fill(entry: WarmEntry): void {
    if (this.closing) return;
    let waiting = 0;
    for (const spare of this.spares.values()) if (spare.entry === entry && isUnused(spare)) waiting++;
    for (; waiting < entry.keep; waiting++) this.startOne(entry);
  }

  private startOne(entry: WarmEntry): void {
    const id = randomBytes(6).toString('hex');
    const { bridge, baseEnv, root } = this.deps;
    // Until its hand-over, whose environment replaces this one.
    const env = inheritedEnv(baseEnv);
    env.RAIDER_HALL_ROOT = root;
    // Not a run's id: a hall that finds it and no run that names it knows it is nobody's run.
    env.RAIDER_HALL_RUN_ID = `${SPARE_RUN_ID_PREFIX}${id}`;
    const machine = createActor(warmSpareMachine, { input: { idleMs: entry.idleS * 1000 } });
    const spare: Spare = { id, entry, machine, startedAt: Date.now(), failedBefore: 0 };
    machine.on('*', (effect) => this.carryOut(spare, effect));
    machine.start();
    this.spares.set(id, spare);
    this.deps.spawner.spawn(
      {
        command: bridge.command,
        args: [...bridge.prefixArgs, '--spare', '--warm-idle', String(entry.idleS + BACKSTOP_S)],
        env,
        cwd: root,
        stdoutPath: '/dev/null',
        stderrPath: this.logPath(entry),
        stdin: 'socket',
      },
      {
        spawned: (pid, stdin) => {
          spare.pid = pid;
          if (stdin === undefined) {
            this.deps.log(`raider ${entry.entry}: a warm bridge got no stdin socket; it is ended`);
            signalGroup(pid, 'SIGTERM');
            return;
          }
          spare.stdin = stdin;
          this.listen(spare, stdin);
          machine.send({ type: 'spawned' });
        },
        failed: (error) => {
          machine.stop();
          this.spares.delete(id);
          // A start the hall's stop turned away is no news.
          if (this.closing) return;
          this.deps.log(`raider ${entry.entry}: a warm bridge could not be started: ${error}`);
          this.retryLater(entry);
        },
        exited: (code, signal) => {
          this.spares.delete(id);
          spare.stdin?.destroy();
          spare.exit = { code, signal };
          machine.send({ type: 'exited' });
        },
        lost: () => {},
      },
    );
  }

  /** Its word that it is loaded, and once handed a run, its exit code as it exits; any other line is ignored. */
  private listen(spare: Spare, stdin: Duplex): void {
    stdin.on('error', () => {});
    // Its lines are short: a longer one is none of them, and is skipped.
    readLines(
      stdin,
      (line) => {
        if (`${line}\n` === SPARE_READY_LINE) spare.machine.send({ type: 'ready' });
        const code = spareExitCode(line);
        if (code !== null) spare.machine.send({ type: 'said', code });
      },
      { maxBytes: MAX_LINE_BYTES },
    );
  }

  /** What the spare's machine decided, done. */
  private carryOut(spare: Spare, effect: WarmSpareEffect): void {
    switch (effect.type) {
      case 'tellToEnd':
        // Its stdin's end tells it to go; SIGTERM to its group makes sure (as far as they are known yet).
        spare.stdin?.end();
        if (spare.pid !== undefined) signalGroup(spare.pid, 'SIGTERM');
        return;
      case 'readied':
        spare.failedBefore = this.failures.get(spare.entry.entry) ?? 0;
        this.failures.delete(spare.entry.entry);
        return;
      case 'exitSaid':
        // Its run's events are written and its agent gone: the run ends now, not once the kernel has
        // taken the process apart. What is left of its group is killed first, as at any raider's exit.
        if (spare.pid !== undefined) killGroup(spare.pid);
        spare.stdin?.destroy();
        spare.exitTo?.(effect.code, null);
        return;
      case 'runExit':
        spare.exitTo?.(spare.exit?.code ?? null, spare.exit?.signal ?? null);
        return;
      case 'fill':
        this.fill(spare.entry);
        return;
      case 'ended':
        this.replace(spare, effect.how);
    }
  }

  /** An unhanded spare that ended: replaced at once, or after a wait when it failed to start. */
  private replace(spare: Spare, how: SpareEnd): void {
    const { entry } = spare;
    if (how === 'byHall') {
      // Replaced, unless the hall stops (fill starts nothing then).
      this.fill(entry);
      return;
    }
    const early = how === 'earlyEnd' ? ` within ${EARLY_END_MS / 1000} s of getting ready, a failed start` : '';
    const { code, signal } = spare.exit ?? { code: null, signal: null };
    this.deps.log(
      `raider ${entry.entry}: a warm bridge (pid ${spare.pid ?? '?'}) ended by itself (${signal ?? `exit code ${code ?? 0}`})${early}; see ${this.logPath(entry)}`,
    );
    if (how === 'replace') this.fill(entry);
    else this.retryLater(entry, spare.failedBefore);
  }

  /** Where an entry's bridges write their own stderr. */
  private logPath(entry: WarmEntry): string {
    return path.join(this.deps.logDir, `${entry.entry}.log`);
  }

  /**
   * A spare of this entry failed to start (ended before it was ready, or soon after; `failedBefore` the
   * failed starts in a row before one that got ready): the next start waits longer each time.
   */
  private retryLater(entry: WarmEntry, failedBefore = 0): void {
    if (this.closing) return;
    const n = Math.max(this.failures.get(entry.entry) ?? 0, failedBefore);
    this.failures.set(entry.entry, n + 1);
    const wait = retryWaitMs(n);
    const timer = setTimeout(() => {
      this.retries.delete(timer);
      this.fill(entry);
    }, wait);
    timer.unref();
    this.retries.set(timer, { entry: entry.entry, at: Date.now() + wait });
  }
}
