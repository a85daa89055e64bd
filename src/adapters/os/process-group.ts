/** Signals a process group (a raider, or a child the demo started, leads one); a group already gone is no error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * SIGKILL to a raider's process group, at the end of every run. The group is
 * usually empty by then (ESRCH): an error without a stack trace costs a
 * fraction of one with it.
 */
export function killGroup(pgid: number): void {
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // No process left in the group.
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}
