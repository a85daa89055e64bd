/**
 * Schema migrations: plain SQL files `NNN_name.sql` in `migrations/` (copied
 * next to the built code by `npm run build`), applied at start in one
 * transaction under an advisory lock, so halls starting together apply each
 * file once. `raider_hall_schema` records the versions applied.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { errorMessage } from '../../../domain/error-message.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
const MIGRATION_FILE = /^(\d{3})_[a-z0-9_]+\.sql$/;
/** Any constant: every hall of every cluster takes the same lock while it migrates. */
const MIGRATION_LOCK = 0x52_48_53_43; // "RHSC"

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** A database migrated by a newer hall than this one: it must not write there. */
export class SchemaTooNewError extends Error {}

/** The migrations in `dir`, in version order. */
export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir).sort();
  } catch (err) {
    throw new Error(`cannot read the schema migrations in ${dir} (${errorMessage(err)}): is the build complete? (npm run build)`);
  }
  const migrations: Migration[] = [];
  for (const name of names) {
    const match = MIGRATION_FILE.exec(name);
    if (!match?.[1]) continue;
    migrations.push({ version: Number(match[1]), name, sql: fs.readFileSync(path.join(dir, name), 'utf8') });
  }
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`${dir}: migration ${m.name} should be number ${i + 1}`);
  });
  if (migrations.length === 0) throw new Error(`no schema migrations in ${dir}: is the build complete? (npm run build)`);
  return migrations;
}

/** Applies the migrations the database lacks; returns its schema version. */
export async function migrate(client: pg.ClientBase, migrations: readonly Migration[], where: string): Promise<number> {
  const known = migrations.length;
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS raider_hall_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const result = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM raider_hall_schema');
    const current = result.rows[0]?.version ?? 0;
    if (current > known) {
      throw new SchemaTooNewError(
        `the database ${where} has schema version ${current}, newer than this hall knows (${known}): ` +
          'a newer Raider Hall migrated it; upgrade this one',
      );
    }
    for (const migration of migrations.slice(current)) {
      await client.query(migration.sql);
      await client.query('INSERT INTO raider_hall_schema (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
    }
    await client.query('COMMIT');
    return Math.max(current, known);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
