import { randomUUID } from 'node:crypto';

/**
 * A mission id that stays unique across hall restarts: time plus 48 random
 * bits (the last 12 hex digits of a v4 UUID, which Node draws from a cached
 * pool of randomness instead of a system call per id).
 */
export function newMissionId(nowMs: number = Date.now()): string {
  return `m${nowMs.toString(36)}-${randomUUID().slice(-12)}`;
}
