/** What /proc says about a process, for tests that look at the hall's process tree. */
import fs from 'node:fs';

/** The fields of /proc/PID/stat after the command name, which may hold spaces and parentheses itself. */
function statFields(pid: number): string[] {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

export function parentOf(pid: number): number {
  return Number(statFields(pid)[1]);
}

export function processGroupOf(pid: number): number {
  return Number(statFields(pid)[2]);
}

export function sessionOf(pid: number): number {
  return Number(statFields(pid)[3]);
}

export function commandLine(pid: number): string {
  return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
}

/**
 * Whether any process of group `pgid` is alive (a zombie is not), from /proc:
 * tests poll this every few ms, and a `ps` each time would be a process start-up each.
 */
export function groupAlive(pgid: number): boolean {
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const [state, , group] = statFields(Number(name));
      if (Number(group) === pgid && state !== 'Z') return true;
    } catch {
      /* gone meanwhile */
    }
  }
  return false;
}
