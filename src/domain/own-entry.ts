/**
 * A record's own entry. Names and ids come from clients, and a raider named
 * `constructor` or an id `__proto__` must not find Object.prototype's.
 */
export function ownEntry<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
