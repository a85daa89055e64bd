/**
 * The stores a hall keeps its durable state in, for tests that must hold on
 * each: files (the default) and PostgreSQL (a server from usePostgresServer,
 * a fresh database per hall, handed over as RAIDER_HALL_DATABASE_URL so any
 * config text and `spawnHallProcess` work unchanged).
 *
 *   describe.each(BACKENDS)('... on %s', (name) => {
 *     const backend = useHallBackend(name);   // PostgreSQL: one server for this block
 *     it('...', async () => { const env = await backend.env(); ... });
 *   });
 */
import { DATABASE_URL_ENV } from '../../src/adapters/storage/postgres/database-settings.js';
import { usePostgresServer } from './postgres-server.js';

export type BackendName = 'files' | 'postgres';
export const BACKENDS: readonly BackendName[] = ['files', 'postgres'];

export interface HallBackend {
  name: BackendName;
  /** The environment of a hall with a state of its own: nothing for files, a fresh database for PostgreSQL. */
  env(): Promise<Record<string, string>>;
}

/** Call it in a describe block (it registers that block's hooks). */
export function useHallBackend(name: BackendName): HallBackend {
  if (name === 'files') return { name, env: async () => ({}) };
  const server = usePostgresServer();
  return { name, env: async () => ({ [DATABASE_URL_ENV]: await server.freshDatabase() }) };
}
