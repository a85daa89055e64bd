/**
 * Which database a hall uses, from its config and environment:
 * `RAIDER_HALL_DATABASE_URL` wins over `storage.postgres` (as the other
 * RAIDER_HALL_* variables win over the file), `${VAR}` in the URL is replaced
 * by the variable's value (percent-encoded, so a password may hold any
 * character), and a URL without a password takes PGPASSWORD.
 */
import os from 'node:os';
import type { HallConfig } from '../../../ports/hall-config.js';
import { expandVariables, missingVariablesText } from '../../../domain/env-variables.js';

export const DATABASE_URL_ENV = 'RAIDER_HALL_DATABASE_URL';

export interface DatabaseSettings {
  /** The URL with every `${VAR}` expanded (it may hold a password: never print it). */
  url: string;
  /** From PGPASSWORD when the URL has none. */
  password?: string;
  /** The database as a message names it: `postgres://USER@HOST:PORT/DB`, no password. */
  where: string;
  cluster: string;
  hallId: string;
  /** Several halls serve the cluster, claiming its missions (`cluster_mode: shared`). */
  shared: boolean;
  /** How long a hall counts as alive after renewing its lease. */
  leaseMs: number;
}

export type DatabaseSettingsResult = { ok: true; settings: DatabaseSettings | null } | { ok: false; error: string };

type Env = Readonly<Record<string, string | undefined>>;

/** The database settings, null for the file store, or an error a user can act on. */
export function databaseSettings(config: HallConfig, root: string, env: Env): DatabaseSettingsResult {
  const fromEnv = env[DATABASE_URL_ENV];
  const raw = fromEnv !== undefined && fromEnv !== '' ? fromEnv : config.storage.postgres;
  if (raw === null) return { ok: true, settings: null };
  const source = raw === fromEnv ? DATABASE_URL_ENV : 'storage.postgres';
  const expanded = expandVariables(raw, env, encodeURIComponent);
  if (!expanded.ok) return { ok: false, error: `${source}: ${missingVariablesText(expanded.missing)}` };
  let parsed: URL;
  try {
    parsed = new URL(expanded.text);
  } catch {
    return { ok: false, error: `${source}: not a valid URL (expected postgres://USER@HOST:PORT/DATABASE)` };
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    return { ok: false, error: `${source}: expected a postgres:// URL, got ${parsed.protocol}//` };
  }
  const settings: DatabaseSettings = {
    url: expanded.text,
    where: describe(parsed),
    cluster: config.cluster,
    hallId: config.hall_id ?? `${os.hostname()}:${root}`,
    shared: config.cluster_mode === 'shared',
    leaseMs: Math.round(config.lease_seconds * 1000),
  };
  const pgPassword = env.PGPASSWORD;
  if (parsed.password === '' && pgPassword !== undefined) settings.password = pgPassword;
  return { ok: true, settings };
}

function describe(url: URL): string {
  const user = url.username === '' ? '' : `${decodeURIComponent(url.username)}@`;
  return `postgres://${user}${url.host || 'localhost'}${url.pathname}`;
}
