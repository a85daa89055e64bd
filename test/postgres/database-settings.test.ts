// Which database a hall uses: `storage.postgres`, `cluster` and `hall_id` in
// .raider-hall.yml, RAIDER_HALL_DATABASE_URL, ${VAR} and PGPASSWORD.
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { parseHallConfig } from '../../src/adapters/config/hall-config-schema.js';
import type { HallConfig } from '../../src/ports/hall-config.js';
import { databaseSettings } from '../../src/adapters/storage/postgres/database-settings.js';

const FILE = '/x/.raider-hall.yml';

function config(text: string): HallConfig {
  const result = parseHallConfig(text, FILE);
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.config;
}

describe('storage keys in .raider-hall.yml', () => {
  it('default to the file store, cluster "default" and no hall id', () => {
    const c = config('');
    expect(c.storage).toEqual({ postgres: null });
    expect(c.cluster).toBe('default');
    expect(c.hall_id).toBeNull();
    expect(databaseSettings(c, '/r', {})).toEqual({ ok: true, settings: null });
  });

  it('take a postgres URL, a cluster name and a hall id', () => {
    const c = config('storage: { postgres: "postgres://hall@db:5432/raiders" }\ncluster: team-a\nhall_id: build-1\n');
    expect(c.storage.postgres).toBe('postgres://hall@db:5432/raiders');
    const result = databaseSettings(c, '/r', {});
    expect(result).toEqual({
      ok: true,
      settings: {
        url: 'postgres://hall@db:5432/raiders',
        where: 'postgres://hall@db:5432/raiders',
        cluster: 'team-a',
        hallId: 'build-1',
        shared: false,
        leaseMs: 15_000,
      },
    });
  });

  it('refuse what is not a postgres URL or a cluster name, naming the key', () => {
    const bad = parseHallConfig('storage: { postgres: "mysql://db/x" }\ncluster: "two words"\n', FILE);
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.errors).toEqual([
      expect.stringContaining(`${FILE}: storage.postgres: expected a PostgreSQL URL`),
      expect.stringContaining(`${FILE}: cluster: expected a cluster name`),
    ]);
  });

  it('take cluster_mode, lease_seconds and max_running, with defaults, and refuse what does not fit', () => {
    expect(config('')).toMatchObject({ cluster_mode: 'alone', lease_seconds: 15, max_running: null });
    expect(config('cluster_mode: shared\nlease_seconds: 2\nmax_running: 4\n')).toMatchObject({
      cluster_mode: 'shared',
      lease_seconds: 2,
      max_running: 4,
    });
    const bad = parseHallConfig('cluster_mode: many\nlease_seconds: 0.5\nmax_running: 0\n', FILE);
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.errors).toEqual([
      `${FILE}: cluster_mode: expected "alone" or "shared", got "many"`,
      `${FILE}: lease_seconds: expected a number of seconds >= 1, got 0.5`,
      `${FILE}: max_running: expected a whole number >= 1, got 0`,
    ]);
  });

  it('give the hall id as host name and root by default', () => {
    const result = databaseSettings(config('storage: { postgres: "postgres://db/x" }\n'), '/srv/project', {});
    expect(result.ok && result.settings?.hallId).toBe(`${os.hostname()}:/srv/project`);
  });
});

describe('the database URL from the environment', () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file uses ${VAR} literally; the hall expands it
  const fromFile = config('storage: { postgres: "postgres://hall:${DB_PASSWORD}@db/raiders" }\n');

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the test title names the config syntax
  it('expands ${VAR}, percent-encoded, and never shows the password in `where`', () => {
    const result = databaseSettings(fromFile, '/r', { DB_PASSWORD: 'p@ss:w/rd' });
    expect(result.ok && result.settings).toMatchObject({
      url: 'postgres://hall:p%40ss%3Aw%2Frd@db/raiders',
      where: 'postgres://hall@db/raiders',
    });
  });

  it('names a variable that is not set', () => {
    expect(databaseSettings(fromFile, '/r', {})).toEqual({
      ok: false,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the error message names the variable in the config syntax
      error: 'storage.postgres: ${DB_PASSWORD} not set in the environment',
    });
  });

  it('takes PGPASSWORD when the URL has no password, and not when it has one', () => {
    const bare = config('storage: { postgres: "postgres://hall@db/raiders" }\n');
    expect(databaseSettings(bare, '/r', { PGPASSWORD: 'secret' })).toMatchObject({ settings: { password: 'secret' } });
    const withPassword = databaseSettings(fromFile, '/r', { DB_PASSWORD: 'x', PGPASSWORD: 'secret' });
    expect(withPassword.ok && withPassword.settings?.password).toBeUndefined();
  });

  it('RAIDER_HALL_DATABASE_URL wins over the file, and alone selects PostgreSQL', () => {
    const env = { RAIDER_HALL_DATABASE_URL: 'postgres://other@elsewhere/db2', DB_PASSWORD: 'x' };
    expect(databaseSettings(fromFile, '/r', env)).toMatchObject({ settings: { url: 'postgres://other@elsewhere/db2' } });
    expect(databaseSettings(config(''), '/r', env)).toMatchObject({ settings: { where: 'postgres://other@elsewhere/db2' } });
    expect(databaseSettings(config(''), '/r', { RAIDER_HALL_DATABASE_URL: 'http://x/y' })).toEqual({
      ok: false,
      error: 'RAIDER_HALL_DATABASE_URL: expected a postgres:// URL, got http://',
    });
  });
});
