import { randomBytes } from 'node:crypto';

/** A mission id that stays unique across hall restarts: time plus 48 random bits. */
export function newMissionId(nowMs: number = Date.now()): string {
  return `m${nowMs.toString(36)}-${randomBytes(6).toString('hex')}`;
}
