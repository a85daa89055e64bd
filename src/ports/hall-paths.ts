/** Where the hall keeps its files under its root. */
import path from 'node:path';

export interface HallPaths {
  root: string;
  config: string;
  socket: string;
  pidFile: string;
  stateDir: string;
  logsDir: string;
  /** The hall daemon's own log (daemon mode: its stdout and stderr). */
  hallLog: string;
  sessionsDir: string;
}

export function hallPaths(root: string): HallPaths {
  const abs = path.resolve(root);
  return {
    root: abs,
    config: path.join(abs, '.raider-hall.yml'),
    socket: path.join(abs, '.raider-hall.socket'),
    pidFile: path.join(abs, '.raider-hall.pid'),
    stateDir: path.join(abs, '.raider-hall', 'state'),
    logsDir: path.join(abs, '.raider-hall', 'logs'),
    hallLog: path.join(abs, '.raider-hall', 'hall.log'),
    sessionsDir: path.join(abs, '.raider', 'sessions'),
  };
}

export function slotLogPath(paths: HallPaths, slot: string): string {
  return path.join(paths.logsDir, `${slot}.log`);
}

export function eventsPath(paths: HallPaths, runId: string): string {
  return path.join(paths.logsDir, `${runId}.events.jsonl`);
}

/** The hall's records of the git worktrees it made (docs/worktrees.md), which a starting hall reconciles. */
export function worktreeRecordsDir(paths: HallPaths): string {
  return path.join(paths.stateDir, 'worktrees');
}
