/**
 * The durable state's store, as the config asks: files under
 * `.raider-hall/state` by default, PostgreSQL when `storage.postgres` (or
 * RAIDER_HALL_DATABASE_URL) names a database.
 */
import type { HallConfig } from '../ports/hall-config.js';
import { FileStateStore } from '../adapters/storage/file-state-store.js';
import type { HallPaths } from '../ports/hall-paths.js';
import { databaseSettings } from '../adapters/storage/postgres/database-settings.js';
import type { HallStateStore } from '../ports/state-store.js';
import { HallStartError } from '../ports/hall-start-error.js';

export async function openStateStore(
  config: HallConfig,
  paths: HallPaths,
  env: Readonly<Record<string, string | undefined>>,
  log: (line: string) => void,
): Promise<HallStateStore> {
  const database = databaseSettings(config, paths.root, env);
  if (!database.ok) throw new HallStartError(database.error, 3);
  if (database.settings === null) return FileStateStore.open(paths.stateDir, { warn: log });
  // Loaded only when used: a hall on files does not pay for the PostgreSQL driver at start.
  const [{ PostgresStateStore, databaseProblem }, { SchemaTooNewError }] = await Promise.all([
    import('../adapters/storage/postgres/postgres-state-store.js'),
    import('../adapters/storage/postgres/migrations.js'),
  ]);
  try {
    return await PostgresStateStore.open(database.settings, { root: paths.root, warn: log });
  } catch (err) {
    // A schema from a newer hall is fixed by upgrading, as a config error is by editing: exit 3.
    throw new HallStartError(databaseProblem(err), err instanceof SchemaTooNewError ? 3 : 1);
  }
}
