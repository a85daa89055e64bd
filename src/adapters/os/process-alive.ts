/** Whether a process lives: it exists and is not a zombie waiting to be reaped. */
import fs from 'node:fs';
import { errorCode } from '../../domain/error-message.js';

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if (errorCode(err) !== 'EPERM') return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name, which is in parentheses and may itself hold spaces.
    return stat.charAt(stat.lastIndexOf(')') + 2) !== 'Z';
  } catch {
    return true;
  }
}
